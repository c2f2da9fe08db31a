#!/usr/bin/env bash
# Builds the tbsim wheel (maturin), installs it into a fresh venv and runs ruff,
# mypy and pytest against the INSTALLED package, with no Rust toolchain on PATH.
#
#   tools/python/ci.sh                   # release wheel (pip wheel ./tools/python), target/wheel
#   TBSIM_WHEEL_PROFILE=dev tools/python/ci.sh
#   TBSIM_WHEEL=path/to/tbsim.whl tools/python/ci.sh   # test a wheel already built
#   TBSIM_WHEEL_BINARY=target/debug/tbsim tools/python/ci.sh
#   TBSIM_WHEEL_SCRIPT_HOST=path/to/tbsim-script ...  # the host to pack (both builds)
#
# The wheel ships the family-script host `tbsim-script` beside `tbsim`: the pip/maturin
# build builds it (stage-script-host.sh; a no-op when current) unless
# TBSIM_WHEEL_SCRIPT_HOST names one; the TBSIM_WHEEL_BINARY build packs
# TBSIM_WHEEL_SCRIPT_HOST, by default target/script/release/tbsim-script
# (tools/script-host.sh builds it).
#
# The Rust suite runs this (engine/cli/tests/it/python.rs) with TBSIM_WHEEL_BINARY,
# the binary `cargo test` has just built: wheel_from_binary.py packs it the way
# maturin does, so CI never compiles the CLI twice (a maturin dev build costs
# minutes even in the same target directory: its `cargo rustc` resolves features
# without the workspace's dev-dependencies, so shared crates and the CLI rebuild).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/tbsim-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT

wheel="${TBSIM_WHEEL:-}"
host="${TBSIM_WHEEL_SCRIPT_HOST:-$repo/target/script/release/tbsim-script}"
need_host() {
  [ -f "$host" ] || { echo "no family-script host at $host: build it with tools/script-host.sh" >&2; exit 1; }
}
if [ -z "$wheel" ] && [ -n "${TBSIM_WHEEL_BINARY:-}" ]; then
  need_host
  wheel="$(python3 "$here/wheel_from_binary.py" "$TBSIM_WHEEL_BINARY" "$host" "$work/dist")"
elif [ -z "$wheel" ]; then
  # The documented build (README "Python"): pip runs the package's own backend
  # (build_backend/tbsim_build.py: the script host staged, maturin on a copy).
  python3 -m pip wheel --quiet --no-deps -w "$work/dist" "$here" >&2
  wheel="$(ls "$work"/dist/tbsim-*.whl)"
fi
echo "wheel: $wheel ($(du -k "$wheel" | cut -f1) KiB)" >&2

