#!/usr/bin/env bash
# Interleaved: new --no-cache (a first open with nothing cached), then new with the
# cache as the runs left it when they ended (a fresh copy per round); then the list.
set -u
cd /work/wt/s13-console
NEW=/tmp/s13c/tbsim-new
RUNS="/tmp/s13c/work/runs/longest /tmp/s13c/work/runs/long2000"
out=/tmp/s13c/m
for round in 1 2 3; do
  echo "round $round $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 0 --view-arg --no-cache $RUNS > $out/nocache-$round.json 2>$out/nocache-$round.err
  echo "nocache done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  rm -rf $out/cache-$round; cp -r /tmp/s13c/runend-cache $out/cache-$round
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 0 --view-arg --cache --view-arg $out/cache-$round $RUNS > $out/runend-$round.json 2>$out/runend-$round.err
  echo "runend done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
  rm -rf $out/listcache-$round
  TBSIM_BIN=$NEW node tools/console-tests/measure.mjs --runs 1000 --no-routes --view-arg --cache --view-arg $out/listcache-$round /tmp/s13c/work/runs/longest > $out/list-$round.json 2>$out/list-$round.err
  echo "list done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/log
done
