#!/usr/bin/env python3
"""Checks that the code is the map ARCHITECTURE.md draws.

Every `crate::…` and `super::…` path in src/ (the binary aside) is an arrow from the folder of
the file it is written in to the folder of the module it names. Fails when
  - an arrow points up the layers: wire < checks < domain < store < jobs;
  - arrows between folders form a loop (two folders that reach each other);
  - a path ARCHITECTURE.md names (`src/…`, `tests/…`, `scripts/…`, `fixtures/…`) does not exist
    (as written, as a folder, or with `.rs`).
Loops between files of one folder are listed, not failed: a folder is one unit.
Usage: scripts/check-architecture.py   (from the repository's top folder)
"""
import os
import re
import sys

LAYERS = ["wire", "checks", "domain", "store", "jobs"]


def strip(text):
    """The text without comments, strings and chars, so braces and paths are code only."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 20]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            out.append('""')
            i = n if j < 0 else j + len(end)
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            out.append('""')
            i += 1
        elif c == "'" and re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:i + 12]):
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(rel):
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def folder_of(rel):
    return os.path.dirname(rel) or "."


def uses(code):
    """Each path written in `code` with the inline-module nesting it is written in."""
    found, stack, depth = [], [], 0
    token = re.compile(r"\bmod\s+([a-z_][a-z0-9_]*)\s*\{|[{}]|\b(crate|super(?:::super)*)::((?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_*][A-Za-z0-9_]*|\{)")
    for m in token.finditer(code):
        if m.group(1):
            depth += 1
            stack.append((m.group(1), depth))
        elif m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            if stack and stack[-1][1] == depth:
                stack.pop()
            depth -= 1
        else:
            head, rest = m.group(2), m.group(3)
            if rest == "{":
                # `use crate::{a::b, c}`: each item is a path from the head.
                end = code.find("}", m.end())
                for item in re.split(r"[,\s]+", code[m.end():end]):
                    item = re.sub(r"::\{.*", "", item)
                    if re.match(r"[a-z_][a-z0-9_]*", item):
                        found.append((head, item, [s for s, _ in stack]))
            else:
                found.append((head, rest, [s for s, _ in stack]))
    return found


def main():
    src = "src"
    files = {}
    for root, dirs, names in os.walk(src):
        dirs[:] = [d for d in dirs if not (root == src and d == "bin")]
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(root, name)
                files[os.path.relpath(path, src)] = path
    modules = {tuple(module_of(rel)): rel for rel in files}

    def resolve(parts):
        """The file of the longest module prefix of `parts`."""
        for k in range(len(parts), 0, -1):
            if tuple(parts[:k]) in modules:
                return modules[tuple(parts[:k])]
        return None

    file_edges, problems = {}, []
    for rel, path in sorted(files.items()):
        code = strip(open(path, encoding="utf-8").read())
        base = module_of(rel)
        for head, rest, inline in uses(code):
            here = base + inline
            if head == "crate":
                parts = rest.split("::")
            else:
                ups = head.count("super")
                parts = here[: len(here) - ups] + rest.split("::")
            target = resolve(parts)
            if target and target != rel:
                file_edges.setdefault(rel, set()).add(target)

    def layer(rel):
        top = rel.split("/")[0]
        top = top[:-3] if top.endswith(".rs") else top
        return LAYERS.index(top) if top in LAYERS else None

    folder_edges = {}
    for a, targets in file_edges.items():
        for b in targets:
            la, lb = layer(a), layer(b)
            if la is not None and lb is not None and lb > la:
                problems.append(f"upward arrow: {a} ({LAYERS[la]}) uses {b} ({LAYERS[lb]})")
            fa, fb = folder_of(a), folder_of(b)
            if fa != fb:
                folder_edges.setdefault(fa, set()).add(fb)

    for kind, edges in (("folders", folder_edges), ("files", file_edges)):
        for cycle in cycles(edges):
            if kind == "folders":
                problems.append("loop between folders: " + " -> ".join(cycle + [cycle[0]]))
            else:
                dirs = {folder_of(f) for f in cycle}
                if len(dirs) == 1:
                    print("note: loop between files of one folder: " + " -> ".join(cycle + [cycle[0]]))
    problems += missing_paths("ARCHITECTURE.md")
    for p in problems:
        print("error: " + p)
    print(f"{len(files)} files, {sum(map(len, file_edges.values()))} arrows, {len(problems)} problems")
    return 1 if problems else 0


def missing_paths(doc):
    """The paths `doc` names in backquotes that do not exist."""
    if not os.path.exists(doc):
        return [f"{doc} does not exist"]
    text = open(doc, encoding="utf-8").read()
    missing = []
    for path in sorted(set(re.findall(r"`((?:src|tests|scripts|fixtures)/[^`\s]*)`", text))):
        bare = path.rstrip("/")
        if not any(os.path.exists(p) for p in (bare, bare + ".rs")):
            missing.append(f"{doc} names {path}, which does not exist")
    return missing


def cycles(edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    nodes = set(edges) | {b for bs in edges.values() for b in bs}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


if __name__ == "__main__":
    sys.exit(main())
