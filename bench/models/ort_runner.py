#!/usr/bin/env python3
"""ONNX Runtime's side of one model-set configuration, the peer of bench/model_bench.c: load MODEL into an
InferenceSession on the CPU (intra-op threads N, inter-op 1, sequential execution, all graph optimizations),
feed it DIR/<input>.npy, run W times untimed and R times timed, save the last outputs as OUTDIR/<output>.npy
and print one JSON object with the same keys as model_bench: every timed run and their median, p90, min and
mean in ms (and each run's CPU time of the process, cpu_times_ms: on a loaded machine it leaves out the
time other processes held the core; it counts every thread, so it is meaningful at 1 thread only), and this process's peak resident memory (VmHWM) after
`import onnxruntime` (the Python baseline), after the session is created, and at the end. Run one
configuration per process so the peak is its own.

Usage: ort_runner.py MODEL --inputs DIR [--outputs DIR] [--threads N] [--warmup W] [--runs R]"""
import argparse
import json
import os
import resource
import time

import numpy as np
import onnxruntime as ort


def vm_hwm_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--outputs")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    a = ap.parse_args()
    rss_baseline = vm_hwm_bytes()

    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    session = ort.InferenceSession(a.model, so, providers=["CPUExecutionProvider"])
    prepare_ms = (time.perf_counter() - t0) * 1e3
    feeds = {i.name: np.load(os.path.join(a.inputs, i.name + ".npy")) for i in session.get_inputs()}
    rss_session = vm_hwm_bytes()

    times, cpu_times = [], []
    for i in range(a.warmup + a.runs):
        c0 = time.process_time()  # the CPU window holds the wall window
        t0 = time.perf_counter()
        outputs = session.run(None, feeds)
        if i >= a.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
            cpu_times.append((time.process_time() - c0) * 1e3)
    if a.outputs:
        for meta, value in zip(session.get_outputs(), outputs):
            np.save(os.path.join(a.outputs, meta.name + ".npy"), value)

    print(json.dumps({
        "runner": "onnxruntime", "version": ort.__version__, "model": a.model, "threads": a.threads,
        "warmup": a.warmup, "runs": a.runs,
        # linear interpolation between the two nearest runs, as bench_util.c does
        "median_ms": float(np.percentile(times, 50)), "p90_ms": float(np.percentile(times, 90)),
        "min_ms": min(times), "mean_ms": float(np.mean(times)), "times_ms": times, "cpu_times_ms": cpu_times,
        "cpu_min_ms": min(cpu_times), "prepare_ms": prepare_ms,
        "rss_baseline_bytes": rss_baseline, "rss_after_prepare_bytes": rss_session,
        "peak_rss_bytes": vm_hwm_bytes(),
        "ru_maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }))


if __name__ == "__main__":
    main()
