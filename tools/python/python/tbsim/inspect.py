"""TraineeBench as Inspect AI tasks (`pip install "tbsim[inspect]"`).

    inspect eval tbsim/traineebench --model openai/gpt-4o
    inspect eval tbsim/examples --model mockllm/model -T replay=runs/oracle

Tasks (registered through the `inspect_ai` entry point): `tbsim/traineebench`,
`tbsim/traineebench_cl`, `tbsim/traineebench_plus` and `tbsim/examples`, one per
bundled suite. Each Sample is one scenario (multi-day ones included); its world is
`tbsim mcp SCENARIO` over stdio (or a session of a running `tbsim serve` with
`transport=http`), and the solver is tbsim's own agent loop over its MCP tools:

* the first messages are tbsim's system prompt and opening message (the bundled
  `content/prompts` templates), built from the briefing and the first
  notifications, which the MCP resources give before any call is made;
* each tool's description states its time cost; each call goes to tbsim, which
  refuses unknown tools and bad arguments itself (the model gets that refusal as a
  tool error and goes on);
* each call's result is its tool message; after a turn's results comes a user
  message with tbsim's status line (`[System time] <time> · step <n>`, the
  decisions made so far) and the notifications the turn brought, as
  `tbsim run --agent llm:...` sends it (an OpenAI-compatible test server such as
  the repository's `fake-llm` reads the turn from that line); when a new working day
  starts, the conversation starts afresh with tbsim's new-day message and the
  mentor's feedback, as `tbsim run --agent llm:...` does;
* a turn without tool calls is answered with tbsim's nudge (the clock is still
  running) and recorded as an empty turn, as `tbsim run` records it (sent with the
  next call as `_meta["tbsim/empty_turns"]`, or with a last resource read when
  no call follows; counted in `result.json`); the loop
  ends when the run is over (`finish`, the end of the working days, the step
  limit) or after `max_steps` turns per working day.

The scorer reports tbsim's own result (`result.json` of the run directory): the
checkpoint score is the value, and success, per-task scores and the mentor's
feedback are in the metadata and explanation. Each sample's run directory is kept
(under `runs_dir`, default `$INSPECT_LOG_DIR/tbsim-runs` or `./logs/tbsim-runs`;
path in the score's and sample's metadata); it passes `tbsim replay`, and
`tbsim report` reads the directory of them.

`outputs_from_run(RUN_DIR)` turns a recorded run's decisions into `ModelOutput`s
for Inspect's `mockllm/model`: a scripted model for smoke tests. The task parameter
`replay=DIR` (or `TBSIM_INSPECT_REPLAY=DIR`) makes every sample play the recorded
run of its scenario found under DIR, with `--model mockllm/model`.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

import anyio
import jsonschema
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentImage,
    ContentText,
    Model,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    Target,
    mean,
    metric,
    scorer,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolCall, ToolCallError, ToolDef, ToolError, ToolParams
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import (
    CallToolResult,
    ImageContent,
    ReadResourceResult,
    TextContent,
    TextResourceContents,
)

from ._binary import binary, content_dir, scenarios

__all__ = [
    "examples",
    "outputs_from_run",
    "tbsim_agent",
    "tbsim_scorer",
    "traineebench",
    "traineebench_cl",
    "traineebench_plus",
]

Transport = Literal["stdio", "http"]
Feedback = Literal["none", "summary", "detailed"]

REPLAY_ENV = "TBSIM_INSPECT_REPLAY"
"""Names a directory of recorded runs the scripted `mockllm/model` replays."""

_USAGE = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)


# --- tasks ---------------------------------------------------------------------------


def _task(
    suite: str,
    scenarios: str | Sequence[str] | None,
    seed: int | None,
    trials: int,
    hints: int,
    feedback: str,
    max_steps: int,
    transport: str,
    url: str | None,
    token: str | None,
    runs_dir: str | None,
    replay: str | None,
) -> Task:
    if not 0 <= hints <= 3:
        raise ValueError(f"hints must be 0-3, not {hints}")
    if feedback not in ("none", "summary", "detailed"):
        raise ValueError(f"feedback must be none, summary or detailed, not {feedback!r}")
    if transport not in ("stdio", "http"):
        raise ValueError(f"transport must be stdio or http, not {transport!r}")
    if transport == "http" and not url:
        raise ValueError("transport=http needs url= (the base URL of a running `tbsim serve`)")
    if trials < 1:
        raise ValueError(f"trials must be at least 1, not {trials}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, not {max_steps}")
    # One directory per eval of this task, laid out as `tbsim run --out` lays a batch,
    # under `runs_dir`, else `tbsim-runs/` beside the eval's log (`--log-dir`, known
    # once the eval runs; the solver settles it).
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    batch = f"{suite}-{stamp}-{secrets.token_hex(3)}"
    out = Path(runs_dir) / batch if runs_dir else _default_runs_base() / batch
    return Task(
        dataset=_dataset(suite, scenarios),
        solver=tbsim_agent(
            seed=seed,
            hints=hints,
            feedback=feedback,  # type: ignore[arg-type]
            max_steps=max_steps,
            transport=transport,  # type: ignore[arg-type]
            url=url,
            token=token,
            runs_dir=str(out),
            server_out=runs_dir if transport == "http" else None,
            follow_log_dir=not runs_dir,
            trials=trials,
            replay=replay if replay is not None else os.environ.get(REPLAY_ENV) or None,
        ),
        scorer=tbsim_scorer(),
        epochs=trials,
        metadata={"tbsim_suite": suite, "tbsim_runs_dir": str(out)},
    )


def _patterns(scenarios: str | Sequence[str] | None) -> list[str]:
    if scenarios is None:
        return []
    if isinstance(scenarios, str):
        return [p.strip() for p in scenarios.split(",") if p.strip()]
    return [str(p) for p in scenarios]


def _dataset(suite: str, scenarios_arg: str | Sequence[str] | None) -> MemoryDataset:
    listed = scenarios(suite=suite)
    patterns = _patterns(scenarios_arg)
    chosen = [
        s for s in listed if not patterns or any(fnmatch.fnmatch(s.name, p) for p in patterns)
    ]
    if not chosen:
        names = ", ".join(s.name for s in listed[:8])
        raise ValueError(
            f"no scenario of suite {suite!r} matches {', '.join(patterns)} (it has {names}, ...)"
        )
    return MemoryDataset(
        [
            Sample(
                id=s.name,
                input=s.description or f"TraineeBench scenario {s.name}",
                metadata={
                    "scenario": s.name,
                    "suite": suite,
                    "days": s.days,
                    "tasks": s.tasks,
                    "families": list(s.families),
                    "scenario_seed": s.seed,
                },
            )
            for s in chosen
        ],
        name=suite,
    )


@task
def traineebench(
    scenarios: str | list[str] | None = None,
    seed: int | None = None,
    trials: int = 1,
    hints: int = 0,
    feedback: str = "detailed",
    max_steps: int = 400,
    transport: str = "stdio",
    url: str | None = None,
    token: str | None = None,
    runs_dir: str | None = None,
    replay: str | None = None,
) -> Task:
    """The TraineeBench suite (one Sample per scenario).

    Args:
        scenarios: Scenario names or globs (a list, or comma-separated); default all.
        seed: Master seed of every world (default: each scenario's own); epoch k
            uses seed + k - 1, as trial k - 1 of `tbsim run --trials`.
        trials: Epochs per scenario.
        hints: Hints given with each task (0-3).
        feedback: The mentor's feedback each morning: none, summary or detailed.
        max_steps: Decisions per working day (the run ends there).
        transport: `stdio` (`tbsim mcp` per sample) or `http` (`url`'s `/mcp`).
        url: Base URL of a running `tbsim serve` (transport=http).
        token: Its bearer token, if it has one.
        runs_dir: Where run directories go (default `$INSPECT_LOG_DIR/tbsim-runs`);
            with transport=http, the server's `--out` (its runs are `<out>/<session>`).
        replay: A directory of recorded runs for `mockllm/model` to replay
            (default `$TBSIM_INSPECT_REPLAY`).
    """
    return _task(
        "traineebench", scenarios, seed, trials, hints, feedback, max_steps, transport,
        url, token, runs_dir, replay,
    )  # fmt: skip


@task
def traineebench_cl(
    scenarios: str | list[str] | None = None,
    seed: int | None = None,
    trials: int = 1,
    hints: int = 0,
    feedback: str = "detailed",
    max_steps: int = 400,
    transport: str = "stdio",
    url: str | None = None,
    token: str | None = None,
    runs_dir: str | None = None,
    replay: str | None = None,
) -> Task:
    """TraineeBench-CL: multi-day scenarios, the mentor's feedback between days
    (parameters as `traineebench`)."""
    return _task(
        "traineebench-cl", scenarios, seed, trials, hints, feedback, max_steps, transport,
        url, token, runs_dir, replay,
    )  # fmt: skip


@task
def traineebench_plus(
    scenarios: str | list[str] | None = None,
    seed: int | None = None,
    trials: int = 1,
    hints: int = 0,
    feedback: str = "detailed",
    max_steps: int = 400,
    transport: str = "stdio",
    url: str | None = None,
    token: str | None = None,
    runs_dir: str | None = None,
    replay: str | None = None,
) -> Task:
    """TraineeBench-plus (parameters as `traineebench`)."""
    return _task(
        "traineebench-plus", scenarios, seed, trials, hints, feedback, max_steps, transport,
        url, token, runs_dir, replay,
    )  # fmt: skip


@task
def examples(
    scenarios: str | list[str] | None = None,
    seed: int | None = None,
    trials: int = 1,
    hints: int = 0,
    feedback: str = "detailed",
    max_steps: int = 400,
    transport: str = "stdio",
    url: str | None = None,
    token: str | None = None,
    runs_dir: str | None = None,
    replay: str | None = None,
) -> Task:
    """The bundled example scenarios (parameters as `traineebench`)."""
    return _task(
        "examples", scenarios, seed, trials, hints, feedback, max_steps, transport,
        url, token, runs_dir, replay,
    )  # fmt: skip


# --- tbsim's prompts -----------------------------------------------------------------

_VAR = re.compile(r"\{([a-z_]+)\}")


def _prompt(template: str, /, **values: str) -> str:
    """A bundled prompt template (`content/prompts/NAME.md`) with its `{name}`
    placeholders filled, as tbsim fills them."""
    text = (content_dir() / "prompts" / f"{template}.md").read_text()
    return _VAR.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _notifications_text(notes: Sequence[dict[str, Any]], empty: str = "(nothing yet)") -> str:
    if not notes:
        return empty
    return "\n".join(json.dumps(n, ensure_ascii=False, sort_keys=True) for n in notes)


def _clock(iso: str) -> str:
    """A briefing's time as tool results show time ("Tue 2025-10-07 09:00")."""
    try:
        return datetime.fromisoformat(iso).strftime("%a %Y-%m-%d %H:%M")
    except ValueError:
        return iso


def _status(now: str, step: int) -> str:
    return f"[System time] {now} · step {step}"


# --- the world -------------------------------------------------------------------------


@dataclass
class _World:
    """One tbsim world over MCP and what the solver has learnt from it."""

    session: ClientSession
    tools_json: dict[str, dict[str, Any]] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    over: bool = False
    final: dict[str, Any] | None = None
    now: str = ""
    steps: int = 0
    # The briefing and first notifications, already given in the opening message,
    # come once more with the first tool result: dropped there.
    skip_first: int = 0
    first_done: bool = False
    new_day: dict[str, Any] | None = None
    call_id: str | None = None
    # Turns without a tool call since the last call: sent with the next call
    # (`_meta["tbsim/empty_turns"]`), which records them as `tbsim run` does.
    empty_turns: int = 0
    tools: list[Tool] = field(default_factory=list)
    day_notes: list[dict[str, Any]] = field(default_factory=list)
    # What this turn's calls brought in, for the status message that ends the turn.
    turn_notes: list[dict[str, Any]] = field(default_factory=list)

    async def read(self, uri: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
        given: Any = meta  # the SDK's RequestParamsMeta is an open dict
        res = await self.session.read_resource(uri, meta=given)
        assert isinstance(res, ReadResourceResult)
        text = next((c.text for c in res.contents if isinstance(c, TextResourceContents)), "{}")
        out: dict[str, Any] = json.loads(text)
        return out

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[bool, list[Any]]:
        """Calls a tool; (refused, Inspect content). Learns the time, the end of the
        run and a new day from the result."""
        # The trajectory records the call under the transcript's id (1-64 chars).
        call_id, self.call_id = self.call_id, None
        meta: dict[str, Any] = {}
        if call_id and len(call_id) <= 64:
            meta["tbsim/call_id"] = call_id
        empty, self.empty_turns = self.empty_turns, 0
        if empty:
            meta["tbsim/empty_turns"] = min(empty, 1000)
        given: Any = meta or None  # the SDK's RequestParamsMeta is an open dict
        res = await self.session.call_tool(name, arguments, meta=given)
        assert isinstance(res, CallToolResult)
        text = next((c.text for c in res.content if isinstance(c, TextContent)), "{}")
        body: dict[str, Any] = json.loads(text)
        self.steps += 1 + min(empty, 1000)
        # The notifications leave the tool result for the user message that ends the
        # turn (`turn_message`), where tbsim's own agent puts them.
        notes = body.pop("notifications", None) or []
        if not self.first_done and "briefing" in body:
            body.pop("briefing")
            notes = notes[self.skip_first :]
            self.first_done = True
        self.now = str(body.get("time", self.now))
        self.turn_notes.extend(notes)
        for n in notes:
            if n.get("kind") == "day_started":
                self.new_day = n
                self.day_notes = []
            elif self.new_day is not None:
                self.day_notes.append(n)
        if body.get("run_over"):
            self.over = True
            if isinstance(body.get("final"), dict):
                self.final = body["final"]
        content: list[Any] = [json.dumps(body, ensure_ascii=False)]
        for c in res.content:
            if isinstance(c, ImageContent):
                content.append(ContentImage(image=f"data:{c.mime_type};base64,{c.data}"))
        return res.is_error, content

    def turn_message(self) -> ChatMessageUser:
        """The user message after a turn's tool results, as tbsim's own agent sends
        it: the status line (the time and the decisions made so far: what a model
        reads the step from) and the notifications the turn brought."""
        notes, self.turn_notes = self.turn_notes, []
        text = _status(self.now, self.steps) + "\n\n"
        return ChatMessageUser(content=text + _notifications_text(notes, "(nothing new)"))

    def valid(self, call: ToolCall) -> bool:
        """Whether Inspect would pass the call on (known tool, arguments that fit the
        schema); other calls go to tbsim directly, which refuses them itself."""
        schema = self.tools_json.get(call.function)
        if schema is None or call.parse_error:
            return False
        # The validator Inspect checks tool input with.
        validator = jsonschema.Draft7Validator(schema)
        return bool(validator.is_valid(call.arguments))

    def tool_defs(self) -> list[Tool]:
        if len(self.tools) != len(self.tools_json):
            self.tools = [self._tool(name) for name in self.tools_json]
        return self.tools

    def _tool(self, name: str) -> Tool:
        world = self

        async def execute(**kwargs: Any) -> Any:
            refused, content = await world.call(name, kwargs)
            if refused:
                raise ToolError(content[0])
            if len(content) == 1:
                return content[0]
            return [ContentText(text=content[0]), *content[1:]]

        params = ToolParams.model_validate(self.tools_json[name])
        for pname, p in params.properties.items():
            p.description = p.description or pname
        return ToolDef(
            execute, name=name, description=self.descriptions[name], parameters=params,
            parallel=False,
        ).as_tool()  # fmt: skip


@contextlib.asynccontextmanager
async def _connect(
    transport: Transport,
    args: list[str],
    url: str | None,
    token: str | None,
) -> AsyncIterator[tuple[ClientSession, dict[str, Any]]]:
    if transport == "stdio":
        params = StdioServerParameters(command=binary(), args=args)
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                yield session, dict(getattr(init, "meta", None) or {})
    else:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(str(url), http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            yield session, dict(getattr(init, "meta", None) or {})


def _agent_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", model)[:64] or "inspect"


# --- the solver ------------------------------------------------------------------------


def _default_runs_base() -> Path:
    return Path(os.environ.get("INSPECT_LOG_DIR") or "logs") / "tbsim-runs"


def _log_dir_runs(runs: Path) -> Path:
    """`runs` (`<base>/<batch>`) moved beside the running eval's log when that is a
    local file (`inspect eval --log-dir DIR` puts runs in `DIR/tbsim-runs/`)."""
    try:
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        location = active.log_location if active is not None else ""
    except Exception:  # another Inspect
        return runs
    if not location or ("://" in location and not location.startswith("file://")):
        return runs
    log_dir = Path(location.removeprefix("file://")).parent
    return log_dir / "tbsim-runs" / runs.name


def _eval_epochs() -> int | None:
    """The epochs of the running eval (`--epochs` or the task's), where this Inspect
    tells; None where it does not (the caller then keeps epochs apart anyway)."""
    try:
        from inspect_ai._control.eval_state import get_eval_state
        from inspect_ai.log._samples import sample_active

        active = sample_active()
        found = get_eval_state(active.eval_id) if active is not None else None
        return int(found.epochs) if found is not None else None
    except Exception:  # another Inspect: its internals differ
        return None


@solver
def tbsim_agent(
    *,
    seed: int | None = None,
    hints: int = 0,
    feedback: Feedback = "detailed",
    max_steps: int = 400,
    transport: Transport = "stdio",
    url: str | None = None,
    token: str | None = None,
    runs_dir: str = "logs/tbsim-runs",
    server_out: str | None = None,
    follow_log_dir: bool = False,
    trials: int = 1,
    replay: str | None = None,
) -> Solver:
    """tbsim's agent loop over the MCP tools of the sample's world (see the module
    docs). The sample's metadata names its `scenario`."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        scenario = str(state.metadata["scenario"])
        days = int(state.metadata.get("days", 1))
        base = seed if seed is not None else state.metadata.get("scenario_seed")
        run_seed = None if base is None else int(base) + state.epoch - 1
        model_name = str(state.model)
        model = _replay_model(replay, scenario, model_name) if replay else get_model()
        runs = Path(runs_dir)
        if follow_log_dir:
            runs = _log_dir_runs(runs)
        # Absolute, so the path recorded in the log names the run from anywhere.
        out = (runs / scenario).absolute()
        if max(trials, _eval_epochs() or 2) > 1:
            # Each epoch is a run of its own (`-T trials` and `--epochs` alike),
            # laid out as `tbsim run --trials` lays them.
            out = out / f"trial-{state.epoch - 1}"
        state.metadata["tbsim_run_dir"] = str(out) if transport == "stdio" else None
        agent = _agent_name(model_name)
        if transport == "stdio":
            out.parent.mkdir(parents=True, exist_ok=True)
            args = ["mcp", scenario, f"--out={out}", f"--hints={hints}"]
            args += ["--feedback", feedback, "--max-steps", str(max_steps)]
            args.append(f"--agent-name={agent}")
            if run_seed is not None:
                args += ["--seed", str(run_seed)]
            endpoint = None
        else:
            fields = {"scenario": scenario, "hints": hints, "feedback": feedback}
            fields |= {"max_steps": max_steps, "agent": agent}
            if run_seed is not None:
                fields["seed"] = run_seed
            query = urlencode(fields)
            endpoint = f"{str(url).rstrip('/')}/mcp?{query}"
            args = []
        async with _connect(transport, args, endpoint, token) as (session, meta):
            if transport == "http" and "tbsim/session" in meta:
                state.metadata["tbsim_session"] = meta["tbsim/session"]
                if server_out:
                    state.metadata["tbsim_run_dir"] = str(
                        Path(server_out) / str(meta["tbsim/session"])
                    )
            world = _World(session)
            for t in (await session.list_tools()).tools:
                world.tools_json[t.name] = dict(t.input_schema)
                world.descriptions[t.name] = t.description or t.name
            briefing = (await world.read("tbsim://briefing"))["briefing"] or {}
            first = (await world.read("tbsim://notifications"))["notifications"]
            world.skip_first = len(first)
            world.now = _clock(str(briefing.get("day_starts", "")))
            system = _system_prompt(briefing)
            opening = _status(world.now, 0) + "\n\n"
            opening += _prompt(
                "task",
                name=str(briefing.get("you", "")),
                company=str(briefing.get("company", "")),
                notifications=_notifications_text(first),
                notes="",
            )
            state.messages = [ChatMessageSystem(content=system), ChatMessageUser(content=opening)]
            tools = world.tool_defs()
            state.tools = tools
            turns = 0
            while not world.over and turns < max_steps * days:
                turns += 1
                output = await model.generate(state.messages, tools)
                state.output = output
                message = output.message
                before = list(state.messages)
                state.messages.append(message)
                if not message.tool_calls:
                    # An empty turn, a step as in `tbsim run`: recorded with the next call.
                    world.empty_turns += 1
                    step = world.steps + world.empty_turns
                    nudge = _status(world.now, step) + "\n\n" + _prompt("nudge")
                    state.messages.append(ChatMessageUser(content=nudge))
                    continue
                for call in message.tool_calls:
                    state.messages.extend(await _run_call(world, before, message, call))
                if world.new_day is None and not world.over:
                    state.messages.append(world.turn_message())
                if world.new_day is not None and not world.over:
                    day = world.new_day
                    world.new_day = None
                    world.turn_notes = []
                    lines = [str(x) for x in day.get("feedback") or []]
                    text = _status(world.now, world.steps) + "\n\n"
                    text += _prompt(
                        "day",
                        day=str(day.get("day", "")),
                        feedback="\n".join(lines) if lines else "(none)",
                        notifications=_notifications_text(world.day_notes),
                        notes="",
                    )
                    transcript().info(f"tbsim: day {day.get('day')} started; feedback: {lines}")
                    state.messages = [
                        ChatMessageSystem(content=system),
                        ChatMessageUser(content=text),
                    ]
            if world.empty_turns and not world.over:
                # The model's last turns only talked and no call follows them:
                # recorded with a read, so the run counts them as `tbsim run` does.
                empty, world.empty_turns = world.empty_turns, 0
                await world.read("tbsim://notifications", {"tbsim/empty_turns": min(empty, 1000)})
            state.metadata["tbsim_final"] = world.final
            state.completed = True
        return state

    return solve


def _system_prompt(b: dict[str, Any]) -> str:
    return _prompt(
        "system",
        name=str(b.get("you", "")),
        company=str(b.get("company", "")),
        department=str(b.get("department", "")),
        manager=str(b.get("manager", "")),
        day_starts=str(b.get("day_starts", "")).replace("T", " "),
        day_ends=str(b.get("day_ends", "")).replace("T", " "),
    )


async def _run_call(
    world: _World,
    before: list[ChatMessage],
    message: ChatMessageAssistant,
    call: ToolCall,
) -> list[ChatMessage]:
    """Runs one call in order: through Inspect's tool execution when Inspect would
    accept it (so the transcript has its tool event), else straight to tbsim, whose
    refusal the model gets as the tool error."""
    world.call_id = call.id
    if world.valid(call):
        single = message.model_copy(update={"tool_calls": [call]})
        result = await execute_tools([*before, single], world.tool_defs())
        return list(result.messages)
    if call.parse_error:
        text = f"the arguments are not a JSON object: {call.parse_error}"
        return [_tool_error(call, text)]
    _, content = await world.call(call.function, dict(call.arguments))
    transcript().info({"tbsim_refused": call.function, "result": content[0]})
    return [_tool_error(call, str(content[0]))]


def _tool_error(call: ToolCall, text: str) -> ChatMessageTool:
    return ChatMessageTool(
        content=text,
        tool_call_id=call.id,
        function=call.function,
        error=ToolCallError("parsing", text),
    )


# --- scripted models -------------------------------------------------------------------


def outputs_from_run(run_dir: str | os.PathLike[str]) -> list[ModelOutput]:
    """The decisions of a recorded run (its `trajectory.jsonl`) as `ModelOutput`s for
    `get_model("mockllm/model", custom_outputs=...)`: one output per decision, with
    that decision's tool calls (ids and arguments as recorded) and zero usage, so
    mockllm needs no tokenizer. A decision without calls becomes a text answer.

    Use it for smoke tests: the oracle's run (`tbsim run NAME --agent oracle --out
    DIR`) replayed through Inspect scores what the oracle scored."""
    path = Path(run_dir) / "trajectory.jsonl"
    outputs: list[ModelOutput] = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") != "decision":
            continue
        calls = [
            ToolCall(
                id=str(c["id"]),
                function=str(c["name"]),
                arguments=json.loads(c["arguments"]) if c.get("arguments") else {},
            )
            for c in rec.get("calls", [])
        ]
        if calls:
            out = ModelOutput.for_tool_call("mockllm/model", calls[0].function, calls[0].arguments)
            out.message.tool_calls = calls
            out.message.content = ""
        else:
            out = ModelOutput.from_content("mockllm/model", "(no calls)")
        out.usage = _USAGE
        outputs.append(out)
    return outputs


def _replay_model(replay: str, scenario: str, model_name: str) -> Model:
    if not model_name.startswith("mockllm/"):
        raise ValueError(
            f"replay={replay} scripts mockllm/model; it cannot stand in for {model_name}"
        )
    found = _recorded_run(Path(replay), scenario)
    return get_model("mockllm/model", custom_outputs=outputs_from_run(found), memoize=False)


def _recorded_run(root: Path, scenario: str) -> Path:
    """The run of `scenario` in `root`: `root` itself, or a run directory below it
    whose `result.json` names the scenario (the first in path order)."""
    candidates = [root, *sorted(p.parent for p in root.rglob("result.json"))]
    for d in candidates:
        result = d / "result.json"
        if result.is_file() and json.loads(result.read_text()).get("scenario") == scenario:
            return d
    raise FileNotFoundError(f"no recorded run of {scenario} under {root}")


# --- the scorer ------------------------------------------------------------------------


@metric
def success_rate() -> Metric:
    """The share of samples tbsim counts as solved."""

    def compute(scores: list[SampleScore]) -> float:
        if not scores:
            return 0.0
        ok = sum(1 for s in scores if (s.score.metadata or {}).get("success"))
        return ok / len(scores)

    return compute


@metric
def family_scores() -> Metric:
    """Mean task score per meta-task family, over every task of every sample."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        by: dict[str, list[float]] = {}
        for s in scores:
            for t in (s.score.metadata or {}).get("tasks", []):
                by.setdefault(str(t.get("family")), []).append(float(t.get("score", 0.0)))
        return {f: sum(v) / len(v) for f, v in sorted(by.items())}

    return compute


def _mentor_feedback(run_dir: Path) -> list[str]:
    lines: list[str] = []
    path = run_dir / "trajectory.jsonl"
    if not path.is_file():
        return lines
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "feedback":
            lines += [f"day {rec.get('day')}: {x}" for x in rec.get("lines", [])]
    return lines


@scorer(metrics=[mean(), success_rate(), family_scores()])
def tbsim_scorer() -> Scorer:
    """tbsim's own result for the sample's run: the checkpoint score as the value."""

    async def score(state: TaskState, target: Target) -> Score:
        run = state.metadata.get("tbsim_run_dir")
        result: dict[str, Any] | None = None
        if run:
            # A served session's directory is written just after its MCP session
            # closes; a stdio run's before its process exits.
            for _ in range(100):
                if (Path(run) / "result.json").is_file():
                    result = json.loads((Path(run) / "result.json").read_text())
                    break
                if state.metadata.get("tbsim_session") is None:
                    break
                await anyio.sleep(0.1)
        final = state.metadata.get("tbsim_final")
        if result is None and isinstance(final, dict):
            result = final
        if result is None:
            return Score(
                value=0.0,
                explanation="the run left no result (it did not start or was not written)",
                metadata={"run_dir": run, "success": False, "tasks": []},
            )
        tasks = [
            {
                "key": t.get("key"),
                "title": t.get("title"),
                "family": t.get("family"),
                "score": t.get("score"),
                "success": t.get("success"),
                "passed": t.get("passed"),
                "total": t.get("total"),
            }
            for t in result.get("tasks", [])
        ]
        success = bool(result.get("success", result.get("success_rate", 0.0) >= 1.0))
        feedback = _mentor_feedback(Path(run)) if run else []
        lines = [
            f"checkpoint score {result.get('checkpoint_score')}, "
            f"success rate {result.get('success_rate')}, ended: {result.get('end_reason')}"
        ]
        lines += [f"- {t['title']} ({t['family']}): {t['score']}" for t in tasks]
        if feedback:
            lines += ["Mentor feedback:", *feedback]
        return Score(
            value=float(result.get("checkpoint_score", 0.0)),
            answer=str(result.get("end_reason")),
            explanation="\n".join(lines),
            metadata={
                "run_dir": run,
                "success": success,
                "success_rate": result.get("success_rate"),
                "end_reason": result.get("end_reason"),
                "steps": result.get("steps"),
                "digest": result.get("digest"),
                "tasks": tasks,
                "feedback": feedback,
            },
        )

    return score
