"""TraineeBench as a verifiers environment (`pip install "tbsim[verifiers]"`).

    vf-eval traineebench --model gpt-4.1-mini --no-push      # the `examples` suite
    vf-eval traineebench --env.taskset.suite traineebench --no-push

or from Python: `tbsim.verifiers.load_environment(suite="examples")`. The taskset id is
`traineebench` (the top-level module this wheel ships for verifiers' plugin loader,
which imports a taskset by its id); it exports the taskset, its harness and its env.

- **Tasks**: one per scenario of `suite` (or the `scenarios` named), each a fresh
  tbsim world with the given `seed`, `hints`, `feedback` and `max_steps`.
- **Harness** (the default for this taskset): tbsim's own agent loop, in process.
  Every model call goes through verifiers' interception endpoint with the catalogue
  as native tools (each description states its time cost); the briefing opens the
  conversation, each call's result (or tbsim's refusal, as a tool error the model
  reads) comes back as a tool message, and a turn without a call is a step that
  costs time, answered with the nudge, as tbsim's agent does. The loop ends when
  the run does (`finish`, the end of the last day, or `max_steps`).
- **World**: each rollout starts its own `tbsim serve` on loopback, writing the run to
  `<out>/<session>/`; the path is in the trace's `info["tbsim"]`, which is where
  the rubric finds the rollout's world (no state shared between rollouts).
- **Rubric**: the reward `checkpoint_score` is tbsim's own result (`result.json`);
  `success` (1.0 when the run counts as solved) is a metric.
- **Runtime**: the env defaults its seat to the local `subprocess` runtime, so no
  sandbox or platform key is needed (`--no-push` skips the upload).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from openai import AsyncOpenAI
from pydantic import Field

from . import _loop
from ._binary import scenarios as _scenarios
from .client import AsyncClient
from .server import Server

__all__ = [
    "TraineeBenchData",
    "TraineeBenchEnv",
    "TraineeBenchEnvConfig",
    "TraineeBenchHarness",
    "TraineeBenchHarnessConfig",
    "TraineeBenchTask",
    "TraineeBenchTaskset",
    "TraineeBenchTasksetConfig",
    "load_environment",
]

TASKSET_ID = "traineebench"


class TraineeBenchData(vf.TaskData):
    """One scenario and how its world is played."""

    scenario: str
    seed: int | None = None
    hints: int = 0
    feedback: str = "detailed"
    max_steps: int | None = None
    out: str = "runs/verifiers"


def _run_result(trace: vf.Trace) -> dict[str, Any]:
    """The rollout's tbsim result, read from the run directory its harness recorded."""
    meta = trace.info.get("tbsim")
    if not isinstance(meta, dict) or not meta.get("run_dir"):
        raise vf.TaskError("the rollout recorded no tbsim run (did the tbsim harness run?)")
    path = Path(str(meta["run_dir"])) / "result.json"
    try:
        result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise vf.TaskError(f"cannot read the run's result at {path}: {e}") from e
    return result


class TraineeBenchTask(vf.Task[TraineeBenchData]):
    """Scored by tbsim itself: the run's checkpoint score is the reward."""

    @vf.reward
    async def checkpoint_score(self, trace: vf.Trace) -> float:
        return float(_run_result(trace)["checkpoint_score"])

    @vf.metric
    async def success(self, trace: vf.Trace) -> float:
        r = _run_result(trace)
        return 1.0 if float(r.get("success_rate", 0.0)) >= 1.0 else 0.0


class TraineeBenchTasksetConfig(vf.TasksetConfig):
    suite: str = "examples"
    """A bundled suite (`tbsim scenarios`): examples, traineebench, traineebench_cl, …"""
    scenarios: list[str] = Field(default_factory=list)
    """Scenario names to play instead of the whole suite."""
    seed: int | None = None
    """Master seed (default: each scenario's own)."""
    hints: int = 0
    feedback: str = "detailed"
    max_steps: int | None = None
    """Decisions per working day before the run is cut off (default: tbsim's, 400)."""
    out: str = "runs/verifiers"
    """Where each rollout's run directory goes (`<out>/<session>/`)."""


class TraineeBenchTaskset(vf.Taskset[TraineeBenchTask, TraineeBenchTasksetConfig]):
    def load(self) -> Iterable[TraineeBenchTask]:
        c = self.config
        names = c.scenarios or [s.name for s in _scenarios(suite=c.suite)]
        listed = {s.name: s for s in _scenarios()}
        for name in names:
            info = listed.get(name)
            yield TraineeBenchTask(
                TraineeBenchData(
                    id=name,
                    name=name,
                    description=info.description if info is not None else None,
                    # The harness opens with tbsim's briefing; verifiers wants a prompt.
                    prompt=f"Play the tbsim scenario {name}.",
                    scenario=name,
                    seed=c.seed,
                    hints=c.hints,
                    feedback=c.feedback,
                    max_steps=c.max_steps,
                    out=c.out,
                ),
                c.task,
            )


