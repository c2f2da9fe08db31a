"""A Gymnasium environment over the session API.

Ids, one per bundled suite: `tbsim/TraineeBench-v0`, `tbsim/TraineeBench-CL-v0`,
`tbsim/TraineeBench-Plus-v0`, `tbsim/Examples-v0`, registered by `import tbsim`, or
named with their module, `gymnasium.make("tbsim:tbsim/TraineeBench-v0")`, which
imports it (Gymnasium 1.x has no plugin entry points). `gymnasium.make(id,
scenario="busy-day")` plays one scenario (an unknown name is refused at once);
without `scenario` each `reset` draws one of the suite's scenarios from `np_random`.

- **Server**: `base_url` (and `token`) of a running `tbsim serve`, else one server
  per process (and `out`) is started from the installed binary: its runs go to
  `out=DIR` (kept) or a temporary folder, its messages to a log file
  (`info["log"]`); it stops when the process ends, however it ends. If it dies,
  the step raises `tbsim.ServerGone` and the next `reset` starts a new one.
- **Vector envs**: sync ones as they come; async ones with
  `vector_kwargs={"shared_memory": False}` (observations are text of any length).
- **reset(seed=s)** plays the world with master seed `s`; `reset()` draws the seed
  from `np_random` (never the scenario's fixed one). `info["seed"]` is the seed used,
  `info["scenario"]` the scenario, `info["session"]` the session id and, with a
  server the env started, `info["run_dir"]` the run's folder (reset's info only;
  `env.unwrapped.session` and `env.unwrapped.run_dir` always).
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
import difflib
import json
import os
import string
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector.utils import create_shared_memory

from ._binary import binary, scenarios
from ._http import ServerGone
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


class Items(spaces.Sequence):
    """`spaces.Sequence` whose shared-memory error says how to vectorise tbsim."""


@create_shared_memory.register(Items)
def _no_shared_memory(space: Items, n: int = 1, ctx: Any = None) -> Any:
    raise TypeError(
        "tbsim observations are text of any length (results, notifications), which "
        "shared memory cannot hold: make async vector envs with "
        "vector_kwargs={'shared_memory': False}, e.g. gymnasium.make_vec("
        "'tbsim/TraineeBench-v0', 8, vectorization_mode='async', "
        "vector_kwargs={'shared_memory': False}) (the default sync mode needs nothing)"
    )


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


_shared: dict[str | None, Server] = {}
_shared_lock = threading.Lock()


def _close_shared() -> None:
    with _shared_lock:
        for server in _shared.values():
            server.close()
        _shared.clear()


atexit.register(_close_shared)


def _shared_server(out: str | None) -> Server:
    """One server per process and `out` for envs given no `base_url` (a new one
    when the last has stopped; a forked worker starts its own)."""
    with _shared_lock:
        server = _shared.get(out)
        if server is None or not server.running:
            server = Server(out=out)
            _shared[out] = server
        return server


def _observation_space() -> spaces.Dict:
    result = spaces.Dict(
        {
            "tool": _text(),
            "call_id": _text(),
            "ok": spaces.Discrete(2),
            "time": _text(),
            "content": _text(),
            "notifications": Items(_text()),
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
            "briefing": Items(briefing),
            "results": Items(result),
            "notifications": Items(_text()),
        }
    )


# One encoder for every step: `json.dumps` with any non-default option builds a new
# `JSONEncoder` per call, a few µs each, several times a step. Same output.
_dumps = json.JSONEncoder(ensure_ascii=False).encode


def parse_observation(o: Mapping[str, Any]) -> dict[str, Any]:
    """The engine's observation as the env's `Dict` observation. Each result and
    notification is serialised once, for its own field and for `text` (what
    `tbsim.render` gives)."""
    step = o.get("step", 0)
    lines = [f"[step {o.get('step')}] {o.get('time')}"]
    b = o.get("briefing")
    if b:
        lines.append(
            f"You are {b['you']} ({b['key']}) in {b['department']} at {b['company']}; "
            f"your manager is {b['manager']}. The day runs {b['day_starts']} to {b['day_ends']}."
        )
    results = []
    for r in o.get("results", []):
        ok = bool(r.get("ok"))
        body = r.get("result") if ok else r.get("error")
        dumped = _dumps(body)
        notes = [_dumps(n) for n in r.get("notifications", [])]
        lines.append(
            f"{r['tool']} ({r['call_id']}) {'ok' if ok else 'error'} at {r['time']}: {dumped}"
        )
        lines += ["notification: " + n for n in notes]
        results.append(
            {
                "tool": str(r.get("tool", "")),
                "call_id": str(r.get("call_id", "")),
                "ok": int(ok),
                "time": str(r.get("time", "")),
                "content": body if isinstance(body, str) else dumped,
                "notifications": tuple(
                    raw if isinstance(raw, str) else d
                    for raw, d in zip(r.get("notifications", []), notes, strict=True)
                ),
            }
        )
    top = o.get("notifications", [])
    top_dumped = [_dumps(n) for n in top]
    lines += ["notification: " + n for n in top_dumped]
    if o.get("over"):
        lines.append("The run is over.")
    return {
        "text": "\n".join(lines),
        "step": np.asarray(step, dtype=np.int64),
        "clock": np.asarray(o.get("t", 0), dtype=np.int64),
        "time": str(o.get("time", "")),
        "over": int(bool(o.get("over"))),
        "briefing": tuple([{k: str(b.get(k, "")) for k in _BRIEFING}] if b else []),
        "results": tuple(results),
        "notifications": tuple(
            raw if isinstance(raw, str) else d for raw, d in zip(top, top_dumped, strict=True)
        ),
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
        out: str | os.PathLike[str] | None = None,
        compress: bool = False,
    ) -> None:
        if scenario is None and suite is None:
            raise ValueError("give scenario= (a name) or suite=")
        if out is not None and base_url is not None:
            raise ValueError("out= is for the server the env starts; a running server has its own")
        self.render_mode = render_mode
        self._base_url = base_url
        self._token = token
        self._out = None if out is None else str(Path(out).resolve())
        self._server: Server | None = None
        self._client = self._connect()
        if scenario is not None:
            known = {str(s["name"]) for s in self._client.scenarios()}
            if scenario not in known:
                self._client.close()
                near = difflib.get_close_matches(scenario, sorted(known), n=3)
                hint = f"; did you mean {', '.join(near)}?" if near else ""
                raise ValueError(
                    f"unknown scenario {scenario!r}{hint} (`tbsim scenarios` lists them)"
                )
        self._pool = [scenario] if scenario is not None else [s.name for s in scenarios(suite)]
        self._opts = {"agent": agent, "hints": hints, "feedback": feedback, "max_steps": max_steps}
        if compress:
            # Each run's trajectory as zstd frames (`trajectory.jsonl.zst`), for long
            # RL jobs: `tbsim replay` reads it unchanged.
            self._opts["compress"] = True
        self.session: str | None = None
        self.run_dir: Path | None = None
        self._over = True
        self._last: Mapping[str, Any] | None = None
        self.observation_space = _observation_space()
        self.action_space = ToolCalls(self._client.tools())

    def _connect(self) -> Client:
        if self._base_url is not None:
            return Client(self._base_url, self._token)
        self._server = _shared_server(self._out)
        return Client(self._server.url, self._server.token)

    def _gone(self, e: ServerGone) -> ServerGone:
        if self._server is not None:
            return ServerGone(
                f"{self._server.why_stopped()}: the episode is lost; reset() starts a new server"
            )
        return ServerGone(f"{e}: the episode is lost (is tbsim serve at {self._base_url} up?)")

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
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, int):
                raise TypeError(f"seed must be an integer, not {type(seed).__name__} {seed!r}")
            if not 0 <= seed < 1 << 64:
                raise ValueError(f"seed must be in [0, 2**64), not {seed}")
        super().reset(seed=seed)
        self._end_session()
        if self._server is not None and not self._server.running:
            # The server died (or this is a forked worker): start afresh.
            self._client.close()
            self._client = self._connect()
        opts = dict(options or {})
        scenario = opts.pop("scenario", None)
        if scenario is None:
            scenario = self._pool[int(self.np_random.integers(len(self._pool)))]
        world_seed = seed if seed is not None else int(self.np_random.integers(0, 2**62))
        merged = {**self._opts, **opts}
        try:
            created = self._client.create(scenario, seed=world_seed, **merged)
        except ServerGone as e:
            raise self._gone(e) from None
        self.session = created.session
        self._over = False
        self._last = created.observation
        info = dict(created.info, session=created.session, seed=world_seed, scenario=scenario)
        if self._server is not None:
            self.run_dir = self._server.out / created.session
            info["run_dir"] = str(self.run_dir)
            info["log"] = str(self._server.log)
        return parse_observation(created.observation), info

    def step(
        self, action: Sequence[Mapping[str, Any]]
    ) -> tuple[dict[str, Any], SupportsFloat, bool, bool, dict[str, Any]]:
        if self.session is None or self._over:
            raise ResetNeeded("the episode is over (or never started): call reset()")
        if isinstance(action, Mapping):
            raise TypeError(
                "an action is a tuple of tool calls, and this is one call: "
                f"step(({{'name': {action.get('name')!r}, 'arguments': ...}},))"
            )
        sid = self.session
        try:
            out = self._client.step(sid, action)
        except ServerGone as e:
            self.session, self._over = None, True
            raise self._gone(e) from None
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
