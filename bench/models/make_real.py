#!/usr/bin/env python3
"""Writes the real set (docs/benchmarking.md, "Real set"): the architectures of real_models.py with seeded
random weights, exported by torch.onnx at opset 17 (the TorchScript exporter, dynamo=False: the issue's
opset; the dynamo exporter writes opset 18 and up), with their inputs and ONNX Runtime's outputs as
references. Nothing is downloaded from a model hub.

For each model: OUT/<name>.onnx, OUT/<name>/inputs/<input>.npy, OUT/<name>/reference/<output>.npy (ONNX
Runtime, CPU provider, 1 thread, all graph optimizations) and in OUT/manifest.json its description, node and
parameter counts, the operator types, and how far ONNX Runtime's outputs are from PyTorch's (the export
check). A model whose export or ORT run fails is listed in the manifest with its error and left out of the
set. The same package versions and seed write the same inputs and weights.

Usage: make_real.py OUT [--quick] [--only NAME,NAME]"""
import argparse
import collections
import json
import os
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_models  # noqa: E402

OPSET = 17


def export(entry, path):
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(entry.module, entry.inputs, path, opset_version=OPSET, dynamo=False,
                          input_names=entry.input_names, output_names=entry.output_names, do_constant_folding=True)


def describe(path):
    m = onnx.load(path)
    ops = collections.Counter(n.op_type for n in m.graph.node)
    params = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
    return {"nodes": len(m.graph.node), "parameters": params, "opset": m.opset_import[0].version,
            "operators": dict(sorted(ops.items()))}


def ort_outputs(path, feeds):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    session = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return [(o.name, v) for o, v in zip(session.get_outputs(), session.run(None, feeds))]


def torch_outputs(entry):
    with torch.no_grad():
        out = entry.module(*entry.inputs)
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [t.detach().numpy() for t in out]


def make(entry, out):
    path = os.path.join(out, entry.name + ".onnx")
    inputs_dir = os.path.join(out, entry.name, "inputs")
    ref_dir = os.path.join(out, entry.name, "reference")
    os.makedirs(inputs_dir, exist_ok=True)
    os.makedirs(ref_dir, exist_ok=True)
    record = {"name": entry.name, "what": entry.what, "path": path, "inputs": inputs_dir, "reference": ref_dir}
    try:
        export(entry, path)
        record.update(describe(path))
        feeds = dict(zip(entry.input_names, real_models.as_numpy(entry.inputs)))
        for name, value in feeds.items():
            np.save(os.path.join(inputs_dir, name + ".npy"), value)
        ref = ort_outputs(path, feeds)
        for name, value in ref:
            np.save(os.path.join(ref_dir, name + ".npy"), value)
        expected = torch_outputs(entry)
        record["torch_vs_ort_max_abs"] = max(float(np.max(np.abs(e.astype(np.float64) - r.astype(np.float64))))
                                             for e, (_, r) in zip(expected, ref))
        record["torch_vs_ort_max_ref"] = max(float(np.max(np.abs(r))) for _, r in ref)
    except Exception as e:  # noqa: BLE001 - one model's failure is reported, the others are still made
        record["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
    return record


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    a = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    # nn.MultiheadAttention's inference fast path (ViT) is one fused aten op that no ONNX exporter knows
    torch.backends.mha.set_fastpath_enabled(False)
    entries = real_models.build_all(a.quick)
    only = [n for n in a.only.split(",") if n]
    unknown = sorted(set(only) - {e.name for e in entries})
    if unknown:
        ap.error(f"--only names {', '.join(unknown)}, which are not in the set; the set is "
                 f"{', '.join(e.name for e in entries)}")
    os.makedirs(a.out, exist_ok=True)
    models, failed = [], []
    for entry in entries:
        if only and entry.name not in only:
            continue
        record = make(entry, a.out)
        if "error" in record:
            failed.append(record)
            print(f"make_real: {entry.name}: FAILED: {record['error']}", file=sys.stderr, flush=True)
        else:
            models.append(record)
            print(f"make_real: {entry.name}: {record['nodes']} nodes, {record['parameters'] / 1e6:.1f} M parameters, "
                  f"ORT vs torch max |diff| {record['torch_vs_ort_max_abs']:.2e} (max |out| "
                  f"{record['torch_vs_ort_max_ref']:.3g})", file=sys.stderr, flush=True)
    versions = {"torch": torch.__version__, "onnx": onnx.__version__, "onnxruntime": ort.__version__}
    try:
        import torchvision
        import transformers
        versions.update(torchvision=torchvision.__version__, transformers=transformers.__version__)
    except ImportError:
        pass
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump({"quick": a.quick, "set": "real", "opset": OPSET, "versions": versions, "models": models,
                   "failed_to_make": failed}, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