# Three venvs (the main one; verifiers' and OpenEnv's, whose frameworks cannot share
# it), installed at once, and the two small suites run beside the main one: CI's
# longest test was these steps one after another. Each background job writes a log,
# printed when it is done; any failure fails the script.
inspect_pin="$(grep -o '"inspect-ai>=[^"]*"' "$here/pyproject.toml" | tr -d '"' | cut -d= -f2)"
verifiers_pin="$(grep -o '"verifiers>=[^,"]*' "$here/pyproject.toml" | cut -d= -f2)"

# Only a venv and the system's directories on PATH: no cargo, no rustc.
sys_path="/usr/local/bin:/usr/bin:/bin"
if PATH="$sys_path" command -v cargo >/dev/null 2>&1 || PATH="$sys_path" command -v rustc >/dev/null 2>&1; then
  echo "note: a Rust toolchain is installed system-wide ($(PATH="$sys_path" command -v cargo rustc | head -1))" >&2
fi
# TBSIM_SCRIPT_HOST too: the installed tbsim must find the wheel's own host.
unset TBSIM_BIN TBSIM_CONTENT TBSIM_SCRIPT_HOST CARGO_MANIFEST_DIR

# pytest of some test files in venv $1, from outside the source tree (so `import
# tbsim` is the installed package).
run_pytest() {
  local venv="$1"
  shift
  (cd "$work" && PATH="$venv/bin:$sys_path" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    --rootdir "$here" -c "$here/pyproject.toml" "$@")
}

# verifiers (`tbsim[verifiers]`): verifiers pins mcp==2.0.0, the `test` extra's MCP
# SDK tests need >=2.3, and it keeps openai<3 where Inspect needs >=3.4 (pip refuses
# `tbsim[inspect,verifiers]`; checked below). vf-eval plays against the repo's
# fake-llm ($TBSIM_FAKE_LLM, built by `cargo test --workspace`), an
# OpenAI-compatible server on 127.0.0.1; skipped without it.
verifiers_job() {
  python3 -m venv "$work/vf"
  # verifiers at its extra's lower bound, the version the extra promises to work with.
  "$work/vf/bin/pip" install --quiet "$wheel[verifiers]" "verifiers==$verifiers_pin" "pytest>=7"
  run_pytest "$work/vf" "$here/tests/test_verifiers.py"
  # The pair the README says cannot share a venv: pip says so, installing nothing.
  local conflict
  if conflict="$("$work/vf/bin/pip" install --dry-run "$wheel[inspect,verifiers]" 2>&1)"; then
    echo "pip installed tbsim[inspect,verifiers], which cannot call a model from Inspect" >&2
    return 1
  fi
  grep -q "openai" <<<"$conflict" || { echo "$conflict" >&2; return 1; }
}

# OpenEnv (`tbsim[openenv]`): openenv-core needs the newer MCP SDK verifiers pins
# against. openenv-core exactly at the extra's lower bound, with only what its server
# and clients import: its other requirements (gradio, huggingface_hub, openai, typer,
# …: ~330 MB, 37 more packages) serve its web UI and CLI, which tbsim does not use,
# and would cost CI minutes of downloads.
openenv_job() {
  python3 -m venv "$work/oe"
  "$work/oe/bin/pip" install --quiet "$wheel" "pytest>=7" "fastapi>=0.104" "uvicorn>=0.24" \
    "websockets>=15.0.1" "fastmcp>=3.0.0" "requests>=2.25"
  "$work/oe/bin/pip" install --quiet --no-deps "openenv-core==0.3.0"
  run_pytest "$work/oe" "$here/tests/test_openenv.py"
}

jobs_pids=()
jobs_names=()
start_job() {
  local name="$1"
  shift
  (set -e; "$@") >"$work/$name.log" 2>&1 &
  jobs_pids+=("$!")
  jobs_names+=("$name")
}
if [ -n "${TBSIM_FAKE_LLM:-}" ]; then
  start_job verifiers verifiers_job
fi
start_job openenv openenv_job

# The main venv: the wheel with the [inspect] extra at its lower bound (the version
# tbsim.inspect is tested at, tests/test_inspect.py) and the test tools. With
# $TBSIM_FAKE_LLM, test_inspect.py also runs `inspect eval --model openai/...`
# against fake-llm on 127.0.0.1 (about 15 s).
main_job() {
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet "$wheel[inspect]" "inspect-ai==$inspect_pin" \
    "pytest>=7" "mcp>=2.3,<3" "ruff>=0.6" "mypy>=1.10"
  export PATH="$work/venv/bin:$sys_path"
  cd "$here"
  ruff check python tests build_backend wheel_from_binary.py bench.py
  ruff format --check python tests build_backend wheel_from_binary.py bench.py
  mypy
  mypy --python-version 3.11 --strict wheel_from_binary.py bench.py  # tomllib: 3.11+
  cd "$work"
  python -c "import tbsim, gymnasium; gymnasium.make('tbsim/TraineeBench-v0').close()"
  run_pytest "$work/venv" "$here/tests"
}
start_job main main_job

failed=()
for i in "${!jobs_pids[@]}"; do
  status=0
  wait "${jobs_pids[$i]}" || status=$?
  echo "--- ${jobs_names[$i]} (exit $status) ---" >&2
  cat "$work/${jobs_names[$i]}.log" >&2
  [ "$status" -eq 0 ] || failed+=("${jobs_names[$i]}")
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "failed: ${failed[*]}" >&2
  exit 1
fi
