#!/usr/bin/env bash
# A tbsim batch as a Slurm job array: each array task runs one deterministic share
# of the (scenario x trial) runs. Slurm sets SLURM_ARRAY_TASK_ID,
# SLURM_ARRAY_TASK_MIN/MAX and SLURM_ARRAY_TASK_COUNT; tbsim takes its share from
# them (task id minus the minimum), so `--array=0-7` and `--array=1-8` both work.
# Arrays with a step or gaps (`0-14:2`, `1,3,5`) are refused, since they would
# leave runs out. `%4` caps how many tasks run at once.
#
#   sbatch tools/slurm/tbsim-array.sh
#   # when every task has finished:
#   tbsim report runs/traineebench-oracle
#
# Every task writes into the same --out on the shared file system, each run in
# the directory an unsharded run would use, so the union is one whole batch.
# Build tbsim first (`cargo build --release -p tbsim`) or use the container
# image (see the Dockerfile) with your site's container runtime.
#SBATCH --job-name=tbsim
#SBATCH --array=0-7%4
#SBATCH --cpus-per-task=1
#SBATCH --mem=1G
#SBATCH --time=02:00:00
#SBATCH --output=runs/slurm-%A_%a.log
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-.}"
TBSIM="${TBSIM:-target/release/tbsim}"
exec "$TBSIM" run \
  --agent oracle \
  --trials 3 \
  --out runs/traineebench-oracle \
  content/scenarios/traineebench/*.ron
