"""Where the installed `tbsim` binary and the bundled content are."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sysconfig
from dataclasses import dataclass
from pathlib import Path


def binary() -> str:
    """The `tbsim` command: `$TBSIM_BIN`, else the one this package was installed
    with (the environment's scripts directory), else the first on `PATH`."""
    env = os.environ.get("TBSIM_BIN")
    if env:
        return env
    scripts = Path(sysconfig.get_path("scripts"))
    for name in ("tbsim", "tbsim.exe"):
        if (scripts / name).is_file():
            return str(scripts / name)
    found = shutil.which("tbsim")
    if found is None:
        raise FileNotFoundError("the tbsim binary is not installed; pip install tbsim")
    return found


def content_dir() -> Path:
    """The bundled content (`scenarios/`, `suites/`, `prompts/`) shipped in the package."""
    return Path(__file__).resolve().parent / "content"


@dataclass(frozen=True)
class ScenarioInfo:
    """One scenario that can be given by name."""

    name: str
    suite: str | None
    days: int
    tasks: int
    families: tuple[str, ...]
    description: str
    seed: int
    """The scenario's own master seed (runs without a seed use it)."""


def scenarios(
    suite: str | None = None, directory: str | os.PathLike[str] | None = None
) -> list[ScenarioInfo]:
    """The scenarios `tbsim run NAME` and sessions accept (`tbsim scenarios --json`):
    the bundled ones, or those of one bundled `suite`, after those of `directory`."""
    args = [binary(), "scenarios", "--json"]
    if suite is not None:
        args += ["--suite", suite]
    if directory is not None:
        args += ["--scenarios", os.fspath(directory)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValueError(done.stderr.strip().removeprefix("error: "))
    listing = json.loads(done.stdout)
    return [
        ScenarioInfo(
            name=s["name"],
            suite=s["suite"],
            days=int(s["days"]),
            tasks=int(s["tasks"]),
            families=tuple(s["families"]),
            description=s["description"],
            seed=int(s["seed"]),
        )
        for s in listing["scenarios"]
    ]
