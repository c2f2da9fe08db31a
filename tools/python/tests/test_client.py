from __future__ import annotations

import asyncio
import json
import os
import subprocess

import pytest
import tbsim


def test_the_binary_and_content_are_installed_with_the_package() -> None:
    assert (tbsim.content_dir() / "scenarios" / "busy-day.ron").is_file()
    assert (tbsim.content_dir() / "suites" / "traineebench.ron").is_file()
    assert (tbsim.content_dir() / "prompts" / "system.md").is_file()
    if "TBSIM_BIN" not in os.environ:
        assert os.path.dirname(tbsim.binary()).endswith(("bin", "Scripts"))


def test_scenarios_by_name() -> None:
    examples = tbsim.scenarios("examples")
    names = [s.name for s in examples]
    assert "busy-day" in names and "two-days" in names
    two = next(s for s in examples if s.name == "two-days")
    assert two.days == 2 and two.suite == "examples" and two.families
    assert len(tbsim.scenarios("traineebench-cl")) == 50
    with pytest.raises(ValueError, match="no suite `nope`"):
        tbsim.scenarios("nope")


def test_run_by_name_scores_one(tmp_path: object) -> None:
    done = subprocess.run(
        [tbsim.binary(), "run", "busy-day", "--agent", "oracle", "--json", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout)["checkpoint_score"] == 1.0


def test_a_session_runs_to_its_end_and_writes_its_run(
    client: tbsim.Client, server: tbsim.Server
) -> None:
    created = client.create("meeting-only", agent="pytest", seed=7)
    sid = created.session
    assert len(sid) == 32 and created.observation["briefing"]["you"]
    out = client.step(sid, [{"name": "list_colleagues", "arguments": {}}])
    total = out.reward
    assert out.observation["results"][0]["tool"] == "list_colleagues"
    assert not out.terminated and not out.truncated
    out = client.step(sid, [{"name": "finish", "arguments": "{}"}])
    total += out.reward
    assert out.terminated and not out.truncated and out.info["end_reason"] == "finished"
    state = client.state(sid)
    assert state["finished"] and state["agent"] == "http:pytest" and state["seed"] == 7
    assert abs(state["result"]["checkpoint_score"] - total) < 1e-9
    with pytest.raises(tbsim.ApiError) as e:
        client.step(sid, [{"name": "finish"}])
    assert e.value.status == 409 and e.value.code == "session_over"
    client.delete(sid)
    run = server.out / sid
    result = json.loads((run / "result.json").read_text())
    assert result["agent"] == "http:pytest" and result["end_reason"] == "finished"
    assert (run / "trajectory.jsonl").is_file() and (run / "scenario.ron").is_file()


def test_deleting_a_live_session_truncates_it(client: tbsim.Client) -> None:
    sid = client.create("busy-day").session
    final = client.delete(sid)
    assert final["finished"] and final["truncated"] and not final["terminated"]
    assert final["result"]["end_reason"] == "abandoned"
    # Deleted, it stays readable with its final result, per task (--keep-finished).
    assert client.state(sid) == final
    assert final["result"]["tasks"] and "score" in final["result"]["tasks"][0]
    with pytest.raises(tbsim.ApiError) as e:
        client.delete(sid)
    assert e.value.status == 404 and e.value.code == "unknown_session"


def test_errors_are_typed(client: tbsim.Client, server: tbsim.Server) -> None:
    for name, status, code in [
        ("no-such-scenario", 404, "unknown_scenario"),
        ("../etc/passwd", 400, "bad_scenario_name"),
    ]:
        with pytest.raises(tbsim.ApiError) as e:
            client.create(name)
        assert (e.value.status, e.value.code) == (status, code)
    with tbsim.Client(server.url, token="wrong") as bad, pytest.raises(tbsim.ApiError) as e:
        bad.tools()
    assert e.value.status == 401 and e.value.code == "unauthorized"
    with pytest.raises(TypeError, match="unknown session options: colour"):
        client.create("busy-day", colour="red")


def test_tools_scenarios_and_openapi(client: tbsim.Client) -> None:
    names = [t["name"] for t in client.tools()]
    assert "finish" in names and "send_message" in names
    assert next(s["name"] for s in client.scenarios("examples")) == "busy-day"
    doc = client.openapi()
    assert doc["openapi"] == "3.1.0" and "/v1/scenarios" in doc["paths"]


def test_the_async_client_plays_sessions_concurrently(server: tbsim.Server) -> None:
    async def one(c: tbsim.AsyncClient, seed: int) -> float:
        created = await c.create("meeting-only", seed=seed, agent="async")
        out = await c.step(created.session, [{"name": "finish", "arguments": {}}])
        assert out.terminated
        state = await c.delete(created.session)
        return float(state["result"]["checkpoint_score"])

    async def main() -> list[float]:
        async with tbsim.AsyncClient(server.url, token=server.token) as c:
            assert "wait" in [t["name"] for t in await c.tools()]
            return await asyncio.gather(*(one(c, s) for s in range(4)))

    assert asyncio.run(main()) == [0.0] * 4


def test_the_server_stops_and_writes_open_sessions(tmp_path: object) -> None:
    with tbsim.Server(out=str(tmp_path)) as s, tbsim.Client(s.url) as c:
        sid = c.create("meeting-only").session
    assert not s.running
    result = json.loads((s.out / sid / "result.json").read_text())
    assert result["end_reason"] == "abandoned"


def test_a_token_that_starts_with_a_hyphen_is_a_value(tmp_path: object) -> None:
    # A random URL-safe token starts with "-" one time in 64 (`tbsim.openenv`'s
    # does); passed as `--token -x…`, tbsim took it for an unknown flag.
    with tbsim.Server(out=str(tmp_path), token="-lEading-hyphen") as s:
        with tbsim.Client(s.url, token="-lEading-hyphen") as c:
            sid = c.create("meeting-only").session
    assert (s.out / sid / "result.json").is_file()
