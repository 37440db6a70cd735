#!/usr/bin/env python3
"""The include_layers test: every #include between the folders of src/ goes down the order written in
tests/layers/order.txt, and so does every #include between the subfolders of a folder that has a [folder]
section there; no file of src/ reaches itself through its #includes; with --objects, no two files of one
folder of src/ use each other's symbols in the built library (a link cycle) unless order.txt's [link
cycles] still lists that cycle; cli/ and python/ include only the public headers (include/tensorbridge/)
and their own files; kernels (src/backend/) never read a node, a graph or an attribute (they get the typed
parameters, issue 14), and model/, tools/ and checkpoint/ reach a backend only through backend/'s own headers
(backend/kernel.h, backend_impl.h, tensor/), never a backend's folder.

Usage: check_layers.py REPO_ROOT [--nm NM --objects 'a.c.o;b.c.o;...']
Prints one line per problem (file:line, the included file, the edge and why; or the cycle) and exits 1;
prints the edge counts and exits 0 when the tree is clean; exits 2 when order.txt cannot be read or nm
cannot read the objects. Between folders a cycle needs an edge that goes up, so checking every edge
against the order finds every cycle too; an edge whose reverse also exists is marked as closing a cycle.
"""
import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cycles import components, link_graph  # noqa: E402
from order_file import read_order  # noqa: E402

QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ANGLED = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
SOURCES = (".c", ".h", ".cpp", ".cc")
ORDER_PATH = "tests/layers/order.txt"


def walk(top):
    return sorted(os.path.join(dp, f) for dp, _, fs in os.walk(top) for f in fs if f.endswith(SOURCES))


def include_edges(src_files, known):
    """Every #include "..." of src/ that names a file of src/ or include/: (file, line, target)."""
    found = []
    for f in src_files:
        with open(f, errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                m = QUOTED.match(text)
                if not m:
                    continue
                for cand in (os.path.normpath(os.path.join(os.path.dirname(f), m.group(1))), "src/" + m.group(1)):
                    if cand in known:
                        found.append((f, n, cand))
                        break
    return found


def check_order(found, part_of, rank, where, edges):
    """Problems for the edges between the parts part_of names (None: outside) that do not go down rank."""
    problems, crossing = [], []
    for f, n, cand in found:
        a, b = part_of(f), part_of(cand)
        if a is None or b is None or a == b:
            continue
        edges[(a, b)] += 1
        crossing.append((f, n, cand, a, b))
    pairs = {(a, b) for _, _, _, a, b in crossing}
    for f, n, cand, a, b in crossing:
        if a not in rank or b not in rank:
            continue  # reported as missing from the order
        if rank[b] >= rank[a]:
            why = "goes up" if rank[b] > rank[a] else "joins two peers"
            if (b, a) in pairs:
                why += " and closes a cycle (%s also includes %s)" % (b, a)
            problems.append("%s:%d: includes %s: edge %s -> %s %s (see %s); move the declaration down or the file up"
                            % (f, n, cand, a, b, why, where))
    return problems


def check_sections(found, sections):
    """The order inside each folder with a [folder] section; returns (problems, edge counts per folder)."""
    problems, counts = [], {}
    for folder, rank in sorted(sections.items()):
        top = "src/" + folder
        where = "[%s] in %s" % (folder, ORDER_PATH)
        if not os.path.isdir(top):
            problems.append("%s: no such folder for %s; fix the section's name or remove it" % (top, where))
            continue
        subs = sorted(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d)) and walk(os.path.join(top, d)))
        own = any(os.path.isfile(os.path.join(top, f)) and f.endswith(SOURCES) for f in os.listdir(top))
        for sub in subs:
            if sub not in rank:
                problems.append("%s/%s/: subfolder not in %s; add it on the line of its layer" % (top, sub, where))
        if own and "." not in rank:
            problems.append("%s/: its own files are not placed in %s; add '.' on the line of their layer" % (top, where))
        for name in sorted(set(rank) - set(subs) - {"."}):
            problems.append("%s/%s/: listed in %s but there is no such subfolder with sources; remove it"
                            % (top, name, where))

        def part_of(p, top=top):
            if not p.startswith(top + "/"):
                return None
            rest = p[len(top) + 1:]
            return rest.split("/", 1)[0] if "/" in rest else "."

        edges = collections.Counter()
        problems += check_order(found, part_of, rank, where, edges)
        counts[folder] = edges
    return problems, counts


def check_include_cycles(found):
    graph = collections.defaultdict(set)
    for f, _, cand in found:
        graph[f].add(cand)
    return ["include cycle: %s -> %s; move the declarations one of them needs from the other into a lower header"
            % (" -> ".join(comp), comp[0]) for comp in components(graph)]


