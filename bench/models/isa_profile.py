#!/usr/bin/env python3
"""Where the AVX2 paths lag: each model profiled by `tb run --profile --json` on 1 thread twice in turn,
with TB_CPU_FEATURES=-avx512f,-amx (TensorBridge as on an AVX2-only CPU, docs/cpu.md) and without it, and
per operator and kernel the time masked against unmasked. Lists the nodes whose masked kernel is a
reference one, or whose masked time is above --slow (default 2.5: the 2x of the lanes, plus noise) times
the unmasked one, with the share of the masked model's time they take.

Usage: isa_profile.py --tb PATH/tb --models DIR (a manifest.json folder, or a folder of models with
       inputs/ beside them) [--only NAME,NAME] [--repeat 6] [--level O2] [--slow 2.5] [--mask -avx512f,-amx]
       [--json OUT]"""
import argparse
import json
import os
import subprocess
import sys


def profile(tb, path, inputs, level, repeat, mask):
    cmd = [tb, "run", path, "--level", level, "--threads", "1", "--repeat", str(repeat), "--profile", "--json"]
    for name in sorted(os.listdir(inputs)):
        cmd += ["--input", f"{name[:-4]}={os.path.join(inputs, name)}"]
    env = dict(os.environ)
    env.pop("TB_CPU_FEATURES", None)
    if mask:
        env["TB_CPU_FEATURES"] = mask
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {(p.stderr or p.stdout).strip().splitlines()[-1:]}")
    return json.loads(p.stdout)["profile"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tb", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--level", default="O2")
    ap.add_argument("--slow", type=float, default=2.5)
    ap.add_argument("--mask", default="-avx512f,-amx")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    with open(os.path.join(a.models, "manifest.json")) as f:
        models = json.load(f)["models"]
    only = [n for n in a.only.split(",") if n]
    report = []
    for m in models:
        if only and m["name"] not in only:
            continue
        masked = profile(a.tb, m["path"], m["inputs"], a.level, a.repeat, a.mask)
        plain = profile(a.tb, m["path"], m["inputs"], a.level, a.repeat, "")
        total_m = sum(e["ms_per_run"] for e in masked) or 1.0
        total_p = sum(e["ms_per_run"] for e in plain) or 1.0
        by_node = {(e["graph"], e["node"], e["op"]): e for e in plain}
        ops = {}
        flagged = []
        for e in masked:
            u = by_node.get((e["graph"], e["node"], e["op"]))
            key = (e["op"], e["kernel"])
            o = ops.setdefault(key, {"op": e["op"], "kernel": e["kernel"], "nodes": 0, "masked_ms": 0.0,
                                     "unmasked_ms": 0.0, "unmasked_kernels": set()})
            o["nodes"] += 1
            o["masked_ms"] += e["ms_per_run"]
            if u:
                o["unmasked_ms"] += u["ms_per_run"]
                o["unmasked_kernels"].add(u["kernel"])
            ratio = e["ms_per_run"] / u["ms_per_run"] if u and u["ms_per_run"] > 0 else float("inf")
            share = 100.0 * e["ms_per_run"] / total_m
            if (e["kernel"] == "reference" or ratio > a.slow) and share >= 0.5:
                flagged.append({"node": e["node"], "op": e["op"], "kernel": e["kernel"],
                                "unmasked_kernel": u["kernel"] if u else "?", "masked_ms": e["ms_per_run"],
                                "unmasked_ms": u["ms_per_run"] if u else None, "ratio": ratio, "share": share})
        rows = sorted(ops.values(), key=lambda o: -o["masked_ms"])
        for o in rows:
            o["unmasked_kernels"] = sorted(o["unmasked_kernels"])
        flagged.sort(key=lambda f: -f["share"])
        report.append({"model": m["name"], "masked_ms": total_m, "unmasked_ms": total_p, "operators": rows,
                       "flagged": flagged})
        print(f"== {m['name']}: masked {total_m:.2f} ms, unmasked {total_p:.2f} ms, ratio {total_m / total_p:.2f}")
        for o in rows[:6]:
            r = o["masked_ms"] / o["unmasked_ms"] if o["unmasked_ms"] > 0 else float("inf")
            print(f"   {o['op']:<26} {o['nodes']:>4} nodes  {o['masked_ms']:9.3f} / {o['unmasked_ms']:9.3f} ms "
                  f"({r:.2f}x, {100 * o['masked_ms'] / total_m:4.1f}%)  {o['kernel']}  <- {', '.join(o['unmasked_kernels'])}")
        for f in flagged[:8]:
            print(f"   flagged {f['op']} {f['node']}: {f['masked_ms']:.3f} ms ({f['ratio']:.2f}x, {f['share']:.1f}%) "
                  f"{f['kernel']} <- {f['unmasked_kernel']}")
        sys.stdout.flush()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
