#!/usr/bin/env bash
# Runs one built fuzz target for SECONDS at a low CPU priority (NICE, default 19) and
# keeps its log. libFuzzer's -timeout is wall time, so on a busy machine raise NICE's
# priority (e.g. NICE=10) rather than mistake a starved unit for a hang.
# Usage: [NICE=n] ./run.sh <scenario|tool_calls|run_dir|http_body> <seconds> <log file>
set -euo pipefail
cd "$(dirname "$0")"
target=$1 secs=$2 log=$3
mkdir -p "corpus/$target" "artifacts/$target"
exec nice -n "${NICE:-19}" "target/x86_64-unknown-linux-gnu/release/$target" \
  -max_total_time="$secs" -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 \
  -artifact_prefix="artifacts/$target/" "corpus/$target" "seeds/$target" > "$log" 2>&1
