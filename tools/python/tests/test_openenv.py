"""`python -m tbsim.openenv` played by openenv-core's own clients: the oracle's
recorded calls, replayed one `call_tool` a step through `GenericEnvClient`, return
1.0 and leave a run that `tbsim replay` accepts; a policy that never calls a tool
returns 0 and its episode ends; refusals come back to the typed `MCPToolClient` as
tool errors with tbsim's message and the episode goes on. Needs `tbsim[openenv]`;
skipped without openenv-core."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tbsim

pytest.importorskip("openenv.core.env_server")

from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ToolErrorType,
)
from openenv.core.generic_client import GenericEnvClient
from openenv.core.mcp_client import MCPToolClient

SCENARIO = "busy-day"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("openenv-runs")


@pytest.fixture(scope="module")
def url(runs: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tbsim.openenv", "--port", "0", "--out", str(runs)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on " in line, line
        yield line.split("listening on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        # Stopped with SIGTERM, it closes the tbsim server it started (writing to
        # `runs`), rather than leaving it running.
        left = [p for p in _processes_naming(str(runs)) if p != proc.pid]
        assert not left, f"tbsim server(s) {left} outlived python -m tbsim.openenv"


def _processes_naming(text: str) -> list[int]:
    """Live processes whose command line names `text` (Linux /proc)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            found.append(int(d.name))
    return found


