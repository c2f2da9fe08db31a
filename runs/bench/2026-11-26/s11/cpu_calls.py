"""Per-call server CPU split into user and system time, for the session API (sync,
async) and MCP (official SDK), against $TBSIM_BIN."""
import asyncio, os, sys, time, json
sys.path.insert(0, "/work/main/tools/python/python")
import tbsim
CALL = [{"name": "my_tasks", "arguments": {}}]
TICK = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) / TICK, int(f[12]) / TICK

def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
out = {}
with tbsim.Server(max_sessions=4) as server:
    pid = server._proc.pid
    out["threads"] = threads(pid)
    with tbsim.Client(server.url, server.token) as c:
        sid = c.create("busy-day", agent="bench", max_steps=1_000_000).session
        for _ in range(20): c.step(sid, CALL)
        u0, s0 = cpu(pid); t = time.perf_counter()
        for _ in range(n): c.step(sid, CALL)
        u1, s1 = cpu(pid); out["session_sync"] = dict(user_us=(u1-u0)/n*1e6, sys_us=(s1-s0)/n*1e6, wall_us=(time.perf_counter()-t)/n*1e6)
        c.delete(sid)
    async def a():
        async with tbsim.AsyncClient(server.url, server.token) as c:
            sid = (await c.create("busy-day", agent="bench", max_steps=1_000_000)).session
            for _ in range(20): await c.step(sid, CALL)
            u0, s0 = cpu(pid); t = time.perf_counter()
            for _ in range(n): await c.step(sid, CALL)
            u1, s1 = cpu(pid); out["session_async"] = dict(user_us=(u1-u0)/n*1e6, sys_us=(s1-s0)/n*1e6, wall_us=(time.perf_counter()-t)/n*1e6)
            await c.delete(sid)
    asyncio.run(a())
    async def m():
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        url = f"{server.url}/mcp?scenario=busy-day&max_steps=1000000&agent=bench"
        async with (create_mcp_http_client() as http, streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session):
            await session.initialize()
            for _ in range(20): await session.call_tool("my_tasks", {})
            u0, s0 = cpu(pid); t = time.perf_counter()
            for _ in range(n): await session.call_tool("my_tasks", {})
            u1, s1 = cpu(pid); out["mcp"] = dict(user_us=(u1-u0)/n*1e6, sys_us=(s1-s0)/n*1e6, wall_us=(time.perf_counter()-t)/n*1e6)
    asyncio.run(m())
    out["threads_end"] = threads(pid)
print(json.dumps(out, indent=1))
