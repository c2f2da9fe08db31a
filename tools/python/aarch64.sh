#!/usr/bin/env bash
# Builds the Linux aarch64 (manylinux) wheel on an x86_64 Debian/Ubuntu machine and
# tries it as pip installs it, under qemu: `tbsim run busy-day` with the oracle must
# score 1.0 from the wheel's own bundled content, replay identically, and write the
# same trajectory bytes as this machine's x86_64 binary does; and a script-family
# scenario must score 1.0 with the script solver on the wheel's aarch64
# `tbsim-script` host.
#
#   tools/python/aarch64.sh [OUT_DIR]        # default: target/wheel-aarch64/dist
#
# Needs (Debian packages): gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user,
# and the Rust target: `rustup target add aarch64-unknown-linux-gnu`. The wheel is
# tagged by maturin from the glibc symbols it uses (Debian 12's cross glibc gives
# manylinux_2_34); `.github/workflows/wheels.yml` builds it in maturin's
# manylinux_2_28 image instead. A release build: about 30 CPU-minutes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
out="${1:-$repo/target/wheel-aarch64/dist}"
work="$(mktemp -d "${TMPDIR:-/tmp}/tbsim-aarch64.XXXXXX")"
trap 'rm -rf "$work"' EXIT
for tool in aarch64-linux-gnu-gcc qemu-aarch64; do
  command -v "$tool" >/dev/null || { echo "missing $tool (see the header)" >&2; exit 1; }
done

python3 -m venv "$work/build"
"$work/build/bin/pip" install --quiet "maturin>=1.7,<2" auditwheel
cp -rL "$here" "$work/src"
sed -i "s|^manifest-path = .*|manifest-path = \"$repo/engine/cli/Cargo.toml\"|" "$work/src/pyproject.toml"
(
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
    CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
    CXX_aarch64_unknown_linux_gnu=aarch64-linux-gnu-g++ \
    AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
  # The family-script host for the same target, into the wheel's scripts (pyproject's
  # `data`); in target/script/aarch64-unknown-linux-gnu/.
  "$here/stage-script-host.sh" --target aarch64-unknown-linux-gnu "$work/src" >/dev/null
  cd "$work/src"
  CARGO_TARGET_DIR="$repo/target/wheel-aarch64" \
    "$work/build/bin/maturin" build --release --locked --target aarch64-unknown-linux-gnu --out "$out" >&2
)
wheel="$(ls -t "$out"/tbsim-*aarch64.whl | head -1)"
"$work/build/bin/auditwheel" show "$wheel"

# Installed as pip lays a wheel out: the binary in <prefix>/bin, the package in
# <prefix>/lib/python3.X/site-packages (the binary finds its content from there).
prefix="$work/prefix"
site="$prefix/lib/python3.11/site-packages"
mkdir -p "$prefix/bin" "$site"
python3 -m zipfile -e "$wheel" "$work/unpacked"
cp "$work"/unpacked/tbsim-*.data/scripts/tbsim "$work"/unpacked/tbsim-*.data/scripts/tbsim-script \
  "$prefix/bin/"
chmod +x "$prefix/bin/tbsim" "$prefix/bin/tbsim-script"
file "$prefix/bin/tbsim-script" | grep -q aarch64 || { echo "the wheel's host is not aarch64" >&2; exit 1; }
for d in "$work"/unpacked/*; do
  case "$d" in *.data) ;; *) cp -r "$d" "$site/" ;; esac
done
# QEMU_LD_PREFIX: the aarch64 libraries, for tbsim and for the host it starts.
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
a64() { env -u TBSIM_CONTENT -u CARGO_MANIFEST_DIR -u TBSIM_SCRIPT_HOST qemu-aarch64 "$prefix/bin/tbsim" "$@"; }
cd "$work"
a64 --version
a64 run busy-day --agent oracle --json --out "$work/run-aarch64" >"$work/aarch64.json"
python3 -c "
import json, sys
r = json.load(open(sys.argv[1])); r = r[0] if isinstance(r, list) else r
assert r['checkpoint_score'] == 1.0, r
print('aarch64 wheel: busy-day scored', r['checkpoint_score'])" "$work/aarch64.json"
a64 replay "$work/run-aarch64"
# Script families: tbsim starts the `tbsim-script` beside it. An aarch64 child runs
# under qemu only where binfmt_misc hands aarch64 programs to it (qemu-user-binfmt);
# elsewhere the same host is named through a wrapper that runs it under qemu.
if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  host_env=()
else
  printf '#!/bin/sh\nexec qemu-aarch64 "%s" "$@"\n' "$prefix/bin/tbsim-script" >"$work/host-qemu"
  chmod +x "$work/host-qemu"
  host_env=(TBSIM_SCRIPT_HOST="$work/host-qemu")
fi
env -u TBSIM_CONTENT -u CARGO_MANIFEST_DIR -u TBSIM_SCRIPT_HOST "${host_env[@]}" \
  qemu-aarch64 "$prefix/bin/tbsim" run traineebench-script-001 --agent script-solver --json \
  --out "$work/run-script" >"$work/script.json"
python3 -c "
import json, sys
r = json.load(open(sys.argv[1])); r = r[0] if isinstance(r, list) else r
assert r['checkpoint_score'] == 1.0, r
print('aarch64 wheel: traineebench-script-001 scored', r['checkpoint_score'])" "$work/script.json"
# The same run by this machine's binary, when one is built: the same bytes.
native="${TBSIM_BIN:-$repo/target/release/tbsim}"
if [ -x "$native" ]; then
  TBSIM_CONTENT="$repo/content" "$native" run busy-day --agent oracle --json --out "$work/run-native" >/dev/null
  cmp "$work/run-native/trajectory.jsonl" "$work/run-aarch64/trajectory.jsonl"
  cmp "$work/run-native/result.json" "$work/run-aarch64/result.json"
  echo "aarch64 and $(uname -m) runs are byte-identical"
fi
echo "$wheel"
