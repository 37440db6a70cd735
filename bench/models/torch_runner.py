#!/usr/bin/env python3
"""PyTorch's side of bench/models/isa_peer.py, one process per call (as ort_runner.py is ONNX Runtime's):

    --build-cache: real_models.build_all(quick=False) as make_real.py calls it, each module pickled into --cache
    --worker NAME: time the cached module NAME on 1 thread (eval, inference_mode, eager), check its outputs
                   against make_real.py's reference (--reference DIR) and print one JSON object: times_ms,
                   cpu_times_ms (the process's CPU time of each run: meaningful at 1 thread only), min_ms,
                   cpu_min_ms, median_ms and, with --profile-gemm, the share of its time in MKL's GEMMs
    --probe:       one convolution and one GEMM (run with ONEDNN_VERBOSE/MKL_VERBOSE set by the caller) and
                   the CPU capability ATen picked

The mask variables (ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS) come from the caller's
environment.

Usage: torch_runner.py --build-cache --cache DIR
       torch_runner.py --worker NAME --cache DIR --reference DIR [--warmup W] [--runs R] [--profile-gemm]
       torch_runner.py --probe"""
import argparse
import hashlib
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MKL_GEMM_OPS = {"aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::addbmm"}


def scripts_digest():
    """The hash of the scripts that build the modules: the cache is stale when it changes."""
    h = hashlib.sha256()
    for name in ("make_real.py", "real_models.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def build_cache(cache):
    """real_models.build_all(quick=False), as make_real.py calls it, each entry pickled on its own."""
    import torch
    sys.path.insert(0, HERE)
    import real_models
    torch.backends.mha.set_fastpath_enabled(False)  # as make_real.py: the exported graph has no fused MHA
    os.makedirs(cache, exist_ok=True)
    for e in real_models.build_all(False):
        torch.save({"module": e.module, "inputs": e.inputs, "output_names": e.output_names},
                   os.path.join(cache, e.name + ".pt"))
    with open(os.path.join(cache, "scripts.sha256"), "w") as f:
        f.write(scripts_digest() + " torch " + torch.__version__)


def worker(a):
    import numpy as np
    import torch
    sys.path.insert(0, HERE)
    import real_models  # noqa: F401 - the pickled modules' classes
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    torch.backends.mha.set_fastpath_enabled(False)
    entry = torch.load(os.path.join(a.cache, a.worker + ".pt"), weights_only=False)
    module, inputs = entry["module"].eval(), entry["inputs"]
    times, cpu_times = [], []
    with torch.inference_mode():
        for i in range(a.warmup + a.runs):
            c0 = time.process_time()  # the CPU window holds the wall window
            t0 = time.perf_counter()
            out = module(*inputs)
            if i >= a.warmup:
                times.append((time.perf_counter() - t0) * 1e3)
                cpu_times.append((time.process_time() - c0) * 1e3)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        worst, scale = 0.0, 0.0
        for name, value in zip(entry["output_names"], outs):
            ref = np.load(os.path.join(a.reference, name + ".npy")).astype(np.float64)
            got = value.detach().numpy().astype(np.float64)
            worst = max(worst, float(np.max(np.abs(got - ref))))
            scale = max(scale, float(np.max(np.abs(ref))))
        result = {"runner": "torch", "capability": torch.backends.cpu.get_cpu_capability(),
                  "median_ms": float(np.median(times)), "min_ms": min(times), "times_ms": times,
                  "cpu_times_ms": cpu_times, "cpu_min_ms": min(cpu_times),
                  "max_abs_vs_reference": worst, "max_reference": scale}
        if a.profile_gemm:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                module(*inputs)
            total = sum(e.self_cpu_time_total for e in prof.key_averages())
            gemm = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in MKL_GEMM_OPS)
            result["mkl_gemm_share"] = gemm / total if total else 0.0
    print(json.dumps(result))


def probe():
    """What the masks did, in a process of its own (the verbose modes print on every call)."""
    import torch
    torch.set_num_threads(1)
    with torch.inference_mode():
        torch.nn.functional.conv2d(torch.randn(1, 64, 28, 28), torch.randn(64, 64, 3, 3), padding=1)
        torch.mm(torch.randn(64, 256), torch.randn(256, 64))
    print("capability " + torch.backends.cpu.get_cpu_capability(), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-cache", action="store_true")
    ap.add_argument("--worker", metavar="NAME")
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("--cache")
    ap.add_argument("--reference")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile-gemm", action="store_true")
    a = ap.parse_args()
    if a.probe:
        return probe()
    if a.build_cache and a.cache:
        return build_cache(a.cache)
    if a.worker and a.cache and a.reference and a.runs >= 1 and a.warmup >= 0:
        return worker(a)
    ap.error("pass --probe, --build-cache --cache DIR, or --worker NAME --cache DIR --reference DIR "
             f"with --runs >= 1 (got {a.runs}) and --warmup >= 0 (got {a.warmup})")


if __name__ == "__main__":
    sys.exit(main())