def oracle_decisions(scenario: str, tmp: Path) -> list[list[dict[str, Any]]]:
    """The decisions of a recorded oracle run, each a list of calls."""
    out = tmp / "oracle"
    subprocess.run(
        [tbsim.binary(), "run", scenario, "--agent", "oracle", "--out", str(out)],
        capture_output=True,
        check=True,
    )
    decisions = []
    for line in (out / "trajectory.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("type") == "decision":
            decisions.append(
                [
                    {"name": c["name"], "arguments": json.loads(c["arguments"] or "{}")}
                    for c in rec.get("calls") or []
                ]
            )
    assert decisions
    return decisions


EXAMPLES = [s.name for s in tbsim.scenarios(suite="examples")]


@pytest.mark.parametrize("scenario", EXAMPLES)
def test_the_oracle_replayed_through_generic_env_client_returns_one(
    url: str, scenario: str, tmp_path: Path
) -> None:
    decisions = oracle_decisions(scenario, tmp_path)
    with GenericEnvClient(base_url=url, message_timeout_s=120).sync() as env:
        first = env.reset(scenario=scenario)
        assert not first.done
        assert first.observation["briefing"]["you"]
        assert first.observation["text"]
        tools = env.step({"type": "list_tools"})
        names = {t["name"] for t in tools.observation["tools"]}
        assert {c["name"] for d in decisions for c in d} <= names
        assert all("Time cost:" in t["description"] for t in tools.observation["tools"])
        # One call a step (without a thinking cost, splitting a decision's calls
        # changes nothing); a decision without a call is a plain action.
        actions: list[dict[str, Any]] = []
        for d in decisions:
            actions += [
                {"type": "call_tool", "tool_name": c["name"], "arguments": c["arguments"]}
                for c in d
            ] or [{}]
        total = 0.0
        done = False
        for i, action in enumerate(actions):
            assert not done, f"the episode ended before action {i}"
            r = env.step(action)
            total += float(r.reward or 0.0)
            done = r.done
        assert done
        assert total == pytest.approx(1.0)
        state = env.state()
    assert state["score"] == pytest.approx(1.0)
    assert state["result"]["checkpoint_score"] == 1.0
    assert state["end_reason"] == "finished"
    run = Path(state["run_dir"])
    result = json.loads((run / "result.json").read_text())
    assert result["checkpoint_score"] == 1.0 and result["end_reason"] == "finished"
    replay = subprocess.run(
        [tbsim.binary(), "replay", str(run)], capture_output=True, text=True, check=False
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_concurrent_episodes_are_separate_worlds(url: str) -> None:
    a = GenericEnvClient(base_url=url, message_timeout_s=120).sync()
    b = GenericEnvClient(base_url=url, message_timeout_s=120).sync()
    with a, b:
        a.reset(scenario="meeting-only")
        b.reset(scenario="kb-fix-medium", seed=5)
        a.step({})
        sa, sb = a.state(), b.state()
    assert sa["scenario"] == "meeting-only" and sa["step_count"] == 1
    assert sb["scenario"] == "kb-fix-medium" and sb["step_count"] == 0
    assert sa["session"] != sb["session"] and sa["run_dir"] != sb["run_dir"]
    # A client gone mid-run: its run ends as abandoned and is written.
    path = Path(sa["run_dir"]) / "result.json"
    deadline = time.monotonic() + 60
    result: dict[str, Any] = {}
    while not result and time.monotonic() < deadline:
        try:
            result = json.loads(path.read_text())
        except (OSError, ValueError):  # not written yet, or being written
            time.sleep(0.2)
    assert result.get("end_reason") == "abandoned", result


def test_a_policy_that_never_calls_a_tool_returns_zero_and_ends(url: str) -> None:
    with GenericEnvClient(base_url=url, message_timeout_s=120).sync() as env:
        env.reset(scenario=SCENARIO, max_steps=4)
        total, steps, done = 0.0, 0, False
        while not done and steps < 50:
            r = env.step({"metadata": {"text": "I think I am done."}})
            total += float(r.reward or 0.0)
            steps += 1
            done = r.done
        state = env.state()
    assert done and steps == 4
    assert total == 0.0
    assert state["end_reason"] == "max_steps"
    assert state["result"]["checkpoint_score"] == 0.0


async def _refusals(url: str) -> list[CallToolObservation]:
    env = MCPToolClient(base_url=url, message_timeout_s=120)
    async with env:
        await env.reset(scenario=SCENARIO)
        seen = []
        for action in (
            CallToolAction(tool_name="no_such_tool", arguments={}),
            CallToolAction(tool_name="read_file", arguments={"path": 7}),
            CallToolAction(tool_name="my_tasks", arguments={}),
        ):
            r = await env.step(action)
            assert isinstance(r.observation, CallToolObservation)
            assert not r.done
            seen.append(r.observation)
        # The typed client's convenience call reads the same result.
        tasks = await env.call_tool("my_tasks")
        assert tasks["ok"] is True
        state = await env.state()
        assert state.step_count >= 4
    return seen


def test_refusals_come_back_as_tool_errors_and_the_episode_goes_on(url: str) -> None:
    import asyncio

    unknown, bad_args, ok = asyncio.run(_refusals(url))
    assert unknown.error is not None
    assert unknown.error.error_type == ToolErrorType.TOOL_NOT_FOUND
    assert "no_such_tool" in unknown.error.message
    assert unknown.result["error"]["kind"] == "unknown_tool"
    assert bad_args.error is not None
    assert bad_args.error.error_type == ToolErrorType.INVALID_ARGS
    assert bad_args.result["ok"] is False
    assert ok.error is None and ok.result["ok"] is True


def test_reset_names_what_it_refuses(url: str) -> None:
    with GenericEnvClient(base_url=url, message_timeout_s=120).sync() as env:
        with pytest.raises(Exception, match="unknown reset options: colour"):
            env.reset(scenario=SCENARIO, colour="red")
        with pytest.raises(Exception, match="tbsim refused the episode"):
            env.reset(scenario="no-such-scenario")
        with pytest.raises(Exception, match="call reset first"):
            env.step({"type": "call_tool", "tool_name": "my_tasks", "arguments": {}})
        # The catalogue needs no episode.
        tools = env.step({"type": "list_tools"})
        assert tools.observation["tools"]
        # Without a scenario, the server's (`--scenario`, busy-day by default).
        env.reset()
        assert env.state()["scenario"] == SCENARIO
        env.reset(scenario="meeting-only", seed=11)
        state = env.state()
        assert state["scenario"] == "meeting-only" and state["seed"] == 11


# --- the line `tbsim serve` holds (issue #38) ------------------------------------------


def _get(url: str, path: str, headers: dict[str, str]) -> tuple[int, str]:
    """A GET with exactly these headers (Host included), as a browser could send."""
    import http.client
    from urllib.parse import urlsplit

    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname or "", u.port, timeout=30)
    try:
        conn.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for k, v in headers.items():
            conn.putheader(k, v)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, resp.read().decode(errors="replace")
    finally:
        conn.close()


def _ws_status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status of a WebSocket handshake on /ws (101: accepted), sent by hand
    so that the Host can be anything, as a rebinding page's is."""
    import base64
    import os
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(url)
    head = {"Host": u.netloc, **headers}
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /ws HTTP/1.1",
        *(f"{k}: {v}" for k, v in head.items()),
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    with socket.create_connection((u.hostname or "", u.port or 80), timeout=30) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = sock.makefile("rb").readline()
    return int(status.split()[1])


def test_a_rebound_host_is_refused_on_http_and_websocket(url: str) -> None:
    authority = url.split("://", 1)[1]
    assert _get(url, "/health", {"Host": authority})[0] == 200
    assert _get(url, "/health", {"Host": "localhost:1"})[0] == 200
    status, body = _get(url, "/health", {"Host": "attacker.example"})
    assert status == 403 and "bad_host" in body
    # An episode cannot be opened under a rebound name either.
    status, _ = _get(url, "/schema", {"Host": "attacker.example:80"})
    assert status == 403
    assert _ws_status(url, {"Host": "attacker.example"}) == 403


def test_a_cross_origin_websocket_and_request_are_refused(url: str) -> None:
    authority = url.split("://", 1)[1]
    assert _ws_status(url, {}) == 101
    assert _ws_status(url, {"Origin": f"http://{authority}"}) == 101
    for origin in ("http://evil.example", "http://127.0.0.1:1", "null"):
        assert _ws_status(url, {"Origin": origin}) == 403, origin
        status, body = _get(url, "/health", {"Host": authority, "Origin": origin})
        assert status == 403 and "cross_origin" in body
    status, _ = _get(url, "/health", {"Host": authority, "Sec-Fetch-Site": "same-site"})
    assert status == 403


def test_off_loopback_it_wants_a_token_of_its_own(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "TBSIM_OPENENV_TOKEN"}
    cmd = [sys.executable, "-m", "tbsim.openenv", "--port", "0", "--out", str(tmp_path)]
    done = subprocess.run(
        [*cmd, "--host", "0.0.0.0"], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode != 0 and "without a token" in done.stderr
    # With a token (from a file: never on a command line) every request carries it.
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-openenv\n")
    proc = subprocess.Popen(
        [*cmd, "--token-file", str(token_file)], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on " in line, line
        u = line.split("listening on ", 1)[1].strip()
        authority = u.split("://", 1)[1]
        assert _get(u, "/health", {"Host": authority})[0] == 401
        ok = {"Host": authority, "Authorization": "Bearer s3cret-openenv"}
        assert _get(u, "/health", ok)[0] == 200
        assert _ws_status(u, {}) == 403
        assert _ws_status(u, {"Authorization": "Bearer s3cret-openenv"}) == 101
        # The token is on no command line: not the wrapper's, not tbsim serve's.
        for pid in _processes_naming(str(tmp_path)):
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert b"s3cret" not in cmdline and b"--token=" not in cmdline
    finally:
        proc.terminate()
        proc.wait(timeout=60)
