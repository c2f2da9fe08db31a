"""Inspect AI (`tbsim[inspect]`): the tasks registered through the entry point, run by
Inspect's own CLI and API with its scripted `mockllm/model`.

* `inspect eval tbsim/examples --model mockllm/model`, scripted by a recorded
  oracle batch (`TBSIM_INSPECT_REPLAY`), scores 1.0 on every example, the same
  per-task scores as `tbsim run`, with run directories that replay identically and
  that `tbsim report` reads;
* a model that never calls a tool scores 0 and its sample ends (bounded by
  `max_steps`), each text answer met with tbsim's nudge;
* an unknown tool and bad arguments get tbsim's refusal as a tool error, and the
  model goes on to score 1.0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import tbsim
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage, get_model
from tbsim.inspect import examples, outputs_from_run


@pytest.fixture(scope="module")
def oracle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The oracle's runs of every bundled example (a `tbsim run` batch)."""
    out = tmp_path_factory.mktemp("oracle")
    names = [s.name for s in tbsim.scenarios(suite="examples")]
    subprocess.run(
        [tbsim.binary(), "run", *names, "--agent", "oracle", "--out", str(out)],
        capture_output=True,
        check=True,
    )
    return out


# mockllm counts tokens with tiktoken (a download) unless usage is preset.
def _text(text: str) -> ModelOutput:
    out = ModelOutput.from_content("mockllm/model", text)
    out.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
    return out


def _call(name: str, args: dict[str, Any]) -> ModelOutput:
    out = ModelOutput.for_tool_call("mockllm/model", name, args)
    out.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
    return out


def _one(log: EvalLog) -> Any:
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 1
    return log.samples[0]


