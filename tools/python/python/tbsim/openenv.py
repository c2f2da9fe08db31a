"""TraineeBench as an OpenEnv environment (`pip install "tbsim[openenv]"`).

    python -m tbsim.openenv --port 8000                 # the examples' busy-day
    python -m tbsim.openenv --port 8000 --scenario kb-fix-medium --seed 7 --out runs/openenv

It is served by openenv-core's own `create_app` (HTTP, and the WebSocket `/ws` its
clients hold an episode on). An episode is one tbsim run:

- **reset** opens a world: `scenario`, `seed`, `hints`, `feedback` and `max_steps` may
  be given as reset keyword arguments (`env.reset(scenario="kb-fix-medium", seed=3)`) and
  default to the server's options. The observation is tbsim's first one: the
  briefing, the time, the morning's notifications and `text`, all of it rendered
  for a language model.
- **step** takes OpenEnv's MCP actions. `list_tools` answers tbsim's catalogue
  (each description states the call's time cost) and lets no time pass;
  `call_tool` (`tool_name`, `arguments`) is one decision with one call, answered by
  a `CallToolObservation` whose `result` holds the call's result with the time and
  what arrived meanwhile. tbsim's refusal of a call (an unknown tool, bad
  arguments, …) comes back as the observation's `error` (a `ToolError`, tbsim's
  message) and the episode goes on. A plain action (`{}`, or
  `{"metadata": {"text": …}}`) is a turn without a tool call, as a model answering
  in text: the clock still runs.
- **reward** per step is the change in tbsim's score that step (the session API's
  own); over an episode they sum to the run's checkpoint score. **done** is set
  when the run ends (`finish`, the end of the last day or `max_steps`); stepping
  after that is an error until the next reset.
- **state** has the tbsim session, scenario, step, score, end reason, run directory
  and, once over, tbsim's result.

Episodes are played over the WebSocket (`/ws`, as openenv-core's clients do): its
HTTP `/reset` and `/step` are stateless (a fresh environment per request), so an
HTTP `/step` has no episode to act in.

Every episode is a tbsim session of one `tbsim serve` this process starts on
loopback (with a random token, given through its environment); each run's
directory is `<out>/<session>/` and passes `tbsim replay`. Closing an episode (the
client disconnecting) ends a run still going, as abandoned, and writes it.

The server holds the line `tbsim serve` holds, on its HTTP routes and its
WebSocket alike: a `Host` other than localhost, a loopback address, the address it
was reached at or an `--allow-host` name is refused (DNS rebinding), and so is a
request from another origin's page (`Origin`, `Sec-Fetch-Site`). Listening on a
non-loopback address needs a token of its own (`--token-file PATH` or
`$TBSIM_OPENENV_TOKEN`; every request then carries `Authorization: Bearer
<token>`).
"""

from __future__ import annotations

import argparse
import atexit
import ipaddress
import os
import secrets
import signal
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from openenv.core.env_server.http_server import create_app as _create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from . import _loop
from ._guard import Guard, host_name
from .client import ApiError, Client, Step, render
from .server import Server

__all__ = [
    "Backend",
    "TraineeBenchEnvironment",
    "TraineeBenchObservation",
    "TraineeBenchState",
    "create_app",
    "main",
]

JSON = Any
_OPTIONS = ("seed", "hints", "feedback", "max_steps")


class TraineeBenchObservation(Observation):
    """tbsim's observation after a reset or a turn without a tool call."""

    scenario: str = Field(default="", description="The scenario being played")
    session: str = Field(default="", description="The tbsim session (and run directory name)")
    time: str | None = Field(default=None, description="The workplace time")
    step: int = Field(default=0, description="Decisions made so far")
    briefing: dict[str, JSON] | None = Field(default=None, description="Who the agent is")
    notifications: list[JSON] = Field(default_factory=list, description="What arrived")
    text: str = Field(default="", description="The observation rendered for a language model")


class TraineeBenchState(State):
    """The episode as tbsim sees it (the score is the sum of the rewards so far)."""

    scenario: str | None = None
    seed: int | None = None
    session: str | None = None
    score: float = 0.0
    over: bool = False
    end_reason: str | None = None
    run_dir: str | None = None
    result: dict[str, JSON] | None = None


def _error_type(kind: str) -> ToolErrorType:
    if kind == "unknown_tool":
        return ToolErrorType.TOOL_NOT_FOUND
    if kind in ("malformed_json", "schema"):
        return ToolErrorType.INVALID_ARGS
    return ToolErrorType.EXECUTION_ERROR


