#!/usr/bin/env python3
"""The per-node overhead benchmark (docs/performance.md, "Per-node overhead"): TensorBridge's model_bench
against ONNX Runtime's ort_runner.py (bench/models/) on models of many tiny nodes, interleaved, one process
per configuration, and the time per node of each.

Models: chains of alternating Add (with a constant) and Relu on 16 floats, written here with 100 and 1000
nodes: the difference of their medians over the 900 extra nodes is the cost of one node with the per-run
cost (binding inputs, handing out outputs, the runner's own loop) taken out; and any ONNX model given with
--model (its inputs in DIR/<input>.npy next to it, as the real set has them), reported as median / nodes.
The node count is the ONNX graph's, before either runtime's optimisations: both get the same count.

Each round runs ONNX Runtime then TensorBridge (at each level) once per model; a configuration's latency
is the median of all its timed runs over all rounds. Prints a markdown table and writes OUT/overhead.json.

Usage: overhead.py --runner PATH/model_bench --out DIR [--model NAME=PATH.onnx:INPUTS_DIR ...]
                   [--threads 1] [--levels O2] [--runs 200] [--rounds 3] [--warmup 20]"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUNNER = os.path.join(HERE, "..", "models", "ort_runner.py")
WIDTH = 16


def chain_model(n_nodes, path, inputs_dir):
    """x[16] -> Add(c0) -> Relu -> Add(c1) -> Relu ... n_nodes nodes; writes the model and x.npy."""
    rng = np.random.default_rng(n_nodes)
    nodes, inits, prev = [], [], "x"
    for i in range(n_nodes):
        out = "y" if i == n_nodes - 1 else f"t{i}"
        if i % 2 == 0:
            c = numpy_helper.from_array(rng.uniform(-0.5, 0.5, WIDTH).astype(np.float32), f"c{i}")
            inits.append(c)
            nodes.append(helper.make_node("Add", [prev, c.name], [out], name=f"add{i}"))
        else:
            nodes.append(helper.make_node("Relu", [prev], [out], name=f"relu{i}"))
        prev = out
    graph = helper.make_graph(nodes, f"chain_{n_nodes}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [WIDTH])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [WIDTH])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    os.makedirs(inputs_dir, exist_ok=True)
    np.save(os.path.join(inputs_dir, "x.npy"), rng.standard_normal(WIDTH).astype(np.float32))


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
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH.onnx:INPUTS_DIR")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--levels", default="O2")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=20)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    models = []  # (name, path, inputs, nodes)
    for n in (100, 1000):
        path = os.path.join(a.out, f"chain_{n}.onnx")
        inputs = os.path.join(a.out, f"chain_{n}_inputs")
        chain_model(n, path, inputs)
        models.append((f"chain_{n}", path, inputs, n))
    for spec in a.model:
        name, rest = spec.split("=", 1)
        path, inputs = rest.rsplit(":", 1)
        models.append((name, path, inputs, len(onnx.load(path, load_external_data=False).graph.node)))

    levels = a.levels.split(",")
    per_round = max(1, -(-a.runs // a.rounds))
    times = {}  # (model, threads, runner) -> [ms]
    loads = [load_average()]
    for threads in a.threads.split(","):
        for r in range(a.rounds):
            for name, path, inputs, _ in models:
                common = ["--inputs", inputs, "--threads", threads, "--warmup", str(a.warmup), "--runs", str(per_round)]
                cmds = [("ort", [sys.executable, ORT_RUNNER, path] + common)]
                cmds += [(lv, [a.runner, path, "--level", lv] + common) for lv in levels]
                for runner, cmd in cmds:
                    res = run_json(cmd)
                    if "error" in res:
                        sys.exit(f"overhead.py: {name} on {runner}, {threads} threads: {res['error']}")
                    times.setdefault((name, threads, runner), []).extend(res["times_ms"])
            print(f"round {r + 1}/{a.rounds} ({threads} threads) done, load {load_average()}", file=sys.stderr)
            loads.append(load_average())

    med = {k: float(np.median(v)) for k, v in times.items()}
    rows, out = [], {"load_averages": loads, "runs": a.runs, "rounds": a.rounds, "results": []}
    header = "| model | nodes | threads | ONNX Runtime us/node | " + " | ".join(f"tb {lv} us/node | ORT/tb {lv}" for lv in levels) + " |"
    rows.append(header)
    rows.append("|" + "---|" * (4 + 2 * len(levels)))

    def add_row(label, nodes, threads, per_node):
        cells = [label, str(nodes), threads, f"{per_node['ort']:.3f}"]
        for lv in levels:
            cells += [f"{per_node[lv]:.3f}", f"{per_node['ort'] / per_node[lv]:.2f}"]
        rows.append("| " + " | ".join(cells) + " |")
        out["results"].append({"model": label, "nodes": nodes, "threads": int(threads), "us_per_node": per_node})

    for threads in a.threads.split(","):
        runners = ["ort"] + levels
        add_row("chain 1000 - chain 100 (Add/Relu, 16 floats)", 900, threads,
                {r: (med[("chain_1000", threads, r)] - med[("chain_100", threads, r)]) * 1e3 / 900 for r in runners})
        for name, _, _, nodes in models:
            add_row(name, nodes, threads, {r: med[(name, threads, r)] * 1e3 / nodes for r in runners})
    table = "\n".join(rows)
    print(table)
    print(f"load average (1, 5, 15 min) before and after each round: {'; '.join(loads)}")
    with open(os.path.join(a.out, "overhead.json"), "w") as f:
        json.dump(out, f, indent=1)
    with open(os.path.join(a.out, "overhead.md"), "w") as f:
        f.write(table + "\n")


if __name__ == "__main__":
    main()