def check_link_cycles(nm, objects, allowed):
    graph = link_graph(nm, objects, ".")
    problems, seen = [], set()
    for comp in components(graph):
        seen.add(frozenset(comp))
        if frozenset(comp) in allowed:
            continue
        uses = "; ".join("%s uses %s (%s)" % (os.path.basename(a), os.path.basename(b), ", ".join(sorted(graph[a][b])[:3]))
                         for a in comp for b in sorted(graph[a]) if b in comp)
        problems.append("link cycle between files of %s/: %s; move what the lower file uses from the higher one "
                        "into the lower one (or a file below both)" % (os.path.dirname(comp[0]), uses))
    for cycle in allowed:
        if cycle not in seen:
            problems.append("[link cycles] in %s lists %s, which is no longer a cycle; remove that line"
                            % (ORDER_PATH, " ".join(sorted(cycle))))
    return problems


def check_public_only(problems):
    for top in ("cli", "python"):
        for f in walk(top):
            with open(f, errors="replace") as fh:
                for n, text in enumerate(fh, 1):
                    m = QUOTED.match(text)
                    if m:
                        own = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
                        if own.startswith(top + "/") and os.path.exists(own):
                            continue
                        public = "include/" + m.group(1)
                        if m.group(1).startswith("tensorbridge/") and os.path.exists(public):
                            continue
                        problems.append("%s:%d: includes \"%s\": %s/ may include only its own files and "
                                        "<tensorbridge/...>; use the public API instead" % (f, n, m.group(1), top))
                        continue
                    m = ANGLED.match(text)
                    if m and os.path.exists("src/" + m.group(1)):
                        problems.append("%s:%d: includes <%s>, a private header of src/: %s/ may include only "
                                        "<tensorbridge/...>; use the public API instead" % (f, n, m.group(1), top))


KERNEL_READS = re.compile(r"\btb_attr_\w+\s*\(|\b(?:ctx|q)->(?:node|graph)\b")
CONTRACT = ("src/backend/kernel.c", "src/backend/kernel.h")
BACKEND_FOLDERS = re.compile(r"^backend/(?!tensor/)[^/]+/")


def check_kernels_blind(src_files, problems):
    for f in src_files:
        if not f.startswith("src/backend/") or f in CONTRACT:
            continue
        with open(f, errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                m = KERNEL_READS.search(text)
                if m:
                    problems.append("%s:%d: reads '%s': kernels get the node's typed parameters (ctx->params, "
                                    "q->params) and ctx->op_type/opset/name, never the node, the graph or an "
                                    "attribute (src/backend/kernel.h)" % (f, n, m.group(0).strip()))


def check_backend_reach(found, problems):
    for (f, n, target) in found:
        top = f.split("/")[1] if f.count("/") >= 2 else ""
        if top in ("model", "tools", "checkpoint") and BACKEND_FOLDERS.match(target):
            problems.append("%s:%d: includes \"%s\": %s/ reaches backends only through backend/'s own headers "
                            "(the kernel contract backend/kernel.h, backend_impl.h, tensor/), never one backend's "
                            "folder" % (f, n, target, top))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=".")
    ap.add_argument("--nm", default="nm", help="the nm that reads the objects (CMAKE_NM)")
    ap.add_argument("--objects", default="", help="the library's object files, separated by ';'")
    args = ap.parse_args(argv)
    objects = [os.path.abspath(o) for o in args.objects.split(";") if o]
    os.chdir(args.root)
    try:
        order = read_order(ORDER_PATH)
    except (OSError, ValueError) as e:
        print("include_layers: cannot read the layer order: %s" % e)
        return 2
    rank = order.top
    src_files = walk("src")
    found = include_edges(src_files, set(src_files) | set(walk("include")))
    problems = []

    for folder in sorted({f.split("/")[1] for f in src_files if f.count("/") >= 2} - set(rank)):
        problems.append("src/%s/: folder not in %s; add it on the line of its layer" % (folder, ORDER_PATH))
    edges = collections.Counter()
    problems += check_order(found, lambda p: p.split("/")[1] if p.count("/") >= 2 else None, rank, ORDER_PATH, edges)
    section_problems, section_edges = check_sections(found, order.sections)
    problems += section_problems
    problems += check_include_cycles(found)
    if objects:
        try:
            problems += check_link_cycles(args.nm, objects, set(order.link_cycles))
        except (OSError, ValueError) as e:
            print("include_layers: cannot read the library's symbols: %s" % e)
            return 2
    check_public_only(problems)
    check_kernels_blind(src_files, problems)

    for p in problems:
        print(p)
    if problems:
        print("include_layers: %d problem(s) with the layer order" % len(problems))
        return 1
    for (a, b), c in sorted(edges.items(), key=lambda kv: (rank.get(kv[0][0], 99), rank.get(kv[0][1], 99))):
        print("%12s -> %-12s %5d" % (a, b, c))
    for folder, counts in sorted(section_edges.items()):
        sub_rank = order.sections[folder]
        for (a, b), c in sorted(counts.items(), key=lambda kv: (sub_rank.get(kv[0][0], 99), sub_rank.get(kv[0][1], 99))):
            print("%s: %6s -> %-6s %5d" % (folder, a, b, c))
    print("include_layers: %d edges between %d folders, all downward; %d folder(s) ordered inside; no include "
          "cycle%s" % (sum(edges.values()), len(rank), len(section_edges),
                       "; link cycles only the %d listed" % len(order.link_cycles) if objects else
                       " (link cycles not checked: no --objects)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
