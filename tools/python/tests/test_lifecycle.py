"""Servers the package starts never outlive their owner, stay quiet and bounded:

* a script holding a `tbsim.Server` killed with SIGKILL, and one running an 8-env
  `AsyncVectorEnv`, killed or closed, leave no `tbsim serve` and no temporary folder
  (the server holds a pipe on its stdin and stops at its end);
* the token reaches `tbsim serve` through its environment, never its command line;
* a server's messages go to its log file, not the owner's stderr;
* a session whose run is over gives its slot up to a new one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tbsim


def _serves_under(marker: str) -> list[int]:
    """Live `tbsim serve` processes whose command line names `marker` (Linux /proc)."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and b"serve" in cmd and any(marker.encode() in a for a in cmd):
            found.append(int(d.name))
    return found


def _gone(tmp: Path, timeout: float = 60.0) -> tuple[list[int], list[str]]:
    """Waits until no server names `tmp` and no `tbsim-*` folder is left in it."""
    deadline = time.monotonic() + timeout
    while True:
        procs = _serves_under(str(tmp))
        folders = sorted(p.name for p in tmp.glob("tbsim-*"))
        if (not procs and not folders) or time.monotonic() > deadline:
            return procs, folders
        time.sleep(0.2)


def _spawn(code: str, tmp: Path) -> subprocess.Popen[str]:
    # TMPDIR: the servers' temporary folders (and so their command lines) name `tmp`.
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp,
    )


HOLDER = """
import time, tbsim
s = tbsim.Server(token="hidden-token-value")
print(s.url, flush=True)
time.sleep(600)
"""


def test_a_killed_owner_takes_its_server_and_folder_along(tmp_path: Path) -> None:
    proc = _spawn(HOLDER, tmp_path)
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), url
    [pid] = _serves_under(str(tmp_path))
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert b"hidden-token-value" not in cmdline and b"--token" not in cmdline
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _gone(tmp_path) == ([], [])


VECTOR = """
import gymnasium
envs = gymnasium.make_vec(
    "tbsim:tbsim/Examples-v0", 8, vectorization_mode="async",
    vector_kwargs={"shared_memory": False}, scenario="meeting-only",
)
envs.reset(seed=0)
envs.step(tuple(({"name": "list_colleagues", "arguments": {}},) for _ in range(8)))
print("stepped", flush=True)
if "MODE" == "close":
    import sys; sys.stdin.readline()  # the test has counted the servers
    envs.close()
else:
    import time; time.sleep(600)
"""


@pytest.mark.parametrize("end", ["close", "kill"])
def test_an_async_vector_env_leaves_nothing_behind(tmp_path: Path, end: str) -> None:
    proc = _spawn(VECTOR.replace("MODE", end), tmp_path)
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline().strip()
    assert line == "stepped", proc.stderr.read()
    assert len(_serves_under(str(tmp_path))) >= 8
    assert proc.stdin is not None
    proc.stdin.write("\n")
    proc.stdin.flush()
    if end == "kill":
        proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert _gone(tmp_path) == ([], [])
    # Quiet: the servers' banners went to their logs, not the user's stderr.
    assert "console:" not in err and "listening" not in err, err


def test_the_server_logs_to_a_file_not_stderr(tmp_path: Path) -> None:
    code = "import tbsim\nwith tbsim.Server() as s:\n    print(s.log, flush=True)\n"
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == "" and done.stdout.strip().endswith("serve.log")
    log = tmp_path / "kept.log"
    with tbsim.Server(log=log) as s:
        assert s.log == log
    assert "listening on" not in log.read_text() and "console:" in log.read_text()


def test_finished_sessions_give_their_slot_up(tmp_path: Path) -> None:
    with tbsim.Server(out=tmp_path, max_sessions=2) as s, tbsim.Client(s.url) as c:
        first = [c.create("meeting-only", seed=i).session for i in range(2)]
        with pytest.raises(tbsim.ApiError) as full:
            c.create("meeting-only")
        assert full.value.status == 429
        for sid in first:
            assert c.step(sid, [{"name": "finish", "arguments": {}}]).terminated
        # Both runs are over: new sessions take their slots, their states stay readable.
        more = [c.create("meeting-only", seed=7 + i).session for i in range(2)]
        assert len(set(more)) == 2
        for sid in first:
            assert c.state(sid)["result"]["end_reason"] == "finished"
        # Their owner's DELETE still answers once, then the session is gone.
        assert c.delete(first[0])["result"]["end_reason"] == "finished"
        with pytest.raises(tbsim.ApiError) as gone:
            c.delete(first[0])
        assert gone.value.status == 404
