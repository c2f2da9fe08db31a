#!/usr/bin/env python3
"""Compares two run trees (e.g. the oracle on every scenario before and after a change).

    python3 tools/compare_runs.py OLD_DIR NEW_DIR

Every run's result.json and trajectory lines, as JSON.
Differences allowed: the header's `format`, and `digest` in result.json (it covers the bytes)."""
import json, os, sys
old, new = sys.argv[1], sys.argv[2]
bad = 0; runs = 0; lines = 0
for root, _, files in os.walk(old):
    if 'result.json' not in files: continue
    rel = os.path.relpath(root, old); nroot = os.path.join(new, rel); runs += 1
    ro = json.load(open(os.path.join(root, 'result.json'))); rn = json.load(open(os.path.join(nroot, 'result.json')))
    for r in (ro, rn): r.pop('digest', None)
    if ro != rn:
        bad += 1; print('result differs:', rel, [k for k in set(ro)|set(rn) if ro.get(k)!=rn.get(k)])
    lo = [json.loads(l) for l in open(os.path.join(root, 'trajectory.jsonl'))]
    ln = [json.loads(l) for l in open(os.path.join(nroot, 'trajectory.jsonl'))]
    if lo and lo[0].get('type') == 'header': lo[0].pop('format', None)
    if ln and ln[0].get('type') == 'header': ln[0].pop('format', None)
    lines += len(lo)
    if lo != ln:
        bad += 1
        i = next((i for i,(a,b) in enumerate(zip(lo,ln)) if a!=b), min(len(lo),len(ln)))
        print('trajectory differs:', rel, 'line', i+1, len(lo), len(ln))
print(f"{runs} runs, {lines} trajectory lines compared, {bad} differences")
sys.exit(1 if bad else 0)
