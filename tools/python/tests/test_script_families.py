"""Script families (content/families/*/family.star) from the installed wheel: their
host `tbsim-script` is installed beside `tbsim`, where tbsim looks for it, so they
work with no Rust toolchain (tools/python/ci.sh runs these with none on PATH)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import tbsim


def _env() -> dict[str, str]:
    """The environment without TBSIM_SCRIPT_HOST: tbsim must find the wheel's host."""
    return {k: v for k, v in os.environ.items() if k != "TBSIM_SCRIPT_HOST"}


def _tbsim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tbsim.binary(), *args], capture_output=True, text=True, check=False, env=_env()
    )


def test_the_script_host_is_installed_beside_tbsim() -> None:
    if "TBSIM_BIN" in os.environ:
        pytest.skip("TBSIM_BIN names a tbsim outside the installed package")
    # tbsim takes `tbsim-script` from beside its own executable before any source
    # tree its build came from (engine/gen/src/script_host.rs, `locate`): when it is
    # there, it is the host every script family below runs on.
    binary = Path(tbsim.binary())
    host = binary.with_name("tbsim-script" + binary.suffix)
    assert host.is_file(), f"{host} is not installed"
    assert os.access(host, os.X_OK), f"{host} is not executable"


def test_a_script_family_scenario_scores_one_with_its_script_solver(tmp_path: Path) -> None:
    assert len(tbsim.scenarios("traineebench-script")) == 12
    # The script solver runs each family's `solve` in the host: it scores 1 only if
    # the host started and evaluated the scripts.
    done = _tbsim(
        "run",
        "traineebench-script-001",
        "--agent",
        "script-solver",
        "--json",
        "--out",
        str(tmp_path / "run"),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["checkpoint_score"] == 1.0, result


def test_the_family_gate_passes_a_bundled_script_family() -> None:
    # Two seeds: the screen (an upper 95% bound cannot pass below about 50).
    done = _tbsim("family", "check", "inventory_reorder", "--seeds", "2", "--screen")
    assert done.returncode == 0, done.stdout + done.stderr
