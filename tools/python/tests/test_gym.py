from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import pytest
import tbsim
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env
from tbsim.gym import TbsimEnv, ToolCalls


def make(server: tbsim.Server, **kw: Any) -> Any:
    return gymnasium.make("tbsim/Examples-v0", base_url=server.url, token=server.token, **kw)


def unfinished(out: Path) -> list[str]:
    """Run directories of sessions still open (no result written yet)."""
    return [d.name for d in out.iterdir() if d.is_dir() and not (d / "result.json").exists()]


def test_ids_are_registered_per_suite() -> None:
    for name in ("TraineeBench-v0", "TraineeBench-CL-v0", "TraineeBench-Plus-v0", "Examples-v0"):
        assert f"tbsim/{name}" in gymnasium.registry


def test_check_env_passes_without_warnings_or_leaks(server: tbsim.Server) -> None:
    env = make(server, scenario="meeting-only")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()
    assert unfinished(server.out) == []


def test_reset_seeds_per_gymnasium(server: tbsim.Server) -> None:
    env = make(server, scenario="meeting-only")
    _, a = env.reset(seed=5)
    assert a["seed"] == 5 and a["scenario"] == "meeting-only"
    _, b = env.reset()
    _, c = env.reset()
    assert b["seed"] != c["seed"] and b["seed"] != 558448
    # The same seed replays the same draws.
    _, d = env.reset(seed=5)
    _, e = env.reset()
    assert e["seed"] == b["seed"] and d["seed"] == 5
    env.close()


def test_a_suite_env_draws_its_scenarios(server: tbsim.Server) -> None:
    env = make(server)
    seen = {env.reset(seed=s)[1]["scenario"] for s in range(12)}
    assert len(seen) > 1 and seen <= {s.name for s in tbsim.scenarios("examples")}
    env.close()


def test_observations_are_parsed_and_contained(server: tbsim.Server) -> None:
    env = make(server, scenario="meeting-only")
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert obs["briefing"][0]["you"] and "You are" in obs["text"]
    obs, _reward, _terminated, _truncated, _ = env.step(
        ({"name": "list_colleagues", "arguments": {}},)
    )
    assert env.observation_space.contains(obs)
    assert obs["results"][0]["tool"] == "list_colleagues" and obs["results"][0]["ok"] == 1
    assert '"colleagues"' in obs["results"][0]["content"]
    env.close()


def test_the_action_space_compares_and_samples_every_tool(server: tbsim.Server) -> None:
    env = make(server, scenario="meeting-only")
    space = env.action_space
    assert isinstance(space, ToolCalls)
    with tbsim.Client(server.url, server.token) as c:
        assert space == ToolCalls(c.tools())
    space.seed(0)
    drawn = {space.sample()[0]["name"] for _ in range(400)}
    assert drawn == {n for n, _ in space.tools}
    for _ in range(50):
        assert space.contains(space.sample())
    assert not space.contains([{"name": "no_such_tool", "arguments": {}}])
    env.close()


def test_a_step_after_the_end_needs_a_reset(server: tbsim.Server) -> None:
    env = make(server, scenario="meeting-only")
    env.reset(seed=2)
    _, _, terminated, _, _ = env.step(({"name": "finish", "arguments": {}},))
    assert terminated
    with pytest.raises(ResetNeeded):
        env.unwrapped.step(({"name": "wait", "arguments": {}},))
    env.reset(seed=3)
    env.close()
    assert unfinished(server.out) == []


def _episode(envs: gymnasium.vector.VectorEnv) -> None:
    envs.reset(seed=0)  # env i gets seed i
    done = [False] * 8
    for _ in range(3):
        _, _, term, trunc, _ = envs.step(
            tuple(({"name": "finish", "arguments": {}},) for _ in range(8))
        )
        done = [d or t or u for d, t, u in zip(done, term, trunc, strict=True)]
    assert all(done)
    envs.close()


def test_vector_envs_run_eight(server: tbsim.Server) -> None:
    fns = [lambda: TbsimEnv(scenario="meeting-only", base_url=server.url, token=server.token)] * 8
    _episode(gymnasium.vector.SyncVectorEnv(fns))
    _episode(gymnasium.vector.AsyncVectorEnv(fns, shared_memory=False))
    assert unfinished(server.out) == []