class TraineeBenchHarnessConfig(vf.HarnessConfig):
    max_turns: int = 10_000
    """A backstop on model turns; the run's own `max_steps` normally ends it first."""


def _agent_label(model: str) -> str:
    return "verifiers-" + (re.sub(r"[^A-Za-z0-9._-]", "-", model)[:60] or "model")


class TraineeBenchHarness(vf.Harness[TraineeBenchHarnessConfig]):
    """tbsim's agent loop over native tool calls, in process (see the module doc)."""

    APPENDS_SYSTEM_PROMPT = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(  # type: ignore[override]
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        d = data.model_dump()
        scenario = d.get("scenario")
        if not scenario:
            raise vf.HarnessError("the tbsim harness plays tbsim tasks (no `scenario` in the task)")
        out = Path(str(d.get("out") or "runs/verifiers")).resolve()
        # A server of its own per rollout: nothing is shared between rollouts.
        server = await asyncio.to_thread(Server, out=out, max_sessions=1)
        try:
            await self._play(ctx, trace, server, endpoint, secret, d)
        finally:
            # Stopping the server ends (as abandoned) and writes a run still going.
            await asyncio.to_thread(server.close)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")

    async def _play(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        server: Server,
        endpoint: str,
        secret: str,
        d: dict[str, Any],
    ) -> None:
        model = AsyncOpenAI(base_url=endpoint, api_key=secret)
        async with AsyncClient(server.url) as api:
            tools = _loop.openai_tools(await api.tools())
            opts = {
                k: d[k] for k in ("seed", "hints", "feedback", "max_steps") if d.get(k) is not None
            }
            created = await api.create(str(d["scenario"]), agent=_agent_label(ctx.model), **opts)
            # The session's run directory is `<out>/<session>`: the rubric reads it there.
            trace.info["tbsim"] = {
                "session": created.session,
                "scenario": d["scenario"],
                "run_dir": str(server.out / created.session),
            }
            obs = created.observation
            messages: list[dict[str, Any]] = [
                {"role": "system", "content": _loop.system_prompt(obs.get("briefing") or {})},
                {"role": "user", "content": _loop.opening(obs)},
            ]
            over = bool(obs.get("over"))
            turns = 0
            while not over and turns < self.config.max_turns:
                turns += 1
                completion = await model.chat.completions.create(
                    model=ctx.model,
                    messages=messages,  # type: ignore[arg-type]
                    tools=tools,  # type: ignore[arg-type]
                )
                msg = completion.choices[0].message
                messages.append(msg.model_dump(exclude_none=True))
                calls = []
                for tc in msg.tool_calls or []:
                    fn = getattr(tc, "function", None)
                    if fn is None:
                        continue
                    try:
                        args: Any = json.loads(fn.arguments or "{}")
                    except ValueError:
                        # tbsim refuses it with its own message; the model reads that.
                        args = fn.arguments
                    calls.append({"id": tc.id, "name": fn.name, "arguments": args})
                step = await api.step(created.session, calls)
                obs = step.observation
                messages.extend(_loop.after_turn(obs, [c["id"] for c in calls]))
                over = step.terminated or step.truncated or bool(obs.get("over"))
            trace.info["tbsim"]["turns"] = turns


class TraineeBenchEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The one seat; local by default (the harness runs in process)."""


class TraineeBenchEnv(vf.Env[TraineeBenchEnvConfig]):
    """One agent per episode playing one scenario."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        await agents.agent.run(task)


def load_environment(
    suite: str = "examples",
    scenarios: list[str] | None = None,
    *,
    seed: int | None = None,
    hints: int = 0,
    feedback: str = "detailed",
    max_steps: int | None = None,
    out: str = "runs/verifiers",
) -> TraineeBenchEnv:
    """The environment `vf-eval traineebench` runs, built in Python."""
    config = TraineeBenchEnvConfig.model_validate(
        {
            "taskset": {
                "id": TASKSET_ID,
                "suite": suite,
                "scenarios": list(scenarios or []),
                "seed": seed,
                "hints": hints,
                "feedback": feedback,
                "max_steps": max_steps,
                "out": out,
            }
        }
    )
    env: TraineeBenchEnv = vf.load_environment(config)
    return env
