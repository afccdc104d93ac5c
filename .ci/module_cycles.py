#!/usr/bin/env python3
"""Import circles between modules of a crate's source tree.

An edge a -> b is a `crate::` or `super::` path in module a that names module b (or
an item in it). A parent naming its own child, or a child its parent, is not counted:
that is how Rust declares and re-exports modules. Every other edge is lifted to the
two siblings under the modules' lowest common ancestor, and a circle is a cycle among
siblings: two files, or two folders, that import each other, directly or around a
loop. Prints each circle and exits 1 if there is one.

    python3 .ci/module_cycles.py core/src lab/src ...
"""
import os
import re
import sys


def modules(root):
    """Module path (a tuple) -> file, for every .rs file under root."""
    found = {}
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".rs"):
                parts = os.path.relpath(os.path.join(folder, name), root)[:-3].split("/")
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                found[tuple(parts)] = os.path.join(folder, name)
    return found


def edges(found):
    def resolve(path):
        for end in range(len(path), 0, -1):
            if path[:end] in found:
                return path[:end]
        return ()

    out = set()
    for module, path in found.items():
        text = re.sub(r"//[^\n]*", "", open(path, encoding="utf-8").read())
        owner = os.path.basename(path) in ("mod.rs", "lib.rs", "main.rs")
        here = module if owner else module[:-1]
        for named in re.findall(r"\bcrate::((?:\w+::)*\w+)", text):
            out.add((module, resolve(tuple(named.split("::")))))
        for supers, named in re.findall(r"\b((?:super::)+)((?:\w+::)*\w+)", text):
            base = here[: len(here) - (supers.count("super::") - 1)]
            out.add((module, resolve(base + tuple(named.split("::")))))
    return out


def sibling_graph(pairs):
    graph = {}
    for a, b in pairs:
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        if common in (len(a), len(b)):
            continue  # a parent and its descendant
        graph.setdefault(a[: common + 1], set()).add(b[: common + 1])
    return graph


def circles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in list(graph):
        if v not in index:
            visit(v)
    return found


def main(roots):
    bad = 0
    for root in roots:
        found = modules(root)
        graph = sibling_graph(edges(found))
        for circle in circles(graph):
            bad += 1
            names = ["::".join(m) or "(root)" for m in circle]
            print(f"{root}: import circle: {' <-> '.join(names)}")
        print(f"{root}: {len(found)} modules, {len(circles(graph))} import circles")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
