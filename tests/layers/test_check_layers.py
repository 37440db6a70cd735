#!/usr/bin/env python3
"""The include_layers_self_test test: runs check_layers.py on small trees made here, one clean and one
per rule broken (an include up between subfolders, a subfolder missing from its section, an include
cycle, a link cycle in compiled objects, a listed link cycle that is gone, a bad order file), and checks
its exit status and the sentence it prints.

Usage: test_check_layers.py --nm NM --cc CC
"""
import argparse
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")

ORDER = """core
backend
[backend/k]
low
high
.
[link cycles]
%s
"""

BASE = {
    "src/core/a.h": "#define A 1\n",
    "src/backend/k/low/l.h": '#include "core/a.h"\nint tb_l(void);\n',
    "src/backend/k/low/l.c": '#include "backend/k/low/l.h"\nint tb_l(void) { return A; }\n',
    "src/backend/k/high/h.h": '#include "backend/k/low/l.h"\nint tb_h(void);\n',
    "src/backend/k/high/h.c": '#include "backend/k/high/h.h"\nint tb_h(void) { return tb_l() + 1; }\n',
    "src/backend/k/reg.c": '#include "backend/k/high/h.h"\nint tb_reg(void) { return tb_h(); }\n',
}


def make_tree(root, extra, link_cycles=""):
    files = dict(BASE)
    files["tests/layers/order.txt"] = ORDER % link_cycles
    files.update(extra)
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as fh:
            fh.write(text)


def compile_objects(root, cc):
    objects = []
    for dp, _, fs in os.walk(os.path.join(root, "src")):
        for f in fs:
            if f.endswith(".c"):
                src = os.path.join(dp, f)
                obj = os.path.join(root, "build", "lib.dir", os.path.relpath(src, root) + ".o")
                os.makedirs(os.path.dirname(obj), exist_ok=True)
                subprocess.run([cc, "-c", "-I", os.path.join(root, "src"), src, "-o", obj], check=True)
                objects.append(obj)
    return objects


def run_case(args, name, extra, want_rc, want_text, link_cycles="", objects=False):
    with tempfile.TemporaryDirectory() as root:
        make_tree(root, extra, link_cycles)
        cmd = [sys.executable, CHECKER, root]
        if objects:
            cmd += ["--nm", args.nm, "--objects", ";".join(compile_objects(root, args.cc))]
        run = subprocess.run(cmd, capture_output=True, text=True)
    out = run.stdout + run.stderr
    if run.returncode != want_rc or want_text not in out:
        print("FAIL %s: exit %d (want %d), want the text %r in:\n%s" % (name, run.returncode, want_rc, want_text, out))
        return False
    print("ok   %s" % name)
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--cc", default="cc")
    args = ap.parse_args()
    cycle_c = {
        "src/core/p.c": "int tb_q(void);\nint tb_p(int n) { return n ? tb_q() : 0; }\n",
        "src/core/q.c": "int tb_p(int n);\nint tb_q(void) { return tb_p(0); }\n",
    }
    cases = [
        ("clean tree", {}, 0, "1 folder(s) ordered inside; no include cycle; link cycles only the 0 listed", "", True),
        ("include up between subfolders",
         {"src/backend/k/low/l.c": '#include "backend/k/high/h.h"\nint tb_l(void) { return 1; }\n'}, 1,
         "src/backend/k/low/l.c:1: includes src/backend/k/high/h.h: edge low -> high goes up and closes a cycle (high "
         "also includes low) (see [backend/k] in tests/layers/order.txt)", "", False),
        ("subfolder missing from its section", {"src/backend/k/mid/m.c": "int tb_m(void) { return 2; }\n"}, 1,
         "src/backend/k/mid/: subfolder not in [backend/k] in tests/layers/order.txt; add it on the line of its layer",
         "", False),
        ("include cycle", {"src/core/x.h": '#include "core/y.h"\n', "src/core/y.h": '#include "core/x.h"\n'}, 1,
         "include cycle: src/core/x.h -> src/core/y.h -> src/core/x.h", "", False),
        ("link cycle", cycle_c, 1,
         "link cycle between files of src/core/: p.c uses q.c (tb_q); q.c uses p.c (tb_p)", "", True),
        ("listed link cycle", cycle_c, 0, "link cycles only the 1 listed", "src/core/p.c src/core/q.c", True),
        ("listed link cycle that is gone", {}, 1,
         "[link cycles] in tests/layers/order.txt lists src/core/p.c src/core/q.c, which is no longer a cycle",
         "src/core/p.c src/core/q.c", True),
        ("folder listed twice", {"tests/layers/order.txt": "core\nbackend\n[backend/k]\nlow\nhigh low\n"}, 2,
         "'low' is listed twice in [backend/k]; list each folder once", "", False),
    ]
    ok = all([run_case(args, name, extra, rc, text, cycles, objects)
              for name, extra, rc, text, cycles, objects in cases])
    print("include_layers_self_test: %s" % ("all cases pass" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
