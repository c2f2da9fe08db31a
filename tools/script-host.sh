#!/usr/bin/env bash
# Builds tbsim-script, the family-script host (engine/script, a workspace of its
# own), where tbsim looks for it in a source tree: target/script/release/. tbsim
# also builds it on first need; CI builds it up front so no test pays for it.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo build --release --manifest-path engine/script/Cargo.toml --target-dir target/script "$@"
