import json

import pytest

from tbsim_client import ApiError, Client


def client(server):
    return Client(server["url"], token=server["token"])


def test_a_session_runs_to_its_end_and_writes_its_run(server):
    c = client(server)
    created = c.create("meeting-only", agent="pytest", seed=7)
    sid = created["session"]
    assert len(sid) == 32
    assert created["observation"]["briefing"]["you"]
    total = 0.0
    out = c.step(sid, [{"name": "list_colleagues", "arguments": {}}])
    total += out["reward"]
    assert out["observation"]["results"][0]["tool"] == "list_colleagues"
    assert not out["terminated"] and not out["truncated"]
    out = c.step(sid, [{"name": "finish", "arguments": "{}"}])
    total += out["reward"]
    assert out["terminated"] and not out["truncated"]
    assert out["info"]["end_reason"] == "finished"
    state = c.state(sid)
    assert state["finished"] and state["agent"] == "http:pytest" and state["seed"] == 7
    assert abs(state["result"]["checkpoint_score"] - total) < 1e-9
    with pytest.raises(ApiError) as e:
        c.step(sid, [{"name": "finish"}])
    assert e.value.status == 409 and e.value.code == "session_over"
    c.delete(sid)
    run = server["out"] / sid
    result = json.loads((run / "result.json").read_text())
    assert result["agent"] == "http:pytest" and result["end_reason"] == "finished"
    assert json.loads((run / "run.json").read_text())["agent"] == "http:pytest"
    assert (run / "trajectory.jsonl").is_file() and (run / "scenario.ron").is_file()


def test_deleting_a_live_session_truncates_it(server):
    c = client(server)
    sid = c.create("busy-day")["session"]
    final = c.delete(sid)
    assert final["finished"] and final["truncated"] and not final["terminated"]
    assert final["result"]["end_reason"] == "abandoned"
    with pytest.raises(ApiError) as e:
        c.state(sid)
    assert e.value.status == 404 and e.value.code == "unknown_session"


def test_errors_are_json(server):
    c = client(server)
    for name, status, code in [("no-such-scenario", 404, "unknown_scenario"),
                               ("../etc/passwd", 400, "bad_scenario_name")]:
        with pytest.raises(ApiError) as e:
            c.create(name)
        assert (e.value.status, e.value.code) == (status, code)
    with pytest.raises(ApiError) as e:
        Client(server["url"], token="wrong").tools()
    assert e.value.status == 401 and e.value.code == "unauthorized"


def test_tools_and_openapi(server):
    c = client(server)
    names = [t["name"] for t in c.tools()]
    assert "finish" in names and "send_message" in names
    doc = c.openapi()
    assert doc["openapi"] == "3.1.0" and "/v1/sessions/{id}/step" in doc["paths"]