def test_inspect_cli_replays_the_oracle_to_one_on_every_example(
    oracle: Path, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    env = {**os.environ, "TBSIM_INSPECT_REPLAY": str(oracle), "INSPECT_LOG_DIR": str(logs)}
    inspect = Path(sys.executable).with_name("inspect")
    done = subprocess.run(
        [str(inspect), "eval", "tbsim/examples", "--model", "mockllm/model",
         "--max-connections", "4", "--display", "none", "--log-format", "json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = sorted(logs.glob("*.json"))
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    assert log.samples is not None
    names = sorted(s.name for s in tbsim.scenarios(suite="examples"))
    assert sorted(str(s.id) for s in log.samples) == names
    runs: set[Path] = set()
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["tbsim_scorer"]
        assert score.value == 1.0, (sample.id, score.explanation)
        meta = score.metadata or {}
        assert meta["success"] is True and meta["end_reason"] == "finished"
        run = Path(meta["run_dir"])
        assert sample.metadata["tbsim_run_dir"] == str(run)
        runs.add(run.parent)
        # The same number as `tbsim run`: both are tbsim's result of the same calls.
        recorded = json.loads((oracle / str(sample.id) / "result.json").read_text())
        assert [t["score"] for t in meta["tasks"]] == [t["score"] for t in recorded["tasks"]]
        replay = subprocess.run(
            [tbsim.binary(), "replay", str(run)], capture_output=True, text=True, check=False
        )
        assert replay.returncode == 0, replay.stdout + replay.stderr
        assert "identical" in replay.stdout.lower(), replay.stdout
        # The transcript is Inspect's: tool calls and their results.
        tools = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
        assert tools and all(m.error is None for m in tools)
        if sample.id == "two-days":
            # A new day starts afresh with tbsim's new-day message and the feedback.
            opening = sample.messages[1].text
            assert "A new working day has started (day 2)" in opening, opening
            assert "checkpoints passed" in opening, opening
    [batch] = runs
    report = subprocess.run(
        [tbsim.binary(), "report", str(batch), "--out", str(tmp_path / "report")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "report" / "report.json").is_file()
    assert log.results is not None
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    assert metrics["mean"] == 1.0 and metrics["success_rate"] == 1.0


def test_a_model_that_never_calls_a_tool_scores_zero_and_ends(tmp_path: Path) -> None:
    texts = (_text("I will think about it.") for _ in range(1000))
    model = get_model("mockllm/model", custom_outputs=texts, memoize=False)
    task = examples(scenarios="busy-day", max_steps=3, runs_dir=str(tmp_path / "runs"))
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    sample = _one(log)
    assert sample.scores["tbsim_scorer"].value == 0.0
    replies = [m for m in sample.messages if m.role == "assistant"]
    assert len(replies) == 3  # max_steps turns for a one-day scenario
    # No call followed the empty turns: they are recorded all the same, and the
    # run ends at its step limit as `tbsim run` would end it, not abandoned.
    result = json.loads((Path(sample.metadata["tbsim_run_dir"]) / "result.json").read_text())
    assert result["empty_turns"] == 3 and result["steps"] == 3, result
    assert result["end_reason"] == "max_steps", result
    nudge = (tbsim.content_dir() / "prompts" / "nudge.md").read_text().strip()
    assert sample.messages[-1].role == "user" and nudge in sample.messages[-1].text


def test_empty_turns_are_recorded_as_tbsim_run_records_them(oracle: Path, tmp_path: Path) -> None:
    talk = [_text("Let me think."), _text("Still thinking.")]
    script = [*talk, *outputs_from_run(oracle / "busy-day")]
    model = get_model("mockllm/model", custom_outputs=script, memoize=False)
    task = examples(scenarios="busy-day", runs_dir=str(tmp_path / "runs"))
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    sample = _one(log)
    assert sample.scores["tbsim_scorer"].value == 1.0
    run = Path(sample.metadata["tbsim_run_dir"])
    result = json.loads((run / "result.json").read_text())
    oracle_result = json.loads((oracle / "busy-day" / "result.json").read_text())
    assert result["empty_turns"] == 2, result
    assert result["steps"] == oracle_result["steps"] + 2
    # The nudges count the empty turns as steps, as the native loop's status does.
    nudges = [m.text for m in sample.messages if m.role == "user"][1:3]
    assert "step 1" in nudges[0] and "step 2" in nudges[1], nudges
    replay = subprocess.run([tbsim.binary(), "replay", str(run)], capture_output=True, text=True)
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_unknown_tools_and_bad_arguments_get_tbsims_refusal(oracle: Path, tmp_path: Path) -> None:
    script = [
        _call("teleport", {"to": "the moon"}),
        _call("read_file", {"no_such_argument": 1}),
        *outputs_from_run(oracle / "busy-day"),
    ]
    model = get_model("mockllm/model", custom_outputs=script, memoize=False)
    task = examples(scenarios="busy-day", runs_dir=str(tmp_path / "runs"))
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    sample = _one(log)
    tools = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    unknown, bad = tools[0], tools[1]
    for m in (unknown, bad):
        assert m.error is not None
        refusal = json.loads(m.error.message)
        assert refusal["ok"] is False and refusal["error"]["kind"], refusal
    assert "teleport" in unknown.error.message  # type: ignore[union-attr]
    assert all(m.error is None for m in tools[2:])
    assert sample.scores["tbsim_scorer"].value == 1.0


def test_http_transport_plays_a_session_of_a_running_server(
    oracle: Path, server: tbsim.Server, tmp_path: Path
) -> None:
    model = get_model(
        "mockllm/model", custom_outputs=outputs_from_run(oracle / "busy-day"), memoize=False
    )
    task = examples(
        scenarios="busy-day",
        transport="http",
        url=server.url,
        token=server.token,
        runs_dir=str(server.out),
    )
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none")
    sample = _one(log)
    score = sample.scores["tbsim_scorer"]
    assert score.value == 1.0, score.explanation
    run = Path(score.metadata["run_dir"])
    assert run.parent == server.out and run.name == sample.metadata["tbsim_session"]
    assert {t["family"] for t in score.metadata["tasks"]} == {
        "kb_fix",
        "meeting_attend",
        "transaction_review",
    }
    replay = subprocess.run(
        [tbsim.binary(), "replay", str(run)], capture_output=True, text=True, check=False
    )
    assert replay.returncode == 0 and "identical" in replay.stdout, replay.stdout


def test_epochs_are_runs_of_their_own(oracle: Path, tmp_path: Path) -> None:
    """`--epochs 3`: three runs, each with its own seed, folder and digest."""
    outputs = [o for _ in range(3) for o in outputs_from_run(oracle / "meeting-only")]
    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False)
    task = examples(scenarios="meeting-only", runs_dir=str(tmp_path / "runs"))
    [log] = inspect_eval(
        task, model=model, epochs=3, max_samples=1, log_dir=str(tmp_path / "logs"), display="none"
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 3
    dirs = {Path(s.scores["tbsim_scorer"].metadata["run_dir"]) for s in log.samples}  # type: ignore[index]
    assert sorted(d.name for d in dirs) == ["trial-0", "trial-1", "trial-2"]
    seeds = {json.loads((d / "run.json").read_text())["sim"]["seed"] for d in dirs}
    digests = {json.loads((d / "result.json").read_text())["digest"] for d in dirs}
    assert len(seeds) == 3 and len(digests) == 3, (seeds, digests)


def test_inspect_calls_a_real_openai_compatible_server(oracle: Path, tmp_path: Path) -> None:
    """`--model openai/...` against an OpenAI-compatible server on 127.0.0.1 (fake-llm
    replaying the oracle's calls): `[inspect]` alone brings what it needs.

    fake-llm answers turn n where the last user message's status line says `step n`,
    as a model reads its progress from the status line tbsim's own agent sends after
    every turn: a solver that left that message out had it replay the first call
    (`wait(until=...)`, refused once the time had passed) until `max_steps`."""
    exe = os.environ.get("TBSIM_FAKE_LLM")
    if not exe:
        # ci.sh gets it from the Rust suite (engine/cli/tests/it/python.rs).
        if os.environ.get("CI"):
            pytest.fail("TBSIM_FAKE_LLM (the fake-llm binary) is needed in CI")
        pytest.skip("TBSIM_FAKE_LLM (the fake-llm binary) is not set")
    trajectory = oracle / "busy-day" / "trajectory.jsonl"
    proc = subprocess.Popen(
        [exe, "--from-trajectory", str(trajectory)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on " in line, line
        base_url = line.split("listening on ", 1)[1].strip()
        logs = tmp_path / "logs"
        env = {**os.environ, "OPENAI_API_KEY": "unused", "OPENAI_BASE_URL": base_url}
        inspect = Path(sys.executable).with_name("inspect")
        done = subprocess.run(
            [str(inspect), "eval", "tbsim/examples", "-T", "scenarios=busy-day",
             "--model", "openai/scripted", "-M", "responses_api=false",
             "--log-dir", str(logs), "--display", "none", "--log-format", "json"],
            capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=300,
        )  # fmt: skip
    finally:
        proc.terminate()
        proc.wait()
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = sorted(logs.glob("*.json"))
    sample = _one(read_eval_log(str(path)))
    score = sample.scores["tbsim_scorer"]
    assert score.value == 1.0, score.explanation
    # With --log-dir and no runs_dir, the runs go beside the log.
    assert Path(score.metadata["run_dir"]).is_relative_to(logs / "tbsim-runs")
    # Each turn's results are followed by the status line counting the calls so far;
    # the notifications are there, not in the tool results.
    steps = [
        int(m.text.split(" · step ", 1)[1].split("\n", 1)[0])
        for m in sample.messages
        if m.role == "user" and m.text.startswith("[System time] ")
    ]
    calls = sum(1 for m in sample.messages if isinstance(m, ChatMessageTool))
    assert steps == list(range(calls)), steps  # the last call ended the run
    assert all('"notifications"' not in m.text for m in sample.messages if m.role == "tool")
