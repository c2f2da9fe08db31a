"""Starts a real `tbsim serve` (binary from $TBSIM_BIN) on a free loopback port."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    binary = os.environ.get("TBSIM_BIN")
    if not binary:
        pytest.skip("set TBSIM_BIN to the tbsim binary to run the client tests")
    out = tmp_path_factory.mktemp("runs")
    proc = subprocess.Popen(
        [binary, "serve", "--bind", "127.0.0.1:0", "--out", str(out), "--max-sessions", "8",
         "--token", "t0ken"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline()
    if "listening on " not in line:
        proc.kill()
        raise RuntimeError(f"tbsim serve did not start: {line!r}")
    url = line.strip().split("listening on ", 1)[1]
    yield {"url": url, "token": "t0ken", "out": out}
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
