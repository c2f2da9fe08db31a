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
staged="$stage/wheel-data/scripts/tbsim-script"
install -D -m 755 "$built" "$staged"
# maturin strips `tbsim` (`strip = true`) but packs data files as they are: the
# staged copy is stripped here (a third smaller), with the target's strip when
# cross-compiling and one is installed (else it ships unstripped).
strip_tool=strip
if [ ${#target[@]} -gt 0 ] && [ "${target[1]}" != "$(rustc -vV | sed -n 's/^host: //p')" ]; then
  strip_tool=""
  for t in "${target[1]%%-*}-linux-gnu-strip" "${target[1]}-strip"; do
    if command -v "$t" >/dev/null 2>&1; then strip_tool="$t"; break; fi
  done
fi
if [ -n "$strip_tool" ] && command -v "$strip_tool" >/dev/null 2>&1; then
  "$strip_tool" "$staged"
fi
echo "$staged"
