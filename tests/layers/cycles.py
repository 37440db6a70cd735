"""The cycle finders of check_layers.py: strongly connected components of a file graph, and the link graph
of a library's object files (file A uses a symbol file B defines), read with nm."""
import os
import re
import subprocess

OBJECT = re.compile(r"\.dir/(.+\.(?:c|cc|cpp))\.o$")


def components(graph):
    """The strongly connected components of graph (node -> set of nodes) with more than one node or a
    self-edge, each as a sorted list, iteratively (Tarjan), in a stable order."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                if len(comp) > 1 or node in graph.get(node, ()):
                    found.append(sorted(comp))
    return sorted(found)


def object_sources(objects, root):
    """{object path: source path relative to root} for the build's objects of files under src/ (CMake names
    an object <target>.dir/<source path>.o)."""
    out = {}
    for obj in objects:
        m = OBJECT.search(obj.replace(os.sep, "/"))
        if m and m.group(1).startswith("src/") and os.path.exists(os.path.join(root, m.group(1))):
            out[obj] = m.group(1)
    return out


def link_graph(nm, objects, root):
    """{source: {source of the same folder whose symbols it uses: those symbols}}, from `nm -P -A` over the
    objects.
    Raises OSError / ValueError when nm cannot be run or reads nothing."""
    sources = object_sources(objects, root)
    if not sources:
        raise ValueError("none of the %d object files given is a CMake object of a file under src/" % len(objects))
    run = subprocess.run([nm, "-P", "-A"] + sorted(sources), capture_output=True, text=True)
    if run.returncode != 0:
        raise ValueError("%s failed (exit %d): %s" % (nm, run.returncode, run.stderr.strip()[:300]))
    defined, used = {}, {}
    for line in run.stdout.splitlines():
        path, _, rest = line.rpartition(": ")
        fields = rest.split()
        if path not in sources or len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind == "U":
            used.setdefault(sources[path], set()).add(name)
        elif kind in "TDRBCVWGS":  # global definitions (lower case: local to the object)
            defined[name] = sources[path]
    graph = {src: {} for src in sources.values()}
    for src, names in used.items():
        for name in names:
            owner = defined.get(name)
            if owner and owner != src and os.path.dirname(owner) == os.path.dirname(src):
                graph[src].setdefault(owner, set()).add(name)
    return graph
