#!/usr/bin/env bash
# Interleaved first-paint measurements: base, new --no-cache, new with a primed cache.
set -u
cd /work/wt/s12-console
NEW=/tmp/s12/tbsim-new
BASE=/tmp/s12/tbsim-base
RUNS="/tmp/s12/longest /tmp/s12/long2000"
out=/tmp/s12/mc
for round in 1 2 3 4; do
  echo "round $round $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  TBSIM_BIN=$BASE node tools/console-tests/measure.mjs --runs 0 $RUNS > $out/base-$round.json 2>$out/base-$round.err
  echo "base done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 0 --view-arg --no-cache $RUNS > $out/nocache-$round.json 2>$out/nocache-$round.err
  echo "nocache done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  rm -rf $out/cache-$round
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 0 --view-arg --cache --view-arg $out/cache-$round --prime $RUNS > $out/cached-$round.json 2>$out/cached-$round.err
  echo "cached done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
done
