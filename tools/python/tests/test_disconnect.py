"""An MCP client (the official SDK) that dies without saying goodbye: its session is
closed within seconds, not at the idle timeout, its run is written as abandoned and
stays readable through the session API with its tag."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import tbsim

# A client in its own process: it plays one call, says so, then waits to be killed.
CLIENT = """
import asyncio, sys
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

async def main(url: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.call_tool("list_colleagues", {})
        print("called", flush=True)
        await asyncio.sleep(3600)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def run_tagged(out: Path, tag: str) -> str:
    """The session id (run directory name) of the run recorded with `tag`."""
    for run in sorted(out.iterdir()):
        f = run / "run.json"
        if f.is_file() and json.loads(f.read_text()).get("tag") == tag:
            return run.name
    raise AssertionError(f"no run tagged {tag}")


def test_a_killed_mcp_client_frees_its_session_at_once(
    server: tbsim.Server, client: tbsim.Client
) -> None:
    tag = f"killed-{time.monotonic_ns()}"
    url = f"{server.url}/mcp?scenario=meeting-only&agent=sdk-killed&tag={tag}"
    proc = subprocess.Popen(
        [sys.executable, "-c", CLIENT, url, server.token or ""],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "called"
        sid = run_tagged(server.out, tag)
        assert not client.state(sid)["finished"]
    finally:
        proc.kill()
        proc.wait()
    gone = time.monotonic()
    while True:
        state = client.state(sid)
        if state.get("result"):
            break
        # The idle timeout is minutes; the stream closing ends it in seconds.
        assert time.monotonic() - gone < 15, state
        time.sleep(0.1)
    assert state["finished"] and state["truncated"]
    assert state["result"]["end_reason"] == "abandoned"
    assert state["agent"] == "mcp:sdk-killed" and state["tag"] == tag
    result = json.loads((server.out / sid / "result.json").read_text())
    assert result["end_reason"] == "abandoned" and result["steps"] == 1
