# tbsim in a container: build once, run shards on Kubernetes or Slurm (tools/k8s,
# tools/slurm). Multi-stage: the Rust toolchain stays in the builder; the runtime
# image holds the binary and its family-script host, the bundled content, bubblewrap
# and python3 (run_python's sandbox) and nothing else.
#
#   docker build -t tbsim .
#   docker run --rm -v "$PWD/runs:/runs" tbsim run content/scenarios/*.ron --out /runs/demo
#
# The `openenv` target serves tbsim as an OpenEnv environment (`python -m tbsim.openenv`,
# the Python package's wheel with its `openenv` extra) on port 8000:
#
#   docker build --target openenv -t tbsim-openenv .
#   docker run --rm -p 8000:8000 -v "$PWD/runs:/runs" tbsim-openenv
#
# run_python's bubblewrap needs unprivileged user namespaces inside the container
# (e.g. `--security-opt seccomp=unconfined` with Docker); without them that one tool
# reports the sandbox as unavailable and every other tool works.

FROM rust:1.95-slim-trixie AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY engine engine
COPY benches benches
COPY tools/fake-llm tools/fake-llm
RUN cargo build --release --locked -p tbsim --bin tbsim
# The family-script host (engine/script, a workspace of its own): script families
# need it beside tbsim, and there is no source tree to build it from at run time.
RUN cargo build --release --locked --manifest-path engine/script/Cargo.toml --target-dir target/script

# The Python wheel around that binary (the layout maturin gives; tools/python).
FROM build AS wheel
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 binutils \
 && rm -rf /var/lib/apt/lists/*
COPY content content
COPY tools/python tools/python
RUN python3 tools/python/wheel_from_binary.py target/release/tbsim \
    target/script/release/tbsim-script /wheels

FROM python:3.13-slim-trixie AS openenv
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 tbsim \
 && mkdir /runs && chown tbsim /runs
COPY --from=wheel /wheels /tmp/wheels
RUN w="$(ls /tmp/wheels/tbsim-*.whl)" \
 && pip install --no-cache-dir "$w[openenv]" \
 && rm -rf /tmp/wheels
WORKDIR /home/tbsim
USER tbsim
EXPOSE 8000
# Each episode's run directory goes to /runs (mount it to keep them).
CMD ["python", "-m", "tbsim.openenv", "--host", "0.0.0.0", "--port", "8000", "--out", "/runs"]

FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 tbsim
COPY --from=build /src/target/release/tbsim /usr/local/bin/tbsim
COPY --from=build /src/target/script/release/tbsim-script /usr/local/bin/tbsim-script
COPY content /opt/tbsim/content
# The binary finds its bundled content here (see `tbsim scenarios`).
ENV TBSIM_CONTENT=/opt/tbsim/content
WORKDIR /opt/tbsim
USER tbsim
ENTRYPOINT ["tbsim"]
CMD ["--help"]
