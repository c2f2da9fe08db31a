"""A Gymnasium environment over the session API.

Ids (registered by `import tbsim`), one per bundled suite: `tbsim/TraineeBench-v0`,
`tbsim/TraineeBench-CL-v0`, `tbsim/TraineeBench-Plus-v0`, `tbsim/Examples-v0`.
`gymnasium.make(id, scenario="busy-day")` plays one scenario; without `scenario`
each `reset` draws one of the suite's scenarios from `np_random`.

- **Server**: `base_url` (and `token`) of a running `tbsim serve`, else one server
  per process is started from the installed binary (stopped at exit).
- **reset(seed=s)** plays the world with master seed `s`; `reset()` draws the seed
  from `np_random` (never the scenario's fixed one). `info["seed"]` is the seed used,
  `info["scenario"]` the scenario, `info["session"]` the session id (reset's
  info only; `env.unwrapped.session` always).
- **Observation**: a `Dict` of the engine's observation, parsed: `text` (rendered
  for a model), `step`, `clock` (simulated seconds), `time`, `over`, `briefing`
  (0 or 1 dict), `results` (one dict per tool call: `tool`, `call_id`, `ok`, `time`,
  `content` (the result or error as JSON text), `notifications`) and
  `notifications` (each as JSON text).
- **Action**: a tuple of tool calls, each a dict `{"name", "arguments"}` (see
  `ToolCalls`); `action_space.sample()` draws a schema-valid call of any tool.
- **Reward**: the change in the run's checkpoint score. The episode terminates when
  the run is over (finish, end of the last day) and truncates at `max_steps`.
- **After the end**: `step` raises `gymnasium.error.ResetNeeded` until `reset`
  (vector envs reset on their own). The session is closed (its run written) when
  the episode ends, on `reset` and on `close`.
"""

from __future__ import annotations

import atexit
import json
import string
import threading
from collections.abc import Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from ._binary import binary, scenarios
from .client import Client, render
from .server import Server

_MAX_TEXT = 1 << 24


class UnicodeText(spaces.Text):
    """Text of any Unicode characters (observations hold names, accents, emoji);
    `spaces.Text` would check each against a listed charset, and listing all of
    Unicode costs ~100 MB per process. Samples are drawn from printable ASCII.
    Vector envs need `shared_memory=False` (shared memory indexes a charset)."""

    def __init__(self, max_length: int = _MAX_TEXT) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=string.printable)

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, str)
            and len(x) <= self.max_length
            and not any(0xD800 <= ord(c) <= 0xDFFF for c in x)
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length

    def __hash__(self) -> int:
        return hash(("UnicodeText", self.max_length))

    def __repr__(self) -> str:
        return f"UnicodeText({self.max_length})"


SUITES = {
    "TraineeBench-v0": "traineebench",
    "TraineeBench-CL-v0": "traineebench-cl",
    "TraineeBench-Plus-v0": "traineebench-plus",
    "Examples-v0": "examples",
}


def _text() -> spaces.Text:
    return UnicodeText()


def _catalogue() -> list[dict[str, Any]]:
    import subprocess

    out = subprocess.run([binary(), "tools", "--json"], capture_output=True, text=True, check=True)
    tools: list[dict[str, Any]] = json.loads(out.stdout)
    return tools


_WORD = string.ascii_lowercase + string.digits


