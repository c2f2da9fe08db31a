"""Drives N `my_tasks` calls over the session API (sync client) or MCP (official SDK)
against a server started by $TBSIM_BIN (a callgrind wrapper), then stops it."""
import asyncio, sys, os
sys.path.insert(0, "/work/main/tools/python/python")
import tbsim

mode, n = sys.argv[1], int(sys.argv[2])
CALL = [{"name": "my_tasks", "arguments": {}}]

async def mcp_calls(server, n):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    url = f"{server.url}/mcp?scenario=busy-day&max_steps=1000000&agent=bench"
    async with (
        create_mcp_http_client() as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(n):
            await session.call_tool("my_tasks", {})

with tbsim.Server(max_sessions=4, startup_timeout=600) as server:
    if mode == "session":
        with tbsim.Client(server.url, server.token) as c:
            sid = c.create("busy-day", agent="bench", max_steps=1_000_000).session
            for _ in range(n):
                c.step(sid, CALL)
            c.delete(sid)
    elif mode == "async":
        async def run():
            async with tbsim.AsyncClient(server.url, server.token) as c:
                sid = (await c.create("busy-day", agent="bench", max_steps=1_000_000)).session
                for _ in range(n):
                    await c.step(sid, CALL)
                await c.delete(sid)
        asyncio.run(run())
    else:
        asyncio.run(mcp_calls(server, n))
print("done", mode, n)
