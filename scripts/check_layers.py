#!/usr/bin/env python3
"""Checks that latch's #include lines only point down the declared layer order.

Reads the order from scripts/layers.txt (the one place it is declared), then every
`#include "..."` of server/, protocol/ and client/. Fails (exit 1) on:
  - an include from a unit to a unit of a higher layer, unless the layers file lists that
    exact pair as a known exception;
  - a cycle between units (also inside one layer), unless every edge of it is an exception;
  - an exception that no include needs any more (so the list only shrinks);
  - a file of server/src that belongs to no declared unit.

  scripts/check_layers.py          check, print violations
  scripts/check_layers.py --graph  also print every unit-to-unit edge with a count
"""
import collections
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYERS_FILE = os.path.join(ROOT, "scripts", "layers.txt")
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')
# Where a quoted include is looked up, after the including file's own folder.
SEARCH = ["server/src", "server/include", "protocol/include", "protocol/src", "client/include",
          "client/src"]


def read_layers():
    """Returns (rank of each unit, set of excepted (from, to) pairs)."""
    rank, exceptions = {}, set()
    with open(LAYERS_FILE) as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            word, _, rest = line.partition(" ")
            if word == "layer":
                name, _, units = rest.partition(":")
                for unit in units.split():
                    if unit in rank:
                        sys.exit(f"{LAYERS_FILE}:{number}: {unit} declared twice")
                    rank[unit] = layer_rank(name)
            elif word == "allow":
                pair = rest.split("->")
                if len(pair) != 2:
                    sys.exit(f"{LAYERS_FILE}:{number}: expected 'allow FROM -> TO'")
                exceptions.add((pair[0].strip(), pair[1].strip()))
            else:
                sys.exit(f"{LAYERS_FILE}:{number}: unknown line: {line}")
    return rank, exceptions


_layer_index = {}


def layer_rank(name):
    """The rank of the layer `name`: its position among the layers of the file."""
    return _layer_index.setdefault(name.strip(), len(_layer_index))


def unit_of(path):
    """The unit a repository file belongs to, or None for files outside the checked tree."""
    parts = os.path.relpath(path, ROOT).split(os.sep)
    if parts[0] in ("protocol", "client"):
        return parts[0]
    if parts[0] != "server":
        return None
    if parts[1] == "include":
        return "api"
    if len(parts) == 3:  # a file directly in server/src
        return "file:" + os.path.splitext(parts[2])[0]
    return parts[2]


def resolve(source, name):
    for base in [os.path.dirname(source)] + [os.path.join(ROOT, s) for s in SEARCH]:
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def collect_edges():
    edges = collections.defaultdict(list)  # (from, to) -> ["file -> include", ...]
    units = set()
    for top in ("server", "protocol", "client"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith((".h", ".cpp")):
                    continue
                source = os.path.join(folder, f)
                a = unit_of(source)
                units.add(a)
                with open(source, errors="replace") as text:
                    for line in text:
                        m = INCLUDE.match(line)
                        target = m and resolve(source, m.group(1))
                        if not target:
                            continue
                        b = unit_of(target)
                        if b is not None and b != a:
                            edges[(a, b)].append(
                                f"{os.path.relpath(source, ROOT)} -> {m.group(1)}")
    return edges, units


def find_cycles(pairs):
    """Strongly connected components (Tarjan) of more than one unit."""
    graph = collections.defaultdict(set)
    for a, b in pairs:
        graph[a].add(b)
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    rank, exceptions = read_layers()
    edges, units = collect_edges()
    problems = []
    for unit in sorted(u for u in units if u not in rank):
        problems.append(f"unit {unit} is in no layer of scripts/layers.txt")
    for (a, b), where in sorted(edges.items()):
        if a in rank and b in rank and rank[b] > rank[a] and (a, b) not in exceptions:
            problems.append(f"upward include {a} -> {b}  (" + "; ".join(where[:3]) + ")")
    checked = [(a, b) for (a, b) in edges if (a, b) not in exceptions]
    for cycle in find_cycles(checked):
        problems.append("folder cycle: " + " <-> ".join(cycle))
    for a, b in sorted(exceptions - set(edges)):
        problems.append(f"stale exception 'allow {a} -> {b}': nothing includes that way any more")
    if "--graph" in sys.argv:
        for (a, b), where in sorted(edges.items()):
            mark = " (exception)" if (a, b) in exceptions else ""
            print(f"{a:24} -> {b:24} {len(where):3}{mark}")
    for p in problems:
        print("check-layers: " + p)
    if problems:
        return 1
    print(f"check-layers: {len(units)} units, {len(edges)} unit-to-unit edges, "
          f"{len(exceptions)} known exceptions, no new upward include and no new cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
