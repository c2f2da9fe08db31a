#!/usr/bin/env python3
"""Lists the import cycles between the top-level modules of each tbsim crate.

Reads engine/src as text: a module X imports module Y when a non-test line of X
names `crate::Y` (directly or in a `use crate::{...}` group). Prints each strongly
connected group of two or more modules, and exits 1 if there is any, so it can
gate the split of issue 10 once the cycles are gone. Crates cannot import each
other in a circle at all (cargo refuses), so this is the check for what is still
inside one crate.

    python3 tools/module_cycles.py [CRATE_SRC_DIR...]

With no argument it checks every crate of the workspace (`engine/src` and
`engine/*/src`).
"""
import collections
import os
import re
import sys


def graph(src):
    mods = sorted({m[:-3] if m.endswith(".rs") else m for m in os.listdir(src)} - {"lib", "main"})
    dep = collections.defaultdict(set)
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            top = rel.split(os.sep)[0].removesuffix(".rs")
            if top in ("lib", "main"):
                continue
            text = open(os.path.join(root, f), encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            names = set(re.findall(r"crate::(\w+)", text))
            for block in re.findall(r"use crate::\{([^;]*)\};", text, re.S):
                names |= set(re.findall(r"(?:^|[{,\s])(\w+)::", block))
            dep[top] |= {m for m in names if m != top and m in mods}
    return mods, dep


def cycles(mods, dep):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(dep[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in mods:
        if v not in index:
            visit(v)
    return out


def crate_dirs():
    engine = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "engine")
    dirs = [os.path.join(engine, "src")]
    for name in sorted(os.listdir(engine)):
        src = os.path.join(engine, name, "src")
        if os.path.isfile(os.path.join(engine, name, "Cargo.toml")) and os.path.isdir(src):
            dirs.append(src)
    return [os.path.normpath(d) for d in dirs]


if __name__ == "__main__":
    total = 0
    for src in sys.argv[1:] or crate_dirs():
        found = cycles(*graph(src))
        for c in found:
            print(f"{src}: cycle: " + " <-> ".join(c))
        total += len(found)
    print(f"{total} cycle(s)")
    sys.exit(1 if total else 0)
