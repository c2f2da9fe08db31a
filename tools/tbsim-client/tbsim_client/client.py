"""A plain client for the session API: standard library only."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional


class ApiError(Exception):
    """An error response: HTTP status, the error code and message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class Client:
    """Talks to `tbsim serve` at `base_url` (with `token` if it was started with one)."""

    def __init__(self, base_url: str = "http://127.0.0.1:8765", token: Optional[str] = None, timeout: float = 300.0):
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _request(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)["error"]
                raise ApiError(e.code, err["code"], err["message"]) from None
            except (ValueError, KeyError, TypeError):
                raise ApiError(e.code, "http_error", raw.decode(errors="replace")) from None

    def create(self, scenario: str, *, seed: Optional[int] = None, hints: Optional[int] = None,
               feedback: Optional[str] = None, max_steps: Optional[int] = None,
               agent: Optional[str] = None) -> Dict[str, Any]:
        """Opens a session: `{session, observation, info}`."""
        body: Dict[str, Any] = {"scenario": scenario}
        for k, v in (("seed", seed), ("hints", hints), ("feedback", feedback),
                     ("max_steps", max_steps), ("agent", agent)):
            if v is not None:
                body[k] = v
        return self._request("POST", "/v1/sessions", body)

    def step(self, session: str, tool_calls: List[Dict[str, Any]]) -> Dict[str, Any]:
        """Sends tool calls (`{name, arguments, id?}`): `{observation, reward, terminated, truncated, info}`."""
        return self._request("POST", f"/v1/sessions/{session}/step", {"tool_calls": list(tool_calls)})

    def state(self, session: str) -> Dict[str, Any]:
        return self._request("GET", f"/v1/sessions/{session}")

    def delete(self, session: str) -> Dict[str, Any]:
        """Ends the run (written to the server's run directory) and forgets the session."""
        return self._request("DELETE", f"/v1/sessions/{session}")

    def tools(self) -> List[Dict[str, Any]]:
        return self._request("GET", "/v1/tools")

    def openapi(self) -> Dict[str, Any]:
        return self._request("GET", "/openapi.json")

    def session(self, scenario: str, **kwargs: Any) -> "Session":
        """Opens a session as an object (usable as a context manager that deletes it)."""
        return Session(self, self.create(scenario, **kwargs))


class Session:
    """One open session."""

    def __init__(self, client: Client, created: Dict[str, Any]):
        self.client = client
        self.id: str = created["session"]
        self.observation: Dict[str, Any] = created["observation"]
        self.info: Dict[str, Any] = created["info"]
        self.closed = False

    def step(self, tool_calls: List[Dict[str, Any]]) -> Dict[str, Any]:
        out = self.client.step(self.id, tool_calls)
        self.observation, self.info = out["observation"], out["info"]
        return out

    def state(self) -> Dict[str, Any]:
        return self.client.state(self.id)

    def close(self) -> Optional[Dict[str, Any]]:
        if self.closed:
            return None
        self.closed = True
        return self.client.delete(self.id)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def render(observation: Dict[str, Any]) -> str:
    """The observation as text for a language model: time, briefing, each result and notification."""
    lines = [f"[step {observation.get('step')}] {observation.get('time')}"]
    b = observation.get("briefing")
    if b:
        lines.append(
            f"You are {b['you']} ({b['key']}) in {b['department']} at {b['company']}; "
            f"your manager is {b['manager']}. The day runs {b['day_starts']} to {b['day_ends']}."
        )
    for r in observation.get("results", []):
        body = r.get("result") if r.get("ok") else r.get("error")
        lines.append(f"{r['tool']} ({r['call_id']}) {'ok' if r.get('ok') else 'error'} at {r['time']}: "
                     + json.dumps(body, ensure_ascii=False))
        for n in r.get("notifications", []):
            lines.append("notification: " + json.dumps(n, ensure_ascii=False))
    for n in observation.get("notifications", []):
        lines.append("notification: " + json.dumps(n, ensure_ascii=False))
    if observation.get("over"):
        lines.append("The run is over.")
    return "\n".join(lines)
