#!/usr/bin/env bash
# Builds the fuzz targets with libFuzzer's coverage instrumentation, as
# `cargo fuzz build -s none -O` does, on the stable toolchain (no -Z flags are
# needed without a sanitizer). `cargo fuzz build -s none` gives the same binaries.
# Binaries land in target/x86_64-unknown-linux-gnu/release/{scenario,tool_calls,run_dir,http_body}.
set -euo pipefail
cd "$(dirname "$0")"
export RUSTFLAGS="-Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation off build scripts and proc macros.
exec cargo build --release --target x86_64-unknown-linux-gnu --bin scenario --bin tool_calls --bin run_dir --bin http_body "$@"
