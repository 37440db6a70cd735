#!/usr/bin/env python3
"""Thread scaling of the real set (docs/performance.md, "Thread scaling"): each model at one level on 1 and
on N threads with model_bench, and optionally ONNX Runtime (ort_runner.py) on the same thread counts as the
peer, interleaved round by round, one process per configuration. Prints a markdown table of the medians and
the speed-up (1-thread median / N-thread median) of each, and writes OUT/scaling.json.

--baseline PATH/model_bench adds another build of model_bench (e.g. the main branch's) as a third runner,
"base", to compare a change's scaling with the code before it in the same rounds.

Usage: scaling.py --runner PATH/model_bench --models DIR --out DIR [--only a,b] [--threads 1,2] [--level O2]
                  [--runs 6] [--rounds 2] [--warmup 1] [--ort] [--baseline PATH/model_bench]"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUNNER = os.path.join(HERE, "..", "models", "ort_runner.py")


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines() or [f"exit code {p.returncode}"]
        return {"error": lines[-1][:300]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--models", required=True, help="the real set's directory (manifest.json)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--level", default="O2")
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--ort", action="store_true", help="ONNX Runtime on the same thread counts as the peer")
    ap.add_argument("--baseline", help="another model_bench build, run as 'base' in the same rounds")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.models, "manifest.json")) as f:
        manifest = json.load(f)
    only = set(filter(None, a.only.split(",")))
    models = [m for m in manifest["models"] if not only or m["name"] in only]
    threads = a.threads.split(",")
    runners = (["ort"] if a.ort else []) + (["base"] if a.baseline else []) + ["tb"]
    per_round = max(1, -(-a.runs // a.rounds))
    results, loads = [], [load_average()]
    for m in models:
        name = m["name"]
        path = os.path.join(a.models, name + ".onnx")
        inputs = os.path.join(a.models, name, "inputs")
        times = {}
        for _ in range(a.rounds):
            for t in threads:
                for runner in runners:
                    common = ["--inputs", inputs, "--threads", t, "--warmup", str(a.warmup), "--runs", str(per_round)]
                    exe = a.baseline if runner == "base" else a.runner
                    cmd = ([sys.executable, ORT_RUNNER, path] + common if runner == "ort"
                           else [exe, path, "--level", a.level] + common)
                    res = run_json(cmd)
                    if "error" in res:
                        print(f"scaling.py: {name}, {runner}, {t} threads: {res['error']}", file=sys.stderr)
                        continue
                    times.setdefault((runner, t), []).extend(res["times_ms"])
        load = load_average()
        loads.append(load)
        med = {f"{r}/{t}": float(np.median(v)) for (r, t), v in times.items()}
        results.append({"model": name, "median_ms": med, "load": load})
        print(f"{name}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in med.items()) + f" (load {load})", file=sys.stderr)

    hi = threads[-1]
    head = "| model | " + " | ".join(f"{r} {t} thr (ms)" for r in runners for t in threads)
    head += " | " + " | ".join(f"{r} speed-up 1->{hi}" for r in runners) + " | load (1 min) |"
    rows = [head, "|" + "---|" * (2 + len(runners) * (len(threads) + 1))]
    for res in results:
        med = res["median_ms"]
        cells = [res["model"]]
        cells += [f"{med[f'{r}/{t}']:.3f}" if f"{r}/{t}" in med else "-" for r in runners for t in threads]
        for r in runners:
            one, many = med.get(f"{r}/{threads[0]}"), med.get(f"{r}/{hi}")
            cells.append(f"{one / many:.2f}" if one and many else "-")
        cells.append(res["load"].split()[0])
        rows.append("| " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    print(table)
    print(f"load average (1, 5, 15 min) at the start and after each model: {'; '.join(loads)}")
    with open(os.path.join(a.out, "scaling.json"), "w") as f:
        json.dump({"level": a.level, "threads": threads, "runs": a.runs, "rounds": a.rounds, "loads": loads,
                   "results": results}, f, indent=1)
    with open(os.path.join(a.out, "scaling.md"), "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
