"""The official MCP Python SDK against `/mcp`: the oracle's calls on busy-day, with
nothing logged at warning level or above (no empty SSE events, no failed session
termination), costs in the tool descriptions and the final score in `finish`'s
result."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import warnings
from pathlib import Path
from typing import Any

import pytest
import tbsim
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def oracle_calls(tmp: Path) -> list[tuple[str, dict[str, Any]]]:
    """The oracle's tool calls on busy-day (one per decision), as recorded."""
    subprocess.run(
        [tbsim.binary(), "run", "busy-day", "--agent", "oracle", "--out", str(tmp / "oracle")],
        capture_output=True,
        check=True,
    )
    calls = []
    for line in (tmp / "oracle" / "trajectory.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["type"] == "decision":
            for c in rec["calls"]:
                calls.append((c["name"], json.loads(c["arguments"])))
    return calls


async def play(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    bodies: list[dict[str, Any]] = []
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        init = await session.initialize()
        assert init.instructions is not None and "first tool result" in init.instructions
        tools = (await session.list_tools()).tools
        assert len(tools) > 10
        for t in tools:
            assert t.description is not None
            assert re.search(r"Time cost: \d+ simulated minutes?", t.description), t.name
        for name, args in calls:
            r = await session.call_tool(name, args)
            first = r.content[0]
            assert first.type == "text"
            bodies.append(json.loads(first.text))
    # The briefing comes once, with the first result.
    assert bodies[0]["briefing"]["you"]
    assert all("briefing" not in b for b in bodies[1:])
    return bodies[-1]


def test_the_mcp_sdk_plays_the_oracle_without_warnings(
    server: tbsim.Server, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    calls = oracle_calls(tmp_path)
    assert calls[-1][0] == "finish"
    url = f"{server.url}/mcp?scenario=busy-day&agent=sdk-test"
    with caplog.at_level(logging.DEBUG), warnings.catch_warnings():
        warnings.simplefilter("error")
        last = asyncio.run(play(url, server.token or "", calls))
    noisy = [f"{r.name}: {r.getMessage()}" for r in caplog.records if r.levelno >= logging.WARNING]
    assert noisy == []
    assert last["run_over"] is True and last["end_reason"] == "finished"
    final = last["final"]
    assert final["checkpoint_score"] == 1.0 and final["success"] is True
    assert final["tasks"] and all(t["success"] for t in final["tasks"])
    runs = [
        json.loads((d / "run.json").read_text())
        for d in server.out.iterdir()
        if (d / "run.json").is_file()
    ]
    assert any(r["agent"] == "mcp:sdk-test" for r in runs)
