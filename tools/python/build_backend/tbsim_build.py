"""The PEP 517 backend of `tools/python`: maturin, run on a staged copy of this folder.

    pip wheel --no-deps -w dist ./tools/python    # the wheel, into dist/
    pip install ./tools/python                    # or straight into a venv

maturin alone cannot build this package from a checkout: the family-script host
`tbsim-script` (engine/script, a workspace of its own) must sit in
`wheel-data/scripts/` for maturin to pack it beside `tbsim`, and the package's
`content` is a link to the repository's content/, which maturin does not follow.
So `build_wheel` copies this folder with its links followed, points
`manifest-path` at this checkout's engine/cli, builds and stages the host
(stage-script-host.sh), then hands the copy to maturin's own backend. The source
tree is never written; cargo's output goes to `<repo>/target/wheel` (and
`target/script`), so a second build is incremental. Needs a Rust toolchain
(cargo on PATH).

`TBSIM_WHEEL_PROFILE` (default `release`) picks the cargo profile;
`TBSIM_WHEEL_TARGET` the target directory; `TBSIM_WHEEL_SCRIPT_HOST` a host
already built, to pack instead of building one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import maturin

HERE = Path(__file__).resolve().parent.parent
REPO = HERE.parent.parent

get_requires_for_build_wheel = maturin.get_requires_for_build_wheel


def _stage(into: Path) -> Path:
    src = into / "src"
    shutil.copytree(
        HERE,
        src,
        symlinks=False,  # follows python/tbsim/content to the repository's content/
        ignore=shutil.ignore_patterns(
            "__pycache__", "*.pyc", "tests", "wheel-data", "build", "dist", "*.egg-info"
        ),
    )
    pyproject = src / "pyproject.toml"
    manifest = (REPO / "engine" / "cli" / "Cargo.toml").resolve()
    if not manifest.is_file():
        raise RuntimeError(
            f"{manifest} is missing: build the wheel from a tbsim checkout "
            "(pip wheel ./tools/python), not from a copy of tools/python alone"
        )
    text = re.sub(
        r"(?m)^manifest-path = .*$",
        f"manifest-path = {str(manifest)!r}".replace("'", '"'),
        pyproject.read_text(),
    )
    pyproject.write_text(text)
    host = os.environ.get("TBSIM_WHEEL_SCRIPT_HOST")
    if host:
        dest = src / "wheel-data" / "scripts" / "tbsim-script"
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(host, dest)
        dest.chmod(0o755)
    else:
        subprocess.run(
            ["bash", str(HERE / "stage-script-host.sh"), str(src)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return src


def _settings(config_settings: Mapping[str, Any] | None) -> dict[str, Any]:
    settings = dict(config_settings or {})
    profile = os.environ.get("TBSIM_WHEEL_PROFILE", "release")
    if profile != "release" and "build-args" not in settings:
        settings["build-args"] = f"--profile {profile}"
    return settings


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    out = Path(wheel_directory).resolve()
    os.environ.setdefault("CARGO_TARGET_DIR", str(REPO / "target" / "wheel"))
    if "TBSIM_WHEEL_TARGET" in os.environ:
        os.environ["CARGO_TARGET_DIR"] = os.environ["TBSIM_WHEEL_TARGET"]
    with tempfile.TemporaryDirectory(prefix="tbsim-wheel-") as tmp:
        src = _stage(Path(tmp))
        cwd = os.getcwd()
        os.chdir(src)
        try:
            return str(maturin.build_wheel(str(out), _settings(config_settings), None))
        finally:
            os.chdir(cwd)


def build_sdist(sdist_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    raise RuntimeError(
        "tbsim has no source distribution: its Rust sources are the whole repository. "
        "Build a wheel from a checkout: pip wheel --no-deps -w dist ./tools/python"
    )
