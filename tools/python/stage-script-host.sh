#!/usr/bin/env bash
# Builds the family-script host `tbsim-script` (engine/script, which maturin does not
# build: it is a workspace of its own) in release and stages it in a copy of this
# folder, where pyproject's `data = "wheel-data"` makes maturin put it in the
# wheel's scripts, beside `tbsim`:
#
#   tools/python/stage-script-host.sh [--target TRIPLE] STAGED_COPY
#
# The builders run it on their staged copy of tools/python: ci.sh (native),
# aarch64.sh (cross, with its linker variables set) and the wheels workflow (in the
# manylinux container, before maturin). Prints the staged host's path.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
target=()
if [ "${1:-}" = --target ]; then
  target=(--target "$2")
  shift 2
fi
[ $# -eq 1 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
stage="$1"
"$repo/tools/script-host.sh" --locked "${target[@]}" >&2
built="$repo/target/script/${target[1]:+${target[1]}/}release/tbsim-script"
install -D -m 755 "$built" "$stage/wheel-data/scripts/tbsim-script"
echo "$stage/wheel-data/scripts/tbsim-script"
