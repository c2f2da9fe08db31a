#!/usr/bin/env bash
# Writes a long recorded run for the console's speed checks (measure.mjs): the
# bundled traineebench-cl-012 with every tool costing no simulated time, played by
# `adversary:combined` with a turn cost of TURN seconds, so the run goes on until
# its step limit: STEPS decisions (2,000 by default). The scenario copy in the run
# directory is the changed one, so the run replays and forks like any other
# (`tbsim replay OUT` checks it).
#
#   TBSIM_BIN=target/release/tbsim tools/console-tests/long-run.sh OUT [STEPS] [TURN]
set -euo pipefail

out=${1:?give the output directory}
steps=${2:-2000}
turn=${3:-12}
bin=${TBSIM_BIN:-target/debug/tbsim}
root=$(cd "$(dirname "$0")/../.." && pwd)
src="$root/content/scenarios/traineebench-cl/traineebench-cl-012.ron"
days=$(sed -n 's/^ *days: *\([0-9]*\),.*/\1/p' "$src" | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tools=$("$bin" tools --json 2>/dev/null | sed -n 's/.*"name": *"\([a-z_]*\)".*/\1/p' || true)
if [ -z "$tools" ]; then
  # The catalogue (engine/core/src/protocol/catalogue.rs) when `tools --json` is not there.
  tools="list_colleagues send_message create_group send_group_message read_messages list_folder read_file write_file copy_from_drive available_rooms book_meeting cancel_booking join_meeting my_calendar my_tasks calculator run_python list_services service_health page_load_times error_logs reboot_server"
fi
costs=$(for t in $tools; do [ "$t" = wait ] || [ "$t" = finish ] || printf '"%s": 0, ' "$t"; done)
scen="$tmp/traineebench-cl-012-long.ron"
# Only the clock's (empty) cost table changes.
grep -q '^    costs: {},$' "$src" || { echo "no empty 'costs: {},' line in $src" >&2; exit 1; }
sed "s/^    costs: {},\$/    costs: { ${costs}},/" "$src" >"$scen"

# --max-steps is per working day.
per_day=$(( (steps + days - 1) / days ))
rm -rf "$out"
"$bin" run "$scen" --agent adversary:combined --turn-cost "$turn" --max-steps "$per_day" --out "$out" --json >"$tmp/result.json"
lines=$(wc -l <"$out/trajectory.jsonl")
made=$(sed -n 's/^  "steps": *\([0-9]*\),*$/\1/p' "$out/result.json" | head -1)
echo "wrote $out: $made decisions, $lines trajectory lines" >&2
