import pytest

gym = pytest.importorskip("gymnasium")

from tbsim_client import TbsimEnv  # noqa: E402


def test_the_env_resets_steps_and_ends(server):
    env = TbsimEnv(server["url"], token=server["token"])
    obs, info = env.reset(seed=3, options={"scenario": "meeting-only"})
    assert "You are" in obs["text"] and info["score"] == 0.0
    assert env.action_space.contains([{"name": "wait", "arguments": {"minutes": 5}}])
    obs, reward, terminated, truncated, info = env.step([{"name": "wait", "arguments": {"minutes": 5}}])
    assert isinstance(reward, float) and not terminated and not truncated
    assert "wait" in obs["text"]
    obs, reward, terminated, truncated, info = env.step('[{"name": "finish", "arguments": {}}]')
    assert terminated and not truncated and info["end_reason"] == "finished"
    assert "over" in env.render()
    # A new episode opens a new session (the old one is deleted).
    first = info["session"]
    _, info = env.reset(options={"scenario": "busy-day", "max_steps": 1})
    assert info["session"] != first
    _, _, terminated, truncated, info = env.step([])
    assert truncated and not terminated and info["end_reason"] == "max_steps"
    env.close()
