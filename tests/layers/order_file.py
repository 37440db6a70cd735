"""Reads tests/layers/order.txt for check_layers.py: the order of the folders of src/, the order inside the
folders that have a [folder] section, and the [link cycles] still allowed.

Format: lines before the first [section] are the folders of src/, lowest first, one layer a line, peers on
one line. A line "[path]" (path relative to src/) starts the order of that folder's subfolders in the
same form, where "." stands for the folder's own files. A line "[link cycles]" starts the list of the
link cycles not broken yet: one cycle a line, its files (relative to the repository) separated by spaces.
"#" starts a comment.
"""
import collections

LINK_CYCLES = "link cycles"

Order = collections.namedtuple("Order", "top sections link_cycles")


def _rank_line(rank, names, line_no, where, path):
    for name in names:
        if name in rank:
            raise ValueError("%s: '%s' is listed twice in %s; list each folder once" % (path, name, where))
        rank[name] = line_no


def read_order(path):
    top, sections, link_cycles = {}, {}, []
    current, where, line_no = top, "the order of src/", 0
    with open(path) as fh:
        for text in fh:
            text = text.split("#", 1)[0].strip()
            if not text:
                continue
            if text.startswith("[") and text.endswith("]"):
                name = text[1:-1].strip().strip("/")
                if name in sections or (name == LINK_CYCLES and link_cycles):
                    raise ValueError("%s: section [%s] appears twice; merge the two" % (path, name))
                if name == LINK_CYCLES:
                    current, where = None, "[%s]" % name
                else:
                    current, where, line_no = {}, "[%s]" % name, 0
                    sections[name] = current
                continue
            if current is None:
                link_cycles.append(frozenset(text.split()))
                continue
            _rank_line(current, text.split(), line_no, where, path)
            line_no += 1
    return Order(top, sections, link_cycles)
