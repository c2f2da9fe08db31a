#!/usr/bin/env python3
"""Lists the import cycles between the top-level modules of each tbsim crate.

Reads engine/src as text: a module X imports module Y when a non-test line of X
names a path that resolves to Y: `crate::Y`, `super::Y` from a top-level module
(`super::super::Y` one level down, and so on; inline `mod m { ... }` blocks count
as a level), `self::Y` in the crate root's children's children, or a `{...}` group
after any of these prefixes (`use super::{a, b::C}` imports `a` and `b`). Prints each strongly
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


PATH = re.compile(r"\b(crate|super|self)((?:\s*::\s*super)*)\s*::\s*(\{|\w+)")
INLINE_MOD = re.compile(r"\bmod\s+(\w+)\s*\{")


def file_module(rel):
    """The module path of a source file relative to the crate's src dir."""
    parts = rel.removesuffix(".rs").split(os.sep)
    if parts[-1] == "mod":
        parts.pop()
    return [] if parts in (["lib"], ["main"]) else parts


def group_heads(text, start):
    """The first segment of each top-level item of the `{...}` group opening at `start`,
    and where the group ends."""
    depth, item, heads, i = 0, "", [], start
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c == "}":
            depth -= 1
            if depth == 0:
                break
        if depth == 1 and c == ",":
            heads.append(item)
            item = ""
        elif depth >= 1:
            item += c
        i += 1
    heads.append(item)
    out = []
    for h in heads:
        m = re.match(r"\s*(\w+)", h)
        if m and m.group(1) not in ("self", "super", "crate"):
            out.append(m.group(1))
    return out, i


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def imported_tops(text, base):
    """Top-level modules that the code of module `base` (a path) names, following
    `crate::`, `super::` (chains included), `self::` and `{...}` groups after any of
    them; `mod x { ... }` blocks inside the file shift what `super`/`self` mean."""
    # The module path in force at each offset: inline `mod name {` blocks extend it.
    spans = []  # (open offset, close offset, name)
    for m in INLINE_MOD.finditer(text):
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        spans.append((m.start(), j, m.group(1)))

    def path_at(offset):
        return base + [n for (a, b, n) in spans if a < offset < b]

    tops = set()
    for m in PATH.finditer(text):
        root, supers, nxt = m.group(1), m.group(2), m.group(3)
        if root == "crate":
            prefix = []
        else:
            prefix = path_at(m.start())
            ups = (1 if root == "super" else 0) + supers.count("super")
            prefix = prefix[: max(len(prefix) - ups, 0)]
        if prefix:
            tops.add(prefix[0])
        elif nxt == "{":
            tops |= set(group_heads(text, m.end() - 1)[0])
        else:
            tops.add(nxt)
    return tops


def graph(src):
    mods = sorted({m[:-3] if m.endswith(".rs") else m for m in os.listdir(src)} - {"lib", "main"})
    dep = collections.defaultdict(set)
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            base = file_module(rel)
            if not base:
                continue
            top = base[0]
            text = open(os.path.join(root, f), encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            names = imported_tops(strip_comments(text), base)
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
