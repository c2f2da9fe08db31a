#!/usr/bin/env bash
# As measure.sh, with the browser warmed first (--warm-browser), first paints only.
set -u
cd /work/wt/s13-console
NEW=/tmp/s13c/tbsim-new
RUNS="/tmp/s13c/work/runs/longest /tmp/s13c/work/runs/long2000"
out=/tmp/s13c/m2
mkdir -p $out
for round in 1 2 3; do
  echo "round $round $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 0 --no-routes --warm-browser --view-arg --no-cache $RUNS > $out/nocache-$round.json 2>$out/nocache-$round.err
  echo "nocache done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  rm -rf $out/cache-$round; cp -r /tmp/s13c/runend-cache $out/cache-$round
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 0 --no-routes --warm-browser --view-arg --cache --view-arg $out/cache-$round $RUNS > $out/runend-$round.json 2>$out/runend-$round.err
  echo "runend done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
done
