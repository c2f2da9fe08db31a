#!/usr/bin/env python3
"""Render `tbsim validity scan ... --json` as a Markdown table: every row, the rows over
the share flagged. Usage: scan_table.py SCAN.json"""

import json
import sys

d = json.load(open(sys.argv[1]))
print(f'{d["instances"]} instances; max share {d["max_share"]}; over: {", ".join(d["failing"]) or "none"}\n')
print("| family/checkpoint | shape | scanned | unreached | any rule | best rule | best share | over |")
print("|---|---|--:|--:|--:|---|--:|---|")
for r in d["rows"]:
    print(
        f'| {r["checkpoint"]} | {r["shape"]} | {r["scanned"]} | {r["unreached"]} | {r["solved_by_any_rule"]} '
        f'| {r["best_rule"] or "—"} | {r["best_share"]:.3f} | {"**yes**" if r["over"] else ""} |'
    )