class ToolCalls(gymnasium.Space[tuple[dict[str, Any], ...]]):
    """Actions: a sequence of tool calls `{"name": str, "arguments": dict}` naming
    tools of the catalogue. `sample()` draws one call of a uniformly drawn tool with
    arguments that satisfy its schema (the world may still refuse them)."""

    def __init__(self, tools: Sequence[Mapping[str, Any]], seed: int | None = None) -> None:
        self.tools = tuple(
            (str(t["name"]), json.dumps(t["parameters"], sort_keys=True)) for t in tools
        )
        self._schemas = {n: json.loads(s) for n, s in self.tools}
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        if not isinstance(x, (list, tuple)):
            return False
        return all(
            isinstance(c, Mapping)
            and c.get("name") in self._schemas
            and isinstance(c.get("arguments", {}), (Mapping, str))
            for c in x
        )

    def _value(self, schema: Mapping[str, Any]) -> Any:
        kind = schema.get("type")
        rng = self.np_random
        if "enum" in schema:
            return schema["enum"][int(rng.integers(len(schema["enum"])))]
        if kind == "integer":
            lo = int(schema.get("minimum", 0))
            return int(rng.integers(lo, max(lo, int(schema.get("maximum", lo + 60))) + 1))
        if kind == "number":
            return float(rng.uniform(0, 100))
        if kind == "boolean":
            return bool(rng.integers(2))
        if kind == "array":
            item = schema.get("items", {"type": "string"})
            return [self._value(item) for _ in range(int(rng.integers(1, 3)))]
        if kind == "object":
            return self._object(schema)
        n = int(rng.integers(1, 12))
        return "".join(_WORD[int(i)] for i in rng.integers(len(_WORD), size=n))

    def _object(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        props: Mapping[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out = {}
        for k in sorted(props):
            if k in required or bool(self.np_random.integers(2)):
                out[k] = self._value(props[k])
        return out

    def sample(self, mask: Any = None, probability: Any = None) -> tuple[dict[str, Any], ...]:
        if mask is not None or probability is not None:
            raise NotImplementedError("ToolCalls.sample takes no mask or probability")
        name, _ = self.tools[int(self.np_random.integers(len(self.tools)))]
        return ({"name": name, "arguments": self._object(self._schemas[name])},)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolCalls) and self.tools == other.tools

    def __hash__(self) -> int:
        return hash(self.tools)

    def __repr__(self) -> str:
        return f"ToolCalls({len(self.tools)} tools)"


_shared: Server | None = None
_shared_lock = threading.Lock()


def _shared_server() -> Server:
    """One server per process for envs given no `base_url`."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running:
            _shared = Server()
            atexit.register(_shared.close)
        return _shared


def _observation_space() -> spaces.Dict:
    result = spaces.Dict(
        {
            "tool": _text(),
            "call_id": _text(),
            "ok": spaces.Discrete(2),
            "time": _text(),
            "content": _text(),
            "notifications": spaces.Sequence(_text()),
        }
    )
    briefing = spaces.Dict(
        {
            k: _text()
            for k in ("company", "department", "you", "key", "manager", "day_starts", "day_ends")
        }
    )
    big = np.iinfo(np.int64).max
    return spaces.Dict(
        {
            "text": _text(),
            "step": spaces.Box(0, big, shape=(), dtype=np.int64),
            "clock": spaces.Box(0, big, shape=(), dtype=np.int64),
            "time": _text(),
            "over": spaces.Discrete(2),
            "briefing": spaces.Sequence(briefing),
            "results": spaces.Sequence(result),
            "notifications": spaces.Sequence(_text()),
        }
    )


def _as_text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)


def parse_observation(o: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's observation as the env's `Dict` observation."""
    b = o.get("briefing")
    return {
        "text": render(o),
        "step": np.asarray(o.get("step", 0), dtype=np.int64),
        "clock": np.asarray(o.get("t", 0), dtype=np.int64),
        "time": str(o.get("time", "")),
        "over": int(bool(o.get("over"))),
        "briefing": tuple([{k: str(b.get(k, "")) for k in _BRIEFING}] if b else []),
        "results": tuple(
            {
                "tool": str(r.get("tool", "")),
                "call_id": str(r.get("call_id", "")),
                "ok": int(bool(r.get("ok"))),
                "time": str(r.get("time", "")),
                "content": _as_text(r.get("result") if r.get("ok") else r.get("error")),
                "notifications": tuple(_as_text(n) for n in r.get("notifications", [])),
            }
            for r in o.get("results", [])
        ),
        "notifications": tuple(_as_text(n) for n in o.get("notifications", [])),
    }


_BRIEFING = ("company", "department", "you", "key", "manager", "day_starts", "day_ends")


class TbsimEnv(gymnasium.Env[dict[str, Any], tuple[dict[str, Any], ...]]):
    """One tbsim session per episode (see the module docs)."""

    # render_fps: a nominal rate (text frames); Gymnasium warns when none is declared.
    metadata = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        scenario: str | None = None,
        suite: str | None = None,
        base_url: str | None = None,
        token: str | None = None,
        agent: str = "gym",
        hints: int | None = None,
        feedback: str | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if scenario is None and suite is None:
            raise ValueError("give scenario= (a name) or suite=")
        self.render_mode = render_mode
        self._server = None if base_url is not None else _shared_server()
        url = base_url if base_url is not None else self._server.url  # type: ignore[union-attr]
        self._client = Client(url, token)
        self._pool = [scenario] if scenario is not None else [s.name for s in scenarios(suite)]
        self._opts = {"agent": agent, "hints": hints, "feedback": feedback, "max_steps": max_steps}
        self.session: str | None = None
        self._over = True
        self._last: Mapping[str, Any] | None = None
        self.observation_space = _observation_space()
        self.action_space = ToolCalls(self._client.tools())

    def _end_session(self) -> None:
        if self.session is not None:
            sid, self.session = self.session, None
            try:
                self._client.delete(sid)
            except Exception:  # the server went away or expired it
                pass

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        self._end_session()
        opts = dict(options or {})
        scenario = opts.pop("scenario", None)
        if scenario is None:
            scenario = self._pool[int(self.np_random.integers(len(self._pool)))]
        world_seed = seed if seed is not None else int(self.np_random.integers(0, 2**62))
        merged = {**self._opts, **opts}
        created = self._client.create(scenario, seed=world_seed, **merged)
        self.session = created.session
        self._over = False
        self._last = created.observation
        info = dict(created.info, session=created.session, seed=world_seed, scenario=scenario)
        return parse_observation(created.observation), info

    def step(
        self, action: Sequence[Mapping[str, Any]]
    ) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        if self.session is None or self._over:
            raise ResetNeeded("the episode is over (or never started): call reset()")
        sid = self.session
        out = self._client.step(sid, list(action))
        self._last = out.observation
        if out.terminated or out.truncated:
            self._over = True
            self._end_session()
        # No session id in step info: the same seed and actions give the same info
        # (check_env compares them); `env.unwrapped.session` names the session.
        info = dict(out.info)
        return parse_observation(out.observation), out.reward, out.terminated, out.truncated, info

    def render(self) -> str | None:
        return render(self._last) if self._last is not None else None

    def close(self) -> None:
        self._end_session()
        self._client.close()
        super().close()


def register() -> None:
    """Registers the ids (idempotent; `import tbsim` does it)."""
    for name, suite in SUITES.items():
        env_id = f"tbsim/{name}"
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="tbsim.gym:TbsimEnv", kwargs={"suite": suite})
