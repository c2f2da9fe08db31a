#!/usr/bin/env python3
"""Aggregate `tbsim run --agent adversary:<name> --json` outputs into the adversary table.

Usage: adversary_table.py DIR  (DIR holds <adversary>__<suite>.json, each a JSON array of
run results). Prints, per adversary and suite, the mean checkpoint score over the suite's
scenarios / tasks solved (the ceiling test's definition), then the scored checkpoints
passed by any adversary over the ceiling, and writes a compact per-run summary
(summary.jsonl) beside the inputs.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

CEILING = 0.05
SUITES = ["examples", "traineebench", "traineebench-cl", "traineebench-plus"]


def main() -> None:
    d = Path(sys.argv[1])
    cells: dict[tuple[str, str], dict] = {}
    advs: list[str] = []
    summary = []
    for f in sorted(d.glob("*__*.json")):
        adv, suite = f.stem.split("__")
        if adv not in advs:
            advs.append(adv)
        runs = json.loads(f.read_text())
        passed: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        solved, tasks = [], 0
        for r in runs:
            for t in r["tasks"]:
                tasks += 1
                if t["success"]:
                    solved.append(f'{r["scenario"]}/{t["key"]}')
                for c in t["checkpoints"]:
                    if c["kind"] == "diagnostic":
                        continue
                    e = passed[f'{t["family"]}/{c["key"]}']
                    e[1] += 1
                    e[0] += bool(c["passed"])
            summary.append(
                {
                    "adversary": adv,
                    "suite": suite,
                    "scenario": r["scenario"],
                    "checkpoint_score": r["checkpoint_score"],
                    "solved": [t["key"] for t in r["tasks"] if t["success"]],
                    "passed": sorted(
                        f'{t["key"]}/{c["key"]}'
                        for t in r["tasks"]
                        for c in t["checkpoints"]
                        if c["passed"] and c["kind"] != "diagnostic"
                    ),
                }
            )
        mean = sum(r["checkpoint_score"] for r in runs) / len(runs)
        cells[(adv, suite)] = {
            "mean": mean,
            "solved": solved,
            "tasks": tasks,
            "runs": len(runs),
            "passed": passed,
        }
    suites = [s for s in SUITES if any(k[1] == s for k in cells)]
    head = "| adversary | " + " | ".join(
        f'{s} ({next(c["runs"] for k, c in cells.items() if k[1] == s)} scenarios)'
        for s in suites
    )
    print(head + " |")
    print("|---|" + "---|" * len(suites))
    details = []
    for a in advs:
        row = [a]
        for s in suites:
            c = cells.get((a, s))
            if c is None:
                row.append("not run")
                continue
            over = c["mean"] > CEILING or c["solved"]
            row.append(
                f'{c["mean"]:.3f} / {len(c["solved"])} of {c["tasks"]}' + (" **✗**" if over else "")
            )
            if over or any(p for p, _ in c["passed"].values()):
                cps = ", ".join(
                    f"{k} {p}/{n}" for k, (p, n) in sorted(c["passed"].items()) if p
                )
                line = f'- {a} on {s} (mean {c["mean"]:.3f}): {cps}'
                if c["solved"]:
                    line += "; solved: " + ", ".join(c["solved"])
                details.append(line)
        print("| " + " | ".join(row) + " |")
    if details:
        print("\nScored checkpoints passed (runs passed / runs where it exists):\n")
        print("\n".join(details))
    with open(d / "summary.jsonl", "w") as out:
        for s in summary:
            out.write(json.dumps(s, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
