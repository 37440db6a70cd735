#!/usr/bin/env python3
"""The include_layers test: every #include between the folders of src/ goes down the order written in
tests/layers/order.txt, and cli/ and python/ include only the public headers (include/tensorbridge/) and
their own files.

Usage: check_layers.py REPO_ROOT
Prints one line per offending include (file:line, the included file, the edge and why) and exits 1;
prints the edge counts and exits 0 when the tree is clean; exits 2 when order.txt cannot be read.
Between folders a cycle needs an edge that goes up, so checking every edge against the order finds
every cycle too; an edge whose reverse also exists is marked as closing a cycle.
"""
import collections
import os
import re
import sys

QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
ANGLED = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
SOURCES = (".c", ".h", ".cpp", ".cc")


def read_order(path):
    rank, line_no = {}, 0
    with open(path) as fh:
        for line in fh:
            names = line.split("#", 1)[0].split()
            if not names:
                continue
            for name in names:
                if name in rank:
                    raise ValueError("%s: folder '%s' is listed twice; list each folder of src/ once" % (path, name))
                rank[name] = line_no
            line_no += 1
    return rank


def walk(top):
    return sorted(os.path.join(dp, f) for dp, _, fs in os.walk(top) for f in fs if f.endswith(SOURCES))


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    os.chdir(root)
    order_path = "tests/layers/order.txt"
    try:
        rank = read_order(order_path)
    except (OSError, ValueError) as e:
        print("include_layers: cannot read the layer order: %s" % e)
        return 2
    src_files = walk("src")
    known = set(src_files) | set(walk("include"))
    problems = []

    for folder in sorted({f.split("/")[1] for f in src_files if f.count("/") >= 2} - set(rank)):
        problems.append("src/%s/: folder not in %s; add it on the line of its layer" % (folder, order_path))

    def layer(p):
        return p.split("/")[1] if p.count("/") >= 2 else None

    edges = collections.Counter()
    found = []  # (file, line, target, from, to)
    for f in src_files:
        with open(f, errors="replace") as fh:
            for n, text in enumerate(fh, 1):
                m = QUOTED.match(text)
                if not m:
                    continue
                for cand in (os.path.normpath(os.path.join(os.path.dirname(f), m.group(1))), "src/" + m.group(1)):
                    if cand in known:
                        a, b = layer(f), layer(cand)
                        if a != b:
                            edges[(a, b)] += 1
                            found.append((f, n, cand, a, b))
                        break
    for f, n, cand, a, b in found:
        if a not in rank or b not in rank:
            continue  # reported above as a folder missing from the order
        if rank[b] >= rank[a]:
            why = "goes up" if rank[b] > rank[a] else "joins two peers"
            if (b, a) in edges:
                why += " and closes a cycle (%s also includes %s)" % (b, a)
            problems.append("%s:%d: includes %s: edge %s -> %s %s (see %s); move the declaration down or the file up"
                            % (f, n, cand, a, b, why, order_path))

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

    for p in problems:
        print(p)
    if problems:
        print("include_layers: %d problem(s) with the layer order" % len(problems))
        return 1
    for (a, b), c in sorted(edges.items(), key=lambda kv: (rank.get(kv[0][0], 99), rank.get(kv[0][1], 99))):
        print("%12s -> %-12s %5d" % (a, b, c))
    print("include_layers: %d edges between %d folders, all downward" % (sum(edges.values()), len(rank)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
