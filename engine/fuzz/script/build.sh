#!/usr/bin/env bash
# Builds the family-script host's fuzz targets with libFuzzer's coverage
# instrumentation (as ../build.sh does for tbsim's). Binaries land in
# target/x86_64-unknown-linux-gnu/release/{script_protocol,family_star}.
set -euo pipefail
cd "$(dirname "$0")"
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
exec cargo build --release --target x86_64-unknown-linux-gnu --bin script_protocol --bin family_star "$@"
