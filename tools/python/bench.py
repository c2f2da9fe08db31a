"""Benches of the Python package against a `tbsim` binary (issue 21 item 5).

    TBSIM_BIN=target/release/tbsim python bench.py [--calls N] > runs/bench/<day>/python.json

Measures: a Gym step's wall time (`TbsimEnv.step`: client, server, parsing) and an
8-env vector step, sync and async (`--steps-only`: just these and the client's;
`--split`: only where a Gym step's time goes, Python and server apart), the
wheel's size (packed around the binary and the family-script host,
`$TBSIM_WHEEL_SCRIPT_HOST` or target/script/release/tbsim-script, as CI packs them, and
that size deflated as maturin would), `import tbsim` time, session-API step latency from
`tbsim.Client` and `tbsim.AsyncClient` (p50/p99) with the server's CPU time per call,
the same for an MCP `tools/call` through the official SDK, and the episode rate of an
8-env `AsyncVectorEnv`. Needs the package importable (installed, or PYTHONPATH) and
`mcp` installed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import tbsim
from tbsim.gym import TbsimEnv

HERE = Path(__file__).resolve().parent
CALL = [{"name": "my_tasks", "arguments": {}}]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def summary(lat: list[float], cpu: float) -> dict[str, float]:
    return {
        "calls": len(lat),
        "p50_us": round(pct(lat, 50) * 1e6, 1),
        "p99_us": round(pct(lat, 99) * 1e6, 1),
        "mean_us": round(statistics.fmean(lat) * 1e6, 1),
        "server_cpu_us_per_call": round(cpu / len(lat) * 1e6, 1),
    }


def wheel_size(binary: str) -> dict[str, int]:
    sys.path.insert(0, str(HERE))
    from wheel_from_binary import build

    host = os.environ.get("TBSIM_WHEEL_SCRIPT_HOST") or str(
        HERE.parent.parent / "target" / "script" / "release" / "tbsim-script"
    )
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build(Path(binary), Path(host), Path(tmp))
        stored = wheel.stat().st_size
        deflated = 0
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                deflated += len(zlib.compress(z.read(info), 6)) + 100
    return {"packed_bytes": stored, "deflated_bytes_estimate": deflated}


def import_time(runs: int = 10) -> dict[str, float]:
    def one(code: str) -> float:
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - t

    base = statistics.median(one("pass") for _ in range(runs))
    tb = statistics.median(one("import tbsim") for _ in range(runs))
    return {
        "import_tbsim_ms": round((tb - base) * 1e3, 1),
        "python_startup_ms": round(base * 1e3, 1),
    }


def timed(n: int, pid: int, f: Callable[[], Any]) -> dict[str, float]:
    lat = []
    cpu0 = cpu_seconds(pid)
    for _ in range(n):
        t = time.perf_counter()
        f()
        lat.append(time.perf_counter() - t)
    return summary(lat, cpu_seconds(pid) - cpu0)


def sync_steps(server: tbsim.Server, pid: int, n: int) -> dict[str, float]:
    with tbsim.Client(server.url, server.token) as c:
        sid = c.create("busy-day", agent="bench", max_steps=1_000_000).session
        for _ in range(20):  # warm up
            c.step(sid, CALL)
        out = timed(n, pid, lambda: c.step(sid, CALL))
        c.delete(sid)
    return out


async def async_steps(server: tbsim.Server, pid: int, n: int) -> dict[str, float]:
    async with tbsim.AsyncClient(server.url, server.token) as c:
        sid = (await c.create("busy-day", agent="bench", max_steps=1_000_000)).session
        for _ in range(20):
            await c.step(sid, CALL)
        lat = []
        cpu0 = cpu_seconds(pid)
        for _ in range(n):
            t = time.perf_counter()
            await c.step(sid, CALL)
            lat.append(time.perf_counter() - t)
        cpu = cpu_seconds(pid) - cpu0
        await c.delete(sid)
    return summary(lat, cpu)


async def mcp_calls(server: tbsim.Server, pid: int, n: int) -> dict[str, float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {server.token}"} if server.token else {}
    url = f"{server.url}/mcp?scenario=busy-day&max_steps=1000000&agent=bench"
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(20):
            await session.call_tool("my_tasks", {})
        lat = []
        cpu0 = cpu_seconds(pid)
        for _ in range(n):
            t = time.perf_counter()
            await session.call_tool("my_tasks", {})
            lat.append(time.perf_counter() - t)
        cpu = cpu_seconds(pid) - cpu0
    return summary(lat, cpu)


def gym_steps(server: tbsim.Server, n: int) -> dict[str, float]:
    """One `TbsimEnv.step` (the client, the server and the observation's parsing),
    wall time, with the server's CPU per step."""
    env = TbsimEnv(
        scenario="busy-day", base_url=server.url, token=server.token, max_steps=1_000_000
    )
    env.reset(seed=0)
    action = tuple(CALL)
    for _ in range(20):
        env.step(action)
    out = timed(n, server._proc.pid, lambda: env.step(action))
    env.close()
    return out


def vector_steps(server: tbsim.Server, n: int, mode: str) -> dict[str, float]:
    """An 8-env vector step (each env one `my_tasks`), sync or async: wall time per
    vector step and per env-step."""

    def make() -> TbsimEnv:
        return TbsimEnv(
            scenario="busy-day", base_url=server.url, token=server.token, max_steps=1_000_000
        )

    envs: gymnasium.vector.VectorEnv = (
        gymnasium.vector.AsyncVectorEnv([make] * 8, shared_memory=False)
        if mode == "async"
        else gymnasium.vector.SyncVectorEnv([make] * 8)
    )
    action = tuple(tuple(CALL) for _ in range(8))
    envs.reset(seed=0)
    for _ in range(10):
        envs.step(action)
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        envs.step(action)
        lat.append(time.perf_counter() - t)
    envs.close()
    return {
        "envs": 8,
        "vector_steps": n,
        "p50_us": round(pct(lat, 50) * 1e6, 1),
        "per_env_step_us": round(statistics.fmean(lat) / 8 * 1e6, 1),
        "env_steps_per_s": round(8 * n / sum(lat), 1),
    }


def vector_rate(server: tbsim.Server, rounds: int, steps: int) -> dict[str, float]:
    def make() -> TbsimEnv:
        return TbsimEnv(scenario="busy-day", base_url=server.url, token=server.token)

    envs = gymnasium.vector.AsyncVectorEnv([make] * 8, shared_memory=False)
    wait = tuple(({"name": "my_tasks", "arguments": {}},) for _ in range(8))
    finish = tuple(({"name": "finish", "arguments": {}},) for _ in range(8))
    envs.reset(seed=0)
    t = time.perf_counter()
    for _ in range(rounds):
        for _s in range(steps):
            envs.step(wait)
        # Ends each episode; the vector env resets it on the next step (autoreset).
        envs.step(finish)
        envs.step(wait)
    dt = time.perf_counter() - t
    envs.close()
    episodes = 8 * rounds
    return {
        "envs": 8,
        "episodes": episodes,
        "steps_per_episode": steps + 2,
        "episodes_per_s": round(episodes / dt, 2),
        "env_steps_per_s": round(episodes * (steps + 2) / dt, 1),
    }


def context_switches(pid: int) -> int:
    """Voluntary context switches of all of a process's threads so far (Linux)."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        try:
            text = status.read_text()
        except FileNotFoundError:  # a thread that ended meanwhile
            continue
        for line in text.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def step_split(server: tbsim.Server, n: int) -> dict[str, float]:
    """Where a Gym step's time goes, per step: the Gym step's wall time; the Python
    package's own part (the same step with the last answer handed back instead of
    sent: request, `json.loads`, the observation's parse); the HTTP round trip of
    the lean connection alone; the CPU time of this process (Python and its socket
    calls) and of the server; the server's sleeps (voluntary context switches: one
    a step is waiting for the next request)."""
    pid = server._proc.pid
    env = TbsimEnv(
        scenario="busy-day", base_url=server.url, token=server.token, max_steps=1_000_000
    )
    env.reset(seed=0)
    action = tuple(CALL)
    for _ in range(20):
        env.step(action)
    lat, rtt = [], []
    cpu0, own0, sw0 = cpu_seconds(pid), time.process_time(), context_switches(pid)
    for _ in range(n):
        t = time.perf_counter()
        env.step(action)
        lat.append(time.perf_counter() - t)
    cpu, own = cpu_seconds(pid) - cpu0, time.process_time() - own0
    switches = context_switches(pid) - sw0
    # A new session for the round trips: busy-day's day ends after about 500 steps.
    env.reset(seed=0)
    conn = env._client._conn
    path = f"/v1/sessions/{env.session}/step"
    body = json.dumps({"tool_calls": CALL}, separators=(",", ":")).encode()
    for _ in range(20):
        answer = conn.request("POST", path, body)
    for _ in range(n):
        t = time.perf_counter()
        answer = conn.request("POST", path, body)
        rtt.append(time.perf_counter() - t)
    real = conn.request
    conn.request = lambda *_: answer  # type: ignore[method-assign]
    py = []
    for _ in range(n):
        t = time.perf_counter()
        env.step(action)
        py.append(time.perf_counter() - t)
    conn.request = real  # type: ignore[method-assign]
    env.close()
    return {
        "steps": n,
        "gym_step_p50_us": round(pct(lat, 50) * 1e6, 1),
        "python_only_step_p50_us": round(pct(py, 50) * 1e6, 1),
        "round_trip_p50_us": round(pct(rtt, 50) * 1e6, 1),
        "client_process_cpu_us_per_step": round(own / n * 1e6, 1),
        "server_cpu_us_per_step": round(cpu / n * 1e6, 1),
        "server_sleeps_per_step": round(switches / n, 2),
        "answer_bytes": len(answer[1]),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    # Each `my_tasks` costs simulated time: busy-day's day ends after about 500 of
    # them (and its session with it), warm-up included.
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps-only", action="store_true", help="only the step timings")
    ap.add_argument("--split", action="store_true", help="only where a Gym step's time goes")
    a = ap.parse_args()
    binary = tbsim.binary()
    out: dict[str, Any] = {
        "binary": binary,
        "load_avg_start": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    if not (a.steps_only or a.split):
        out["wheel"] = wheel_size(binary)
        out["import"] = import_time()
    if a.split:
        with tempfile.TemporaryDirectory() as tmp, tbsim.Server(out=tmp) as server:
            out["split"] = step_split(server, a.calls)
        out["load_avg_end"] = os.getloadavg()
        json.dump(out, sys.stdout, indent=2)
        print()
        return
    with tempfile.TemporaryDirectory() as tmp, tbsim.Server(out=tmp, max_sessions=16) as server:
        pid = server._proc.pid
        out["session_api_sync"] = sync_steps(server, pid, a.calls)
        out["gym_step"] = gym_steps(server, a.calls)
        out["vector_step_sync"] = vector_steps(server, max(50, a.calls // 8), "sync")
        out["vector_step_async"] = vector_steps(server, max(50, a.calls // 8), "async")
        if not a.steps_only:
            out["session_api_async"] = asyncio.run(async_steps(server, pid, a.calls))
            out["mcp_sdk"] = asyncio.run(mcp_calls(server, pid, a.calls))
            out["async_vector_env"] = vector_rate(server, a.rounds, 10)
    out["load_avg_end"] = os.getloadavg()
    json.dump(out, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
