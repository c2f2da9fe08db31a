"""`vf-eval traineebench` (the real verifiers CLI) against scripted models: the repo's
`fake-llm` replaying the oracle's calls scores 1.0; a model that never calls a tool
scores 0 and the rollout ends; an unknown tool and bad arguments reach the model as
tbsim's refusals and the rollout goes on. Needs `tbsim[verifiers]` and
`$TBSIM_FAKE_LLM` (the fake-llm binary); skipped without verifiers."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import tbsim

pytest.importorskip("verifiers.v1")


def fake_llm(args: list[str]) -> Iterator[str]:
    exe = os.environ.get("TBSIM_FAKE_LLM")
    if not exe:
        pytest.fail("TBSIM_FAKE_LLM (the fake-llm binary) is needed for the verifiers tests")
    proc = subprocess.Popen([exe, *args], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on " in line, line
        yield line.split("listening on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait()


def vf_eval(base_url: str, tmp: Path, *extra: str) -> dict[str, Any]:
    """Runs `vf-eval traineebench` on busy-day and returns its one trace."""
    out = tmp / "vf"
    done = subprocess.run(
        [
            "vf-eval",
            "traineebench",
            "--model",
            "scripted",
            "--client.base-url",
            base_url,
            "--client.api-key-var",
            "TBSIM_TEST_KEY",
            "--env.taskset.scenarios",
            '["busy-day"]',
            "--env.taskset.out",
            str(tmp / "runs"),
            "--no-push",
            "--no-rich",
            "-o",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TBSIM_TEST_KEY": "unused"},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [traces] = list(out.glob("*/traces.jsonl"))
    [episode] = [json.loads(line) for line in traces.read_text().splitlines()]
    [trace] = episode["traces"]
    assert trace["errors"] == [], trace["errors"]
    return dict(trace)


def test_vf_eval_of_the_oracle_replay_scores_one(tmp_path: Path) -> None:
    oracle = tmp_path / "oracle"
    subprocess.run(
        [tbsim.binary(), "run", "busy-day", "--agent", "oracle", "--out", str(oracle)],
        capture_output=True,
        check=True,
    )
    for url in fake_llm(["--from-trajectory", str(oracle / "trajectory.jsonl")]):
        trace = vf_eval(url, tmp_path)
    assert trace["rewards"]["checkpoint_score"]["score"] == 1.0
    assert trace["metrics"]["success"] == 1.0
    run = Path(trace["info"]["tbsim"]["run_dir"])
    result = json.loads((run / "result.json").read_text())
    assert result["checkpoint_score"] == 1.0 and result["end_reason"] == "finished"
    # The oracle's decisions, one model turn each.
    oracle_result = json.loads((oracle / "result.json").read_text())
    assert result["steps"] == oracle_result["steps"] == trace["info"]["tbsim"]["turns"]


def test_refusals_reach_the_model_as_tool_errors_and_the_rollout_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [
                [{"name": "no_such_tool", "arguments": "{}"}],
                [{"name": "read_file", "arguments": '{"path": '}],
                [{"name": "my_tasks", "arguments": "{}"}],
            ]
        )
    )
    for url in fake_llm(["--script", str(script)]):
        trace = vf_eval(url, tmp_path)
    result = json.loads((Path(trace["info"]["tbsim"]["run_dir"]) / "result.json").read_text())
    assert result["errors"] == {"malformed_json": 1, "unknown_tool": 1}
    assert result["end_reason"] == "finished"  # fake-llm's `finish` after the script
    assert result["tool_calls"] == 4
    assert trace["rewards"]["checkpoint_score"]["score"] == result["checkpoint_score"]
    assert trace["metrics"]["success"] == 0.0


class _TextOnly(BaseHTTPRequestHandler):
    """An OpenAI-compatible model that answers every request in text."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "text-only",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "I am done, I think."},
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_model_that_never_calls_a_tool_scores_zero_and_ends(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TextOnly)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        trace = vf_eval(url, tmp_path, "--env.taskset.max-steps", "4")
    finally:
        server.shutdown()
    assert trace["rewards"]["checkpoint_score"]["score"] == 0.0
    result = json.loads((Path(trace["info"]["tbsim"]["run_dir"]) / "result.json").read_text())
    assert result["end_reason"] == "max_steps" and result["tool_calls"] == 0
    assert trace["info"]["tbsim"]["turns"] == 4
