"""Assembles the tbsim wheel around a `tbsim` binary and a `tbsim-script` host that
are already built.

    python3 wheel_from_binary.py BINARY SCRIPT_HOST OUT_DIR

The same layout maturin (`bindings = "bin"`, `python-source = "python"`, `data`) gives:
the binary and the family-script host (tools/script-host.sh builds it) in the wheel's
scripts, so pip installs them side by side, where tbsim looks for the host; the
package `tbsim` (with its content link followed) in purelib, metadata from
pyproject.toml. The Rust suite tests the Python package
with this wheel around the binary `cargo test` has just built, so CI does not compile
the CLI a second time (~8 minutes on 2 cores); release wheels are built by maturin
(`tools/python/ci.sh` without TBSIM_WHEEL_BINARY). Prints the wheel's path.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import tomllib
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _metadata(version: str) -> str:
    project = tomllib.loads((HERE / "pyproject.toml").read_text())["project"]
    lines = [
        "Metadata-Version: 2.3",
        f"Name: {project['name']}",
        f"Version: {version}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        f"License-Expression: {project['license']}",
    ]
    lines += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    for extra, deps in sorted(project.get("optional-dependencies", {}).items()):
        lines.append(f"Provides-Extra: {extra}")
        lines += [f"Requires-Dist: {d} ; extra == '{extra}'" for d in deps]
    readme = (HERE / project["readme"]).read_text()
    return str("\n".join(lines) + "\nDescription-Content-Type: text/markdown\n\n" + readme)


def _entry_points() -> str:
    """`entry_points.txt` from pyproject's `[project.entry-points.*]` (as maturin
    writes it), so plugin hosts such as Inspect AI find the package."""
    groups = tomllib.loads((HERE / "pyproject.toml").read_text())["project"].get("entry-points", {})
    out = ""
    for group, points in sorted(groups.items()):
        out += f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(points.items()))
        out += "\n"
    return out


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build(binary: Path, host: Path, out: Path) -> Path:
    version = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    tag = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
    dist = f"tbsim-{version}"
    out.mkdir(parents=True, exist_ok=True)
    wheel = out / f"{dist}-{tag}.whl"
    record: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel, "w") as z:

        def add(name: str, data: bytes, mode: int = 0o644) -> None:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            # The binary is most of the bytes and compresses slowly: stored.
            info.compress_type = zipfile.ZIP_STORED if mode & 0o111 else zipfile.ZIP_DEFLATED
            z.writestr(info, data)
            record.append(f"{name},sha256={_digest(data)},{len(data)}")

        # `traineebench` is the verifiers taskset id (a top-level module by its rules).
        for name in ("tbsim", "traineebench"):
            package = HERE / "python" / name
            for root, dirs, files in os.walk(package, followlinks=True):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for f in sorted(files):
                    path = Path(root) / f
                    add(path.relative_to(package.parent).as_posix(), path.read_bytes())
        for source, name in ((binary, "tbsim"), (host, "tbsim-script")):
            # Debug symbols are ~90% of a debug binary; the wheel does not need them.
            exe = Path(tmp) / name
            shutil.copyfile(source, exe)
            if shutil.which("strip"):
                subprocess.run(["strip", str(exe)], check=True)
            add(f"{dist}.data/scripts/{name}", exe.read_bytes(), 0o755)
        add(f"{dist}.dist-info/METADATA", _metadata(version).encode())
        entry_points = _entry_points()
        if entry_points:
            add(f"{dist}.dist-info/entry_points.txt", entry_points.encode())
        wheel_file = "Wheel-Version: 1.0\nGenerator: wheel_from_binary\nRoot-Is-Purelib: false\n"
        wheel_file += f"Tag: {tag}\n"
        add(f"{dist}.dist-info/WHEEL", wheel_file.encode())
        record.append(f"{dist}.dist-info/RECORD,,")
        z.writestr(f"{dist}.dist-info/RECORD", "\n".join(record) + "\n")
    return wheel


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, host, out = (Path(a) for a in sys.argv[1:])
    for exe in (binary, host):
        if not exe.is_file():
            sys.exit(f"{exe}: no such file")
    print(build(binary, host, out))
