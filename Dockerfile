# tbsim in a container: build once, run shards on Kubernetes or Slurm (tools/k8s,
# tools/slurm). Multi-stage: the Rust toolchain stays in the builder; the runtime
# image holds the binary, the bundled content, bubblewrap and python3 (run_python's
# sandbox) and nothing else.
#
#   docker build -t tbsim .
#   docker run --rm -v "$PWD/runs:/runs" tbsim run content/scenarios/*.ron --out /runs/demo
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

FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 tbsim
COPY --from=build /src/target/release/tbsim /usr/local/bin/tbsim
COPY content /opt/tbsim/content
# The binary finds its bundled content here (see `tbsim scenarios`).
ENV TBSIM_CONTENT=/opt/tbsim/content
WORKDIR /opt/tbsim
USER tbsim
ENTRYPOINT ["tbsim"]
CMD ["--help"]
