#!/usr/bin/env python3
"""Where a CNN's time goes, ours against ONNX Runtime's, grouped by what matters for mobile CNNs: the stem,
depthwise convolutions by kernel, stride and input map, 1x1 convolutions by map, the squeeze-excite block
(GlobalAveragePool, its 1x1 convolutions on 1x1 maps, HardSigmoid / Sigmoid and the Mul that scales the
planes), unfused activations, Add, the classifier, and ONNX Runtime's layout reorders.

Ours: `tb run MODEL --threads 1 --profile --json` (per node, the fused activation inside its Conv); ONNX
Runtime: its own profiler (SessionOptions.enable_profiling, 1 intra-op thread, its `_kernel_time` events).
Each side runs PROCS processes, alternated; per node the smallest of the processes' per-run means is kept (the
machine is shared: the least disturbed process). Nodes are grouped through the ONNX graph (shape inference for
the map sizes); ONNX Runtime's
nodes (NCHWc ones have generated names) are grouped by their op and shapes, an activation it left unfused
after a convolution (QuickGelu for SiLU) with that convolution as ours fuses it, its reorders as a group.
Run with build/real-venv's python (onnx, onnxruntime):

  build/real-venv/bin/python bench/models/profile_groups.py MODEL.onnx --tb build/ci/tb --input DIR/input.npy
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import shape_inference


def shapes_of(model):
    inferred = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = vi.type.tensor_type.shape.dim
        shapes[vi.name] = [d.dim_value if d.HasField("dim_value") else -1 for d in dims]
    for init in inferred.graph.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def group_of(node, shapes):
    """The group of one ONNX node, from its op, attributes and input shapes."""
    op = node.op_type
    x = shapes.get(node.input[0], []) if node.input else []
    hw = f"{x[2]}x{x[3]}" if len(x) == 4 else "?"
    if op == "Conv":
        w = shapes.get(node.input[1], [])
        group = attr(node, "group", 1)
        k = list(attr(node, "kernel_shape", w[2:] if len(w) == 4 else []))
        s = list(attr(node, "strides", [1, 1]))[0]
        ks = "x".join(str(v) for v in k)
        if len(x) == 4 and x[1] == 3:
            return f"stem {ks} s{s} @{hw}"
        if group > 1 and len(x) == 4 and group == x[1]:
            return f"depthwise {ks} s{s} @{hw}"
        if len(x) == 4 and x[2] == 1 and x[3] == 1:
            return "SE 1x1 convs (1x1 map)"
        if ks == "1x1":
            return f"pointwise 1x1 @{hw}"
        return f"conv {ks} s{s} @{hw}"
    if op in ("GlobalAveragePool",):
        return "SE GlobalAveragePool"
    if op in ("HardSigmoid",) or (op == "Sigmoid" and len(x) == 4 and x[2] == 1 and x[3] == 1):
        return "SE HardSigmoid/Sigmoid (1x1 map)"
    if op == "Mul" and len(node.input) == 2:
        a, b = shapes.get(node.input[0], []), shapes.get(node.input[1], [])
        if len(a) == 4 and len(b) == 4 and (a[2:] == [1, 1]) != (b[2:] == [1, 1]):
            return "SE Mul (scale planes)"
        return "Mul (SiLU's)"
    if op == "Sigmoid":
        return "Sigmoid (SiLU's)"
    if op in ("HardSwish",):
        return "HardSwish (unfused)"
    if op == "Add":
        return "Add (residual, unfused)"
    if op in ("Gemm", "MatMul", "Flatten", "Reshape") or (len(x) == 2):
        return "classifier"
    return op


def ours(tb, model, inp, repeat):
    out = subprocess.run([tb, "run", model, "--threads", "1", "--repeat", str(repeat), "--profile", "--json",
                          "--input", "input=" + inp], check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return {e["node"]: e["ms_per_run"] for e in d["profile"]}, d["run_ms_median"]


def theirs(model, inp, repeat):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    tmp = tempfile.mkdtemp(prefix="ortprof")
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(tmp, "p")
    s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    feeds = {s.get_inputs()[0].name: np.load(inp)}
    for _ in range(5):
        s.run(None, feeds)
    import time
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        s.run(None, feeds)
        times.append((time.perf_counter() - t0) * 1e3)
    path = s.end_profiling()
    events = json.load(open(path))
    for f in glob.glob(os.path.join(tmp, "*")):
        os.remove(f)
    os.rmdir(tmp)
    per = collections.defaultdict(float)
    previous = None
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            g = ort_group(e["args"])
            if g is None:  # an activation ORT left after a convolution: ours has it inside the convolution
                g = previous
            per[g] += e["dur"] / 1e3
            previous = g
    runs = repeat + 5
    return {k: v / runs for k, v in per.items()}, float(np.median(times))


def ort_group(args):
    """The group of one ONNX Runtime node from its op and shapes (its NCHWc nodes have generated names)."""
    op = args.get("op_name", "?")
    ins = [list(d.values())[0] for d in args.get("input_type_shape", [])]
    outs = [list(d.values())[0] for d in args.get("output_type_shape", [])]
    x = ins[0] if ins else []
    hw = f"{x[2]}x{x[3]}" if len(x) == 4 else "?"
    if op in ("Conv", "FusedConv"):
        w = ins[1]
        k = f"{w[2]}x{w[3]}"
        s = x[2] // outs[0][2] if outs and len(outs[0]) == 4 and outs[0][2] else 1
        if w[1] == 3 and x[1] in (3, 4):
            return f"stem {k} s{s} @{hw}"
        if w[1] == 1 and w[2] > 1:
            return f"depthwise {k} s{s} @{hw}"
        if x[2:] == [1, 1]:
            return "SE 1x1 convs (1x1 map)"
        if k == "1x1":
            return f"pointwise 1x1 @{hw}"
        return f"conv {k} s{s} @{hw}"
    if op in ("QuickGelu",) or (op in ("HardSigmoid", "Sigmoid", "Relu", "HardSwish", "Clip") and len(x) == 4
                                and x[2:] != [1, 1]):
        return None
    if op == "GlobalAveragePool":
        return "SE GlobalAveragePool"
    if op in ("HardSigmoid", "Sigmoid") and len(x) == 4:
        return "SE HardSigmoid/Sigmoid (1x1 map)"
    if op == "Mul" and len(ins) == 2 and len(ins[0]) == 4 and len(ins[1]) == 4 and \
            (ins[0][2:] == [1, 1]) != (ins[1][2:] == [1, 1]):
        return "SE Mul (scale planes)"
    if op in ("ReorderInput", "ReorderOutput"):
        return "ORT layout reorders"
    if op == "Add":
        return "Add (residual, unfused)"
    if op in ("Gemm", "MatMul", "Flatten", "Reshape") or len(x) == 2:
        return "classifier"
    return op


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--tb", default="build/ci/tb")
    ap.add_argument("--input", required=True)
    ap.add_argument("--repeat", type=int, default=100)
    ap.add_argument("--procs", type=int, default=3)
    ap.add_argument("--json", help="write the per-group table here too")
    a = ap.parse_args()
    model = onnx.load(a.model)
    shapes = shapes_of(model)
    groups = {n.name: group_of(n, shapes) for n in model.graph.node}

    best_ours, best_theirs, med_ours, med_theirs = {}, {}, [], []
    for _ in range(a.procs):
        o, mo = ours(a.tb, a.model, a.input, a.repeat)
        t, mt = theirs(a.model, a.input, a.repeat)
        med_ours.append(mo)
        med_theirs.append(mt)
        for k, v in o.items():
            best_ours[k] = min(v, best_ours.get(k, v))
        for k, v in t.items():
            best_theirs[k] = min(v, best_theirs.get(k, v))

    table = collections.defaultdict(lambda: [0.0, 0.0, 0, 0])
    for name, ms in best_ours.items():
        g = groups.get(name, "other (ours: " + name + ")")
        table[g][0] += ms
        table[g][2] += 1
    for g, ms in best_theirs.items():
        table[g][1] += ms
        table[g][3] += 1
    rows = sorted(table.items(), key=lambda kv: -(kv[1][0] - kv[1][1]))
    print(f"model {os.path.basename(a.model)}: run median ours {min(med_ours):.3f} ms, ORT {min(med_theirs):.3f} ms "
          f"(least of {a.procs} processes' medians)")
    print("| group | ours ms | ORT ms | ours - ORT | nodes ours / ORT groups |")
    print("| --- | ---: | ---: | ---: | ---: |")
    so, st = 0.0, 0.0
    for g, (o, t, no, nt) in rows:
        so += o
        st += t
        print(f"| {g} | {o:.3f} | {t:.3f} | {o - t:+.3f} | {no} / {nt} |")
    print(f"| **sum of nodes** | {so:.3f} | {st:.3f} | {so - st:+.3f} | |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"groups": {g: v for g, v in table.items()}, "ours": best_ours, "ort": best_theirs}, f, indent=1)


if __name__ == "__main__":
    main()