def test_make_without_a_server_starts_one() -> None:
    env = gymnasium.make("tbsim/TraineeBench-v0")
    _, info = env.reset(seed=0)
    assert info["scenario"].startswith("traineebench-")
    env.close()


def test_make_refuses_an_unknown_scenario(server: tbsim.Server) -> None:
    with pytest.raises(ValueError, match=r"unknown scenario .busy-dya.*busy-day"):
        make(server, scenario="busy-dya")


def test_a_lone_call_and_a_bad_seed_get_clear_errors(server: tbsim.Server) -> None:
    env = make(server, scenario="meeting-only")
    env.reset(seed=1)
    with pytest.raises(TypeError, match="tuple of tool calls"):
        env.unwrapped.step({"name": "finish", "arguments": {}})
    for bad, kind in ((2**70, ValueError), (-1, ValueError), ("3", TypeError), (1.5, TypeError)):
        with pytest.raises(kind, match="seed"):
            env.unwrapped.reset(seed=bad)
    env.close()


def test_out_keeps_runs_and_info_names_them(tmp_path: Path) -> None:
    env = gymnasium.make("tbsim/Examples-v0", scenario="meeting-only", out=tmp_path / "runs")
    _, info = env.reset(seed=4)
    run = Path(info["run_dir"])
    assert run.parent == (tmp_path / "runs").resolve() and run.name == info["session"]
    assert Path(info["log"]).is_file()
    _, _, terminated, _, _ = env.step(({"name": "finish", "arguments": {}},))
    assert terminated and (run / "result.json").is_file()
    env.close()
    tbsim.gym._close_shared()
    # Kept after the server stopped, and it replays.
    done = subprocess.run(
        [tbsim.binary(), "replay", str(run)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_compressed_runs_are_zstd_and_replay_unchanged(tmp_path: Path) -> None:
    env = gymnasium.make(
        "tbsim/Examples-v0", scenario="busy-day", out=tmp_path / "runs", compress=True
    )
    _, info = env.reset(seed=4)
    run = Path(info["run_dir"])
    _, _, terminated, _, _ = env.step(({"name": "finish", "arguments": {}},))
    assert terminated and (run / "result.json").is_file()
    env.close()
    tbsim.gym._close_shared()
    assert not (run / "trajectory.jsonl").exists()
    assert (run / "trajectory.jsonl.zst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    done = subprocess.run(
        [tbsim.binary(), "replay", str(run)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with pytest.raises(TypeError, match="compress"):
        tbsim.Client("http://127.0.0.1:9", None).create("busy-day", compress="yes")


def test_a_dead_server_is_named_and_the_next_reset_starts_one(tmp_path: Path) -> None:
    env = gymnasium.make("tbsim/Examples-v0", scenario="meeting-only", out=tmp_path)
    env.reset(seed=1)
    inner: Any = env.unwrapped
    server = inner._server
    server._proc.kill()
    server._proc.wait()
    with pytest.raises(tbsim.ServerGone, match="reset"):
        env.step(({"name": "list_colleagues", "arguments": {}},))
    _, info = env.reset(seed=2)
    assert inner._server is not server and inner._server.running
    assert Path(info["run_dir"]).parent == tmp_path.resolve()
    env.close()


def test_async_make_vec_says_how(server: tbsim.Server) -> None:
    kw: dict[str, Any] = {"base_url": server.url, "token": server.token}
    kw["scenario"] = "meeting-only"
    with pytest.raises(TypeError, match="shared_memory': False"):
        gymnasium.make_vec("tbsim/Examples-v0", 2, vectorization_mode="async", **kw)
    envs = gymnasium.make_vec(
        "tbsim/Examples-v0",
        2,
        vectorization_mode="async",
        vector_kwargs={"shared_memory": False},
        **kw,
    )
    envs.reset(seed=0)
    envs.close()


def test_the_ids_need_no_import_statement() -> None:
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('tbsim:tbsim/Examples-v0', scenario='meeting-only')\n"
        "print(env.reset(seed=0)[1]['scenario'])\n"
        "env.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "meeting-only", done.stderr
