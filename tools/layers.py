#!/usr/bin/env python3
"""docs/architecture.md's layers, as the #include lines draw them.

    tools/layers.py write [--root DIR]   rewrite the region `layers` of docs/architecture.md
    tools/layers.py check [--root DIR]   fail unless the region is what `write` would write
    tools/layers.py print [--root DIR]   print it

A layer is a folder of the core (core/include/emcp/NAME with core/src/NAME; opt.h and
platform.h are `emcp`), a port (ports/NAME) or the boards' common layer (boards/common). Every
`#include "..."` of their headers and sources that names a file of another layer (found under
core/include, ports/*/include, boards/common/include) is an edge. The table lists each layer
with the layers it includes, ordered so that a layer comes after everything it includes (the
lowest first) wherever the includes allow; layers that include each other (a cycle) are named
together, with the files that close the cycle. The region sits between
`<!-- layers:begin layers -->` and `<!-- layers:end layers -->` (tools/docgen.py).
"""
import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docgen  # noqa: E402

DOC = "docs/architecture.md"
PREFIX = "layers"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def unit_of(rel):
    """The layer a file of the checkout belongs to, or None."""
    parts = rel.split("/")
    if parts[:3] == ["core", "include", "emcp"]:
        return parts[3] if len(parts) > 4 else "emcp"
    if parts[:2] == ["core", "src"]:
        return parts[2] if len(parts) > 3 else "emcp"
    if parts[0] == "ports" and len(parts) > 2:
        return "ports/" + parts[1]
    if parts[:2] == ["boards", "common"]:
        return "boards/common"
    return None


def scan(root):
    """{unit: {included unit: [(including file, included file)]}}"""
    roots = [os.path.join(root, "core/include"), os.path.join(root, "boards/common/include")]
    roots += sorted(glob.glob(os.path.join(root, "ports/*/include")))
    files = []
    for pattern in ("core/include/**/*.h", "core/src/**/*.h", "core/src/**/*.cpp", "ports/**/*.h",
                    "ports/**/*.cpp", "boards/common/**/*.h", "boards/common/**/*.cpp"):
        files += glob.glob(os.path.join(root, pattern), recursive=True)
    edges = {}
    for f in sorted(set(files)):
        rel = os.path.relpath(f, root)
        u = unit_of(rel)
        if u is None:
            continue
        edges.setdefault(u, {})
        with open(f, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for name in INCLUDE.findall(text):
            target = next((os.path.join(r, name) for r in roots if os.path.exists(os.path.join(r, name))), None)
            if target is None:
                continue  # a third-party or local header
            v = unit_of(os.path.relpath(target, root))
            if v is None or v == u:
                continue
            edges[u].setdefault(v, []).append((rel, os.path.relpath(target, root)))
    return edges


def sccs(nodes, edges):
    """Tarjan: strongly connected components, each a sorted list, dependencies first."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out  # Tarjan emits a component after every component it reaches: dependencies first


def region(root):
    edges = scan(root)
    nodes = set(edges) | {v for e in edges.values() for v in e}
    comps = sccs(nodes, edges)
    rows = ["| layer | includes (the layers its headers and sources name) |", "|---|---|"]
    cycles = []
    for comp in reversed(comps):  # the top first
        for u in comp:
            deps = sorted(edges.get(u, {}))
            rows.append(f"| `{u}` | {', '.join(f'`{d}`' for d in deps) or 'nothing of emcp'} |")
        if len(comp) > 1:
            closing = []
            for u in comp:
                for v in sorted(edges.get(u, {})):
                    if v in comp:
                        f, t = edges[u][v][0]
                        more = len(edges[u][v]) - 1
                        closing.append(f"`{f}` includes `{t}`" + (f" (and {more} more)" if more else ""))
            cycles.append(f"- {', '.join(f'`{u}`' for u in comp)} include each other: " + "; ".join(closing) + ".")
    text = "\n".join(rows)
    if cycles:
        text += "\n\nCycles between layers (folders that include each other):\n\n" + "\n".join(cycles)
    else:
        text += "\n\nNo two layers include each other."
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["write", "check", "print"])
    ap.add_argument("--root", default=os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
    a = ap.parse_args()
    now = region(a.root)
    if a.command == "print":
        print(now)
        return 0
    path = os.path.join(a.root, DOC)
    try:
        if a.command == "write":
            docgen.rewrite(path, PREFIX, {"layers": now})
            print(f"{DOC}: the layers rewritten from the #include lines")
            return 0
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        if docgen.replace(text, PREFIX, {"layers": now}, DOC) != text:
            print(f"{DOC}: the layers table is not what the #include lines draw today; what they draw:\n\n{now}\n\n"
                  f"run `python3 tools/layers.py write` (and say in the text what changed)")
            return 1
    except docgen.RegionError as e:
        print(f"{DOC}: {e}")
        return 1
    print(f"{DOC}: the layers table is what the #include lines draw")
    return 0


if __name__ == "__main__":
    sys.exit(main())