class Backend:
    """What the episodes of one process share: one `tbsim serve` (started on first
    use, stopped at exit), its catalogue and the server's default options."""

    def __init__(
        self,
        *,
        scenario: str = "busy-day",
        seed: int | None = None,
        hints: int = 0,
        feedback: str | None = None,
        max_steps: int | None = None,
        out: str | Path = "runs/openenv",
        max_sessions: int = 16,
    ) -> None:
        self.defaults: dict[str, JSON] = {
            "scenario": scenario,
            "seed": seed,
            "hints": hints,
            "feedback": feedback,
            "max_steps": max_steps,
        }
        self.out = Path(out).resolve()
        self.max_sessions = max_sessions
        self._server: Server | None = None
        self._tools: list[Tool] | None = None
        self._lock = threading.Lock()

    def server(self) -> Server:
        with self._lock:
            if self._server is None or not self._server.running:
                self.out.mkdir(parents=True, exist_ok=True)
                # A few slots beyond the episodes: OpenEnv's stateless HTTP /reset
                # opens (and at once closes) a world of its own.
                self._server = Server(
                    out=self.out,
                    token=secrets.token_urlsafe(24),
                    max_sessions=self.max_sessions + 4,
                )
                atexit.register(self._server.close)
            return self._server

    def client(self) -> Client:
        s = self.server()
        return Client(s.url, token=s.token)

    def tools(self) -> list[Tool]:
        if self._tools is None:
            with self.client() as c:
                catalogue = c.tools()
            self._tools = [
                Tool(
                    name=str(t["name"]),
                    description=_loop.tool_description(t),
                    input_schema=_loop.tool_parameters(t),
                )
                for t in catalogue
            ]
        return list(self._tools)

    def close(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.close()
                self._server = None


class TraineeBenchEnvironment(Environment):  # type: ignore[type-arg]
    """One episode at a time; many of them per server (one tbsim session each)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, backend: Backend) -> None:
        # Cheap on purpose: openenv-core builds an instance for every stateless
        # HTTP request and schema probe; the world opens at reset.
        super().__init__()
        self._backend = backend
        self._client: Client | None = None
        self._state = TraineeBenchState()

    # -- the OpenEnv interface ------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        **kwargs: Any,
    ) -> TraineeBenchObservation:
        unknown = sorted(set(kwargs) - {"scenario", "hints", "feedback", "max_steps"})
        if unknown:
            raise ValueError(
                f"unknown reset options: {', '.join(unknown)} "
                "(tbsim takes scenario, seed, hints, feedback, max_steps)"
            )
        self._end()
        opts = {**self._backend.defaults, **{k: v for k, v in kwargs.items() if v is not None}}
        if seed is not None:
            opts["seed"] = seed
        scenario = str(opts.pop("scenario"))
        client = self._backend.client()
        try:
            created = client.create(
                scenario,
                agent="openenv",
                **{k: opts[k] for k in _OPTIONS if opts.get(k) is not None},
            )
        except ApiError as e:
            client.close()
            raise ValueError(f"tbsim refused the episode: {e.message}") from e
        self._client = client
        obs = created.observation
        self._state = TraineeBenchState(
            episode_id=episode_id or created.session,
            step_count=0,
            scenario=scenario,
            # The master seed in use (the scenario's own unless one was given).
            seed=client.state(created.session).get("seed"),
            session=created.session,
            score=float(created.info.get("score", 0.0)),
            over=bool(obs.get("over")),
            run_dir=str(self._backend.out / created.session),
        )
        return self._observation(obs, reward=None)

    def step(
        self,
        action: Action,
        timeout_s: float | None = None,
        **kwargs: Any,
    ) -> Observation:
        if isinstance(action, ListToolsAction):
            # The catalogue is the same for every world; no time passes.
            return ListToolsObservation(
                tools=self._backend.tools(), done=self._state.over, reward=0.0
            )
        if isinstance(action, CallToolAction):
            call_id = f"call_{self._state.step_count + 1}"
            step, obs = self._play(
                [{"id": call_id, "name": action.tool_name, "arguments": action.arguments}]
            )
            return self._tool_observation(action.tool_name, call_id, step, obs)
        # Any other action is a turn without a call (a model answering in text).
        step, obs = self._play([])
        return self._observation(obs, reward=step.reward)

    @property
    def state(self) -> TraineeBenchState:
        return self._state

    def close(self) -> None:
        self._end()

    # -- tbsim ----------------------------------------------------------------

    def _play(self, calls: Sequence[Mapping[str, JSON]]) -> tuple[Step, dict[str, JSON]]:
        if self._client is None or self._state.session is None:
            raise RuntimeError("no episode: call reset first")
        if self._state.over:
            raise RuntimeError("the run is over: call reset to play again")
        try:
            step = self._client.step(self._state.session, calls)
        except ApiError as e:
            raise RuntimeError(f"tbsim: {e.message}") from e
        s = self._state
        s.step_count += 1
        s.score = float(step.info.get("score", s.score + step.reward))
        s.over = step.terminated or step.truncated or bool(step.observation.get("over"))
        s.end_reason = step.info.get("end_reason")
        if s.over:
            s.result = self._client.state(self._state.session).get("result")
        return step, step.observation

    def _observation(
        self, obs: Mapping[str, JSON], reward: float | None
    ) -> TraineeBenchObservation:
        s = self._state
        return TraineeBenchObservation(
            done=s.over,
            reward=reward,
            scenario=s.scenario or "",
            session=s.session or "",
            time=obs.get("time"),
            step=int(obs.get("step") or 0),
            briefing=obs.get("briefing"),
            notifications=_loop.notifications(obs),
            text=render(obs),
        )

    def _tool_observation(
        self, tool: str, call_id: str, step: Step, obs: Mapping[str, JSON]
    ) -> CallToolObservation:
        results: list[dict[str, JSON]] = obs.get("results") or []
        r = next((r for r in results if r.get("call_id") == call_id), {})
        body: dict[str, JSON] = {"ok": bool(r.get("ok"))}
        error = None
        if r.get("ok"):
            body["result"] = r.get("result")
        else:
            err = r.get("error") or {"kind": "not_executed", "message": "the call was not run"}
            body["error"] = err
            kind = str(err.get("kind", "")) if isinstance(err, dict) else ""
            message = str(err.get("message", err)) if isinstance(err, dict) else str(err)
            error = ToolError(error_type=_error_type(kind), message=message)
        body["time"] = obs.get("time")
        body["step"] = obs.get("step")
        body["notifications"] = _loop.notifications(obs)
        body["over"] = self._state.over
        return CallToolObservation(
            tool_name=tool,
            result=body,
            error=error,
            done=self._state.over,
            reward=float(step.reward),
        )

    def _end(self) -> None:
        client, session = self._client, self._state.session
        self._client = None
        if client is None:
            return
        try:
            if session is not None:
                # Ends a run still going (as abandoned) and writes it.
                client.delete(session)
        except ApiError:
            pass  # already gone (expired or ended with the server)
        finally:
            client.close()


TOKEN_ENV = "TBSIM_OPENENV_TOKEN"
"""The variable `python -m tbsim.openenv` reads its token from (without --token-file)."""


def create_app(
    backend: Backend | None = None,
    *,
    max_concurrent_envs: int | None = None,
    token: str | None = None,
    allow_hosts: Sequence[str] = (),
) -> Any:
    """The app openenv-core builds around tbsim (`uvicorn` serves it), behind the
    Host, Origin and token checks of `tbsim.openenv` (see the module docs)."""
    b = backend or Backend()
    app = _create_app(
        lambda: TraineeBenchEnvironment(b),
        Action,
        TraineeBenchObservation,
        env_name="tbsim",
        max_concurrent_envs=max_concurrent_envs or b.max_sessions,
    )
    return Guard(app, token=token, allow_hosts=allow_hosts)


def _read_token(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise SystemExit(f"--token-file {path}: not a regular file")
    if p.stat().st_size > 4096:
        raise SystemExit(f"--token-file {path}: larger than 4096 bytes")
    lines = p.read_text().splitlines()
    token = lines[0].strip() if lines else ""
    if not token:
        raise SystemExit(f"--token-file {path}: empty")
    return token


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host_name(host) if host.startswith("[") else host).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m tbsim.openenv", description="Serve tbsim as an OpenEnv environment."
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--scenario", default="busy-day", help="default scenario (reset may name one)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--hints", type=int, default=0, choices=range(4))
    p.add_argument("--feedback", default=None)
    p.add_argument("--max-steps", type=int, default=None)
    p.add_argument("--out", default="runs/openenv", help="where each episode's run goes")
    p.add_argument("--max-sessions", type=int, default=16, help="concurrent episodes")
    p.add_argument(
        "--token-file",
        default=None,
        help=f"a file whose first line is the token every request must carry "
        f"(Authorization: Bearer); default ${TOKEN_ENV}; needed off loopback",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name requests may name besides localhost and loopback addresses",
    )
    a = p.parse_args(argv)
    token = _read_token(a.token_file) if a.token_file else os.environ.get(TOKEN_ENV) or None
    if token is None and not _loopback(a.host):
        p.error(
            f"refusing to listen on {a.host} without a token: anyone who can reach it could "
            f"run episodes and read runs; give one with --token-file PATH or ${TOKEN_ENV}, "
            "or listen on a loopback address"
        )

    import socket

    import uvicorn

    backend = Backend(
        scenario=a.scenario,
        seed=a.seed,
        hints=a.hints,
        feedback=a.feedback,
        max_steps=a.max_steps,
        out=a.out,
        max_sessions=a.max_sessions,
    )
    backend.server()  # fail now, not at the first reset, if tbsim cannot start
    # Bound here so that `--port 0` works and the line below names the real port.
    sock = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((a.host, a.port))
    sock.listen(128)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"tbsim OpenEnv environment listening on http://{shown}:{port}", flush=True)
    app = create_app(backend, token=token, allow_hosts=a.allow_host)
    config = uvicorn.Config(app, log_level="warning")
    # uvicorn stops on SIGTERM, then raises the signal again with the handler it
    # found: the default one would end this process before `finally`, leaving the
    # tbsim server running. This one unwinds, so the server is closed and written.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        backend.close()


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    main()
