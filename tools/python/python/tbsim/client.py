"""Clients of the session API (`tbsim serve`): `Client` (a lean keep-alive
connection) and `AsyncClient` (httpx)."""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from ._http import Connection

JSON = Any
ToolCall = Mapping[str, Any]


class ApiError(Exception):
    """An error answer: HTTP status, the stable error code and the message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Created:
    """A new session: its id, first observation and info."""

    session: str
    observation: dict[str, JSON]
    info: dict[str, JSON]


@dataclass(frozen=True)
class Step:
    """What a step returns."""

    observation: dict[str, JSON]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, JSON]


def _raise_for(resp: httpx.Response) -> JSON:
    if resp.status_code >= 400:
        try:
            err = resp.json()["error"]
            raise ApiError(resp.status_code, str(err["code"]), str(err["message"]))
        except (ValueError, KeyError, TypeError):
            raise ApiError(resp.status_code, "http_error", resp.text) from None
    return resp.json() if resp.content else None


_U64 = 1 << 64


def _check_int(name: str, v: Any, lo: int, hi: int) -> None:
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{name} must be an integer, not {type(v).__name__} {v!r}")
    if not lo <= v < hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}), not {v}")


def _create_body(scenario: str, opts: Mapping[str, Any]) -> dict[str, JSON]:
    if not isinstance(scenario, str):
        raise TypeError(f"scenario must be a name (str), not {type(scenario).__name__}")
    if opts.get("seed") is not None:
        _check_int("seed", opts["seed"], 0, _U64)
    if opts.get("hints") is not None:
        _check_int("hints", opts["hints"], 0, 4)
    if opts.get("max_steps") is not None:
        _check_int("max_steps", opts["max_steps"], 1, _U64)
    if opts.get("compress") is not None and not isinstance(opts["compress"], bool):
        raise TypeError(f"compress must be a bool, not {type(opts['compress']).__name__}")
    body: dict[str, JSON] = {"scenario": scenario}
    keys = ("seed", "hints", "feedback", "max_steps", "agent", "tag", "compress")
    for k in keys:
        if opts.get(k) is not None:
            body[k] = opts[k]
    unknown = set(opts) - set(keys)
    if unknown:
        raise TypeError(f"unknown session options: {', '.join(sorted(unknown))}")
    return body


def _calls(tool_calls: Sequence[ToolCall]) -> dict[str, JSON]:
    if isinstance(tool_calls, Mapping):
        raise TypeError(
            "tool_calls is one call (a dict): give a sequence of calls, "
            f"e.g. ({{'name': {tool_calls.get('name')!r}, 'arguments': {{...}}}},)"
        )
    if isinstance(tool_calls, (str, bytes)):
        raise TypeError("tool_calls must be a sequence of {name, arguments} dicts, not a string")
    calls = []
    for i, c in enumerate(tool_calls):
        if not isinstance(c, Mapping):
            raise TypeError(
                f"tool call {i} must be a dict {{name, arguments}}, not {type(c).__name__}"
            )
        calls.append(dict(c))
    return {"tool_calls": calls}


def _step(d: Mapping[str, JSON]) -> Step:
    return Step(
        observation=d["observation"],
        reward=float(d["reward"]),
        terminated=bool(d["terminated"]),
        truncated=bool(d["truncated"]),
        info=d["info"],
    )


# Built once: `json.dumps(..., separators=...)` builds an encoder per call, a few µs
# of every step. Same output.
_compact = json.JSONEncoder(separators=(",", ":")).encode


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


class Client:
    """The session API at `base_url` (with `token` if the server wants one), over
    one keep-alive connection (`http://` only; threads share it in turn). A server
    that stopped answering raises `ServerGone`."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._conn = Connection(self.base_url, _headers(token), timeout)
        self._lock = threading.Lock()

    def _call(self, method: str, path: str, body: JSON = None) -> JSON:
        data = None if body is None else _compact(body).encode()
        with self._lock:
            status, raw = self._conn.request(method, path, data)
        if status >= 400:
            try:
                err = json.loads(raw)["error"]
                raise ApiError(status, str(err["code"]), str(err["message"]))
            except (ValueError, KeyError, TypeError):
                raise ApiError(status, "http_error", raw.decode(errors="replace")) from None
        return json.loads(raw) if raw else None

    def create(self, scenario: str, **opts: Any) -> Created:
        """Opens a session (`seed`, `hints`, `feedback`, `max_steps`, `agent`, `tag`)."""
        d = self._call("POST", "/v1/sessions", _create_body(scenario, opts))
        return Created(d["session"], d["observation"], d["info"])

    def step(self, session: str, tool_calls: Sequence[ToolCall]) -> Step:
        """Sends tool calls (`{name, arguments, id?}`)."""
        return _step(self._call("POST", f"/v1/sessions/{session}/step", _calls(tool_calls)))

    def state(self, session: str) -> dict[str, JSON]:
        """The session's state (with its result once finished)."""
        d: dict[str, JSON] = self._call("GET", f"/v1/sessions/{session}")
        return d

    def delete(self, session: str) -> dict[str, JSON]:
        """Ends the run (as abandoned if it was going), writes it, forgets the session."""
        d: dict[str, JSON] = self._call("DELETE", f"/v1/sessions/{session}")
        return d

    def tools(self) -> list[dict[str, JSON]]:
        """The tool catalogue: name, description, JSON schema, cost in minutes."""
        d: list[dict[str, JSON]] = self._call("GET", "/v1/tools")
        return d

    def scenarios(self, suite: str | None = None) -> list[dict[str, JSON]]:
        """The scenarios the server accepts by name."""
        query = "" if suite is None else "?" + urlencode({"suite": suite})
        d = self._call("GET", f"/v1/scenarios{query}")
        return list(d["scenarios"])

    def openapi(self) -> dict[str, JSON]:
        d: dict[str, JSON] = self._call("GET", "/openapi.json")
        return d

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient:
    """`Client`'s asynchronous twin."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 300.0) -> None:
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), headers=_headers(token), timeout=timeout
        )

    async def create(self, scenario: str, **opts: Any) -> Created:
        d = _raise_for(await self._http.post("/v1/sessions", json=_create_body(scenario, opts)))
        return Created(d["session"], d["observation"], d["info"])

    async def step(self, session: str, tool_calls: Sequence[ToolCall]) -> Step:
        resp = await self._http.post(f"/v1/sessions/{session}/step", json=_calls(tool_calls))
        return _step(_raise_for(resp))

    async def state(self, session: str) -> dict[str, JSON]:
        d: dict[str, JSON] = _raise_for(await self._http.get(f"/v1/sessions/{session}"))
        return d

    async def delete(self, session: str) -> dict[str, JSON]:
        d: dict[str, JSON] = _raise_for(await self._http.delete(f"/v1/sessions/{session}"))
        return d

    async def tools(self) -> list[dict[str, JSON]]:
        d: list[dict[str, JSON]] = _raise_for(await self._http.get("/v1/tools"))
        return d

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def render(observation: Mapping[str, JSON]) -> str:
    """The observation as text for a language model: time, briefing, each result and
    notification."""
    lines = [f"[step {observation.get('step')}] {observation.get('time')}"]
    b = observation.get("briefing")
    if b:
        lines.append(
            f"You are {b['you']} ({b['key']}) in {b['department']} at {b['company']}; "
            f"your manager is {b['manager']}. The day runs {b['day_starts']} to {b['day_ends']}."
        )
    for r in observation.get("results", []):
        body = r.get("result") if r.get("ok") else r.get("error")
        status = "ok" if r.get("ok") else "error"
        lines.append(
            f"{r['tool']} ({r['call_id']}) {status} at {r['time']}: "
            + json.dumps(body, ensure_ascii=False)
        )
        for n in r.get("notifications", []):
            lines.append("notification: " + json.dumps(n, ensure_ascii=False))
    for n in observation.get("notifications", []):
        lines.append("notification: " + json.dumps(n, ensure_ascii=False))
    if observation.get("over"):
        lines.append("The run is over.")
    return "\n".join(lines)
