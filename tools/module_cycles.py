#!/usr/bin/env python3
"""Lists the import cycles between the top-level modules of each tbsim crate.

Reads engine/src as text: a module X imports module Y when a non-test line of X
names a path that resolves to Y (or to something inside Y): `crate::Y`, `super::Y` from a top-level module
(`super::super::Y` one level down, and so on; inline `mod m { ... }` blocks count
as a level), `self::Y` in the crate root's children's children, or a `{...}` group
after any of these prefixes (`use super::{a, b::C}` imports `a` and `b`). The same holds
one level down and deeper: sibling modules under one parent (`console::compare` and
`console::routes`) are checked against each other, a path anywhere in a file counting,
inside an `impl super::X { ... }` block too (such a block is no module: `super` there
is still the file's parent). Prints each strongly connected group of two or more
modules (nested ones as `parent::a <-> parent::b`), and exits 1 if there is any, so it can
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


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def imported_paths(text, base):
    """Module paths (as lists, possibly running into items) that the code of module
    `base` names, following `crate::`, `super::` (chains included), `self::` and
    `{...}` groups after any of them; `mod x { ... }` blocks inside the file shift
    what `super`/`self` mean (an `impl super::X { ... }` block does not). Yields
    (the module path in force where the path is written, the path it names)."""
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

    out = []
    for m in PATH.finditer(text):
        root, supers, nxt = m.group(1), m.group(2), m.group(3)
        here = path_at(m.start())
        if root == "crate":
            prefix = []
        else:
            ups = (1 if root == "super" else 0) + supers.count("super")
            prefix = here[: max(len(here) - ups, 0)]
        if nxt == "{":
            for item in group_items(text, m.end() - 1):
                out.append((here, prefix + item))
        else:
            rest = CHAIN.match(text, m.end())
            chain = [nxt] + (re.findall(r"\w+", rest.group(0)) if rest else [])
            out.append((here, prefix + chain))
    return out


CHAIN = re.compile(r"(?:\s*::\s*\w+)*")


def group_items(text, start):
    """The path of each top-level item of the `{...}` group opening at `start`, as far
    as it is a plain `a::b::c` chain (`self`, `super`, `crate` items dropped)."""
    depth, item, items, i = 0, "", [], start
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
            items.append(item)
            item = ""
        elif depth >= 1:
            item += c
        i += 1
    items.append(item)
    out = []
    for it in items:
        m = re.match(r"\s*(\w+(?:\s*::\s*\w+)*)", it)
        if m:
            chain = re.findall(r"\w+", m.group(1))
            if chain[0] not in ("self", "super", "crate"):
                out.append(chain)
    return out


def module_paths(src):
    """Every module of the crate as a tuple path: its files (`a.rs`, `a/mod.rs`,
    `a/b.rs`) and the inline `mod x { ... }` blocks in them (test modules left out)."""
    mods = set()
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            base = file_module(os.path.relpath(os.path.join(root, f), src))
            if not base:
                continue
            mods.add(tuple(base))
            text = strip_comments(open(os.path.join(root, f), encoding="utf-8").read())
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            for m in INLINE_MOD.finditer(text):
                mods.add(tuple(base) + (m.group(1),))
    return mods


def graph(src):
    """Edges between sibling modules, by parent: {parent tuple: {child: {child}}}."""
    mods = module_paths(src)
    dep = collections.defaultdict(lambda: collections.defaultdict(set))
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)
            base = file_module(rel)
            if not base:
                continue
            text = open(os.path.join(root, f), encoding="utf-8").read()
            text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
            for here, target in imported_paths(strip_comments(text), base):
                # The module the path lands in: its longest prefix that is one.
                t = list(target)
                while t and tuple(t) not in mods:
                    t.pop()
                if not t:
                    continue
                # The edge is between the children of the deepest common parent
                # (a module naming its own parent or child is no circle).
                k = 0
                while k < len(here) and k < len(t) and here[k] == t[k]:
                    k += 1
                if k < len(here) and k < len(t):
                    dep[tuple(here[:k])][here[k]].add(t[k])
    return dep


def cycles(mods, dep):
    """Strongly connected groups of two or more among `mods` (edges `dep`)."""
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


def crate_cycles(src):
    """Every cycle of the crate at `src`: the top level's first, then each parent's
    children in path order, each as a list of `::`-joined module paths."""
    dep = graph(src)
    found = []
    for parent in sorted(dep):
        edges = dep[parent]
        mods = sorted(set(edges) | {w for ws in edges.values() for w in ws})
        for group in cycles(mods, collections.defaultdict(set, edges)):
            found.append(["::".join(list(parent) + [m]) for m in group])
    return found


if __name__ == "__main__":
    total = 0
    for src in sys.argv[1:] or crate_dirs():
        found = crate_cycles(src)
        for c in found:
            print(f"{src}: cycle: " + " <-> ".join(c))
        total += len(found)
    print(f"{total} cycle(s)")
    sys.exit(1 if total else 0)
