#!/usr/bin/env python3
"""An AVX2 estimate from a peer that can be masked (docs/benchmarking.md, "AVX2 estimate from a maskable
peer"). ONNX Runtime reads cpuid and keeps AVX-512, so ours masked (TB_CPU_FEATURES=-avx512f,-amx) against
ORT unmasked is a pessimistic bound. PyTorch can be masked: ATEN_CPU_CAPABILITY=avx2 (its own kernels),
ONEDNN_MAX_CPU_ISA=AVX2 (convolutions, RNNs), MKL_ENABLE_INSTRUCTIONS=AVX2 (its GEMMs). For each model of the
real set (make_real.py's builders, seeds and inputs: the modules are built once by real_models.build_all and
pickled into --cache), interleaved rounds of one process each:

    PyTorch unmasked, PyTorch masked, ours unmasked, ours masked (model_bench at --level), ONNX Runtime

all on 1 thread, the ratios of the least CPU time of a run (--metric; on a loaded machine the wall time
holds the minutes other processes held the core); PyTorch in eval, inference_mode, eager (no torch.jit, no
torch.compile), its outputs checked
against make_real.py's reference outputs (the same model). Per model: the peer's mask cost (PyTorch masked /
unmasked), ours (masked / unmasked), and

    estimate ORT / ours on an AVX2 machine = (ORT / ours, unmasked) x (peer mask cost) / (our mask cost)

under the assumption that ONNX Runtime loses to the mask what PyTorch loses (ORT's time grows by the peer's
cost, ours by our own); and PyTorch masked / ours masked: a second peer measured directly on AVX2. Before the
rounds, one probe process per side prints what the masks did: torch.backends.cpu.get_cpu_capability(), the
ISA oneDNN reports (ONEDNN_VERBOSE) and the kernel it picks for a convolution, and MKL's banner (MKL_VERBOSE).
A profile of PyTorch's unmasked run (torch.profiler) gives the share of its time in MKL's GEMMs (addmm, mm,
bmm, ...): where MKL runs no AVX-512 code (this AMD CPU: its banner says "Intel(R) Architecture
processors", not AVX-512) that share costs nothing masked, and the peer's cost understates the mask's.

Writes OUT/isa_peer.md (the tables) and OUT/isa_peer.json. Run from the repository root with the real-set venv:

Usage: isa_peer.py --models DIR --runner PATH/model_bench --out DIR [--level O2] [--rounds 3] [--warmup 1]
                   [--runs 3] [--only NAME,NAME] [--cache DIR] [--mask -avx512f,-amx]
                   [--metric cpu_min_ms|min_ms]"""
import argparse
import datetime
import hashlib
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 3600
PEER_MASK = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
MKL_GEMM_OPS = {"aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::addbmm"}


def env_for(side, masked, tb_mask):
    """The environment of one process: no mask variable of the other side, one thread."""
    env = {k: v for k, v in os.environ.items() if k not in PEER_MASK and k != "TB_CPU_FEATURES"}
    env.update(ONE_THREAD)
    if masked and side == "torch":
        env.update(PEER_MASK)
    if masked and side == "ours":
        env["TB_CPU_FEATURES"] = tb_mask
    return env


def run_json(cmd, env):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_S} s"}
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines() or [f"exit code {p.returncode}"]
        return {"error": lines[-1][:300]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# --- the worker side: one PyTorch process -----------------------------------------------------------------

def scripts_digest():
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


def torch_worker(a):
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
            t0, c0 = time.perf_counter(), time.process_time()
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
                  "cpu_times_ms": cpu_times,
                  "max_abs_vs_reference": worst, "max_reference": scale}
        if a.profile_gemm:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                module(*inputs)
            total = sum(e.self_cpu_time_total for e in prof.key_averages())
            gemm = sum(e.self_cpu_time_total for e in prof.key_averages() if e.key in MKL_GEMM_OPS)
            result["mkl_gemm_share"] = gemm / total if total else 0.0
    print(json.dumps(result))


def probe_worker():
    """What the masks did, in a process of their own (the verbose modes print on every call)."""
    import torch
    torch.set_num_threads(1)
    with torch.inference_mode():
        torch.nn.functional.conv2d(torch.randn(1, 64, 28, 28), torch.randn(64, 64, 3, 3), padding=1)
        torch.mm(torch.randn(64, 256), torch.randn(256, 64))
    print("capability " + torch.backends.cpu.get_cpu_capability(), flush=True)


def probe(masked):
    env = env_for("torch", masked, "")
    env.update(ONEDNN_VERBOSE="1", MKL_VERBOSE="1")
    p = subprocess.run([sys.executable, os.path.abspath(__file__), "--probe"], capture_output=True, text=True,
                       env=env, timeout=600)
    lines = (p.stdout + p.stderr).splitlines()
    isa = next((ln.split("isa:", 1)[1] for ln in lines if "onednn_verbose" in ln and "isa:" in ln), "none")
    conv = next((ln.split(",")[6] for ln in lines if "onednn_verbose" in ln and ",convolution," in ln), "none")
    mkl = next((ln.split(" for ", 1)[-1].split(",")[0] for ln in lines if ln.startswith("MKL_VERBOSE oneMKL")), "none")
    cap = next((ln.split()[1] for ln in lines if ln.startswith("capability ")), "none")
    return {"masked": masked, "capability": cap, "onednn_isa": isa, "onednn_conv_kernel": conv, "mkl": mkl}


# --- the driver -------------------------------------------------------------------------------------------

def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def median(v):
    v = sorted(v)
    n = len(v)
    return (v[(n - 1) // 2] + v[n // 2]) / 2


def pooled(results):
    for r in results:
        if "error" in r:
            return r
    out = dict(results[-1])
    times = [t for r in results for t in r["times_ms"]]
    cpu = [t for r in results for t in r["cpu_times_ms"]]
    out.update(times_ms=times, median_ms=median(times), min_ms=min(times), cpu_times_ms=cpu, cpu_min_ms=min(cpu))
    return out


def measure(m, a):
    """One model: --rounds rounds of the five configurations, one process each."""
    rounds, runs = None, a.runs
    load_before = load()
    for r in range(a.rounds):
        configs = configurations(m, a, runs, profile_gemm=r == 0)
        rounds = rounds or {k: [] for k in configs}
        for k, (cmd, env) in configs.items():
            rounds[k].append(run_json(cmd, env))
        # a model of a few ms gets more timed runs in the later rounds: about 300 ms of the slowest side's time
        slowest = max((x[-1].get("cpu_min_ms", 0) for x in rounds.values()), default=0)
        runs = max(a.runs, min(200, int(300 / slowest))) if slowest > 0 else a.runs
    row = {"model": m["name"], "load_before": load_before, "load_after": load(),
           **{k: pooled(v) for k, v in rounds.items()}}
    row["mkl_gemm_share"] = next((x["mkl_gemm_share"] for x in rounds["torch"] if "mkl_gemm_share" in x), None)
    ms = {k: row[k].get(a.metric) for k in rounds}
    if all(ms.values()):
        row["peer_cost"] = ms["torch masked"] / ms["torch"]
        row["ours_cost"] = ms["ours masked"] / ms["ours"]
        row["ort_over_ours"] = ms["ort"] / ms["ours"]
        row["ort_over_ours_masked"] = ms["ort"] / ms["ours masked"]
        row["estimate_avx2"] = row["ort_over_ours"] * row["peer_cost"] / row["ours_cost"]
        row["torch_masked_over_ours_masked"] = ms["torch masked"] / ms["ours masked"]
        row["torch_over_ours"] = ms["torch"] / ms["ours"]
    return row


def configurations(m, a, runs, profile_gemm):
    """The five processes of one round: name -> (command, environment)."""
    timing = ["--warmup", str(a.warmup), "--runs", str(runs)]
    common = [m["path"], "--inputs", m["inputs"], "--threads", "1"] + timing
    me = [sys.executable, os.path.abspath(__file__), "--cache", a.cache, "--reference", m["reference"]] + timing
    return {
        "torch": (me + ["--worker", m["name"]] + (["--profile-gemm"] if profile_gemm else []),
                  env_for("torch", False, a.mask)),
        "torch masked": (me + ["--worker", m["name"]], env_for("torch", True, a.mask)),
        "ours": ([a.runner] + common + ["--level", a.level], env_for("ours", False, a.mask)),
        "ours masked": ([a.runner] + common + ["--level", a.level], env_for("ours", True, a.mask)),
        "ort": ([sys.executable, os.path.join(HERE, "ort_runner.py")] + common, env_for("ort", False, a.mask)),
    }


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


COLUMNS = [("peer_cost", "PyTorch masked / unmasked"), ("ours_cost", "ours masked / unmasked"),
           ("ort_over_ours", "ORT / ours unmasked"), ("ort_over_ours_masked", "ORT / ours masked (bound)"),
           ("estimate_avx2", "estimate ORT / ours on AVX2"), ("torch_masked_over_ours_masked",
                                                             "PyTorch / ours, both masked"),
           ("torch_over_ours", "PyTorch / ours unmasked")]


def markdown(report):
    lines = [f"AVX2 estimate from a maskable peer: commit {report['commit']}, {report['date']}, level "
             f"{report['level']}, 1 thread, {report['rounds']} interleaved rounds of one process per configuration "
             f"({report['warmup']} warm-up + {report['runs']} timed runs each in the first round, "
             f"up to ~300 ms of runs in the later ones); ms: the least CPU time of a run (the "
             "least wall time) over the pooled runs; the ratios are of " +
             ("the CPU times (on a loaded machine they leave out the time other processes held the core)."
              if report["metric"] == "cpu_min_ms" else "the wall times."),
             f"Machine: {report['machine']}; torch {report['torch']}, onnxruntime {report['ort']}; ours masked "
             f"with TB_CPU_FEATURES={report['mask']}, PyTorch with " +
             ", ".join(f"{k}={v}" for k, v in PEER_MASK.items()) + ".", "", "What the masks did (probe processes):", ""]
    for p in report["probes"]:
        lines.append(f"- PyTorch {'masked' if p['masked'] else 'unmasked'}: capability {p['capability']}; oneDNN "
                     f"isa {p['onednn_isa']}, convolution kernel {p['onednn_conv_kernel']}; MKL {p['mkl']}")
    head = ["model", "ms PyTorch / masked", "ms ours / masked", "ms ORT"] + [c[1] for c in COLUMNS] + \
        ["PyTorch time in MKL GEMMs", "load avg before / after"]
    lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in report["rows"]:
        def t(k):
            return (f"{r[k]['cpu_min_ms']:.3g} ({r[k]['min_ms']:.3g})" if "median_ms" in r[k] else
                    f"failed: {r[k].get('error')}")
        share = f"{100 * r['mkl_gemm_share']:.0f}%" if r.get("mkl_gemm_share") is not None else "-"
        lines.append("| " + " | ".join([r["model"], f"{t('torch')} / {t('torch masked')}",
                                        f"{t('ours')} / {t('ours masked')}", t("ort")] +
                                       [f"{r[c]:.2f}" if c in r else "-" for c, _ in COLUMNS] +
                                       [share, f"{r['load_before']} / {r['load_after']}"]) + " |")
    done = [r for r in report["rows"] if "estimate_avx2" in r]
    lines += ["", "| geomean over " + str(len(done)) + " models | " +
              " | ".join(f"{c[1]}: {geomean([r[c[0]] for r in done]):.3g}" for c in COLUMNS) + " |", ""]
    worst = min(done, key=lambda r: r["estimate_avx2"]) if done else None
    if worst:
        lines.append(f"Lowest estimate: {worst['model']} {worst['estimate_avx2']:.2f}. Checks: PyTorch's outputs "
                     "against make_real.py's reference (max abs / max |ref|): " +
                     "; ".join(f"{r['model']} {r['torch'].get('max_abs_vs_reference', float('nan')):.1e} / "
                               f"{r['torch'].get('max_reference', float('nan')):.2g}" for r in report["rows"]) + ".")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="build/real-models/full")
    ap.add_argument("--runner", default="build/bench/bench/model_bench")
    ap.add_argument("--out", default="build/isa-peer")
    ap.add_argument("--cache", default="build/isa-peer-cache")
    ap.add_argument("--level", default="O2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--mask", default="-avx512f,-amx")
    ap.add_argument("--metric", default="cpu_min_ms", choices=["cpu_min_ms", "min_ms"],
                    help="the time the ratios use: the least CPU time of a run (default) or the least wall time")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--reference", help=argparse.SUPPRESS)
    ap.add_argument("--profile-gemm", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--build-cache", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.probe:
        return probe_worker()
    if a.build_cache:
        return build_cache(a.cache)
    if a.worker:
        return torch_worker(a)
    if a.rounds < 1 or a.runs < 1:
        ap.error(f"--rounds ({a.rounds}) and --runs ({a.runs}) must be at least 1")
    if not os.access(a.runner, os.X_OK):
        ap.error(f"--runner {a.runner} is not an executable; build it with cmake -DTB_BUILD_BENCH=ON "
                 "(target tb_bench_model) or pass its path")
    with open(os.path.join(a.models, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest["quick"]:
        ap.error(f"{a.models} holds the quick set; the cache is built full size: pass the full set's folder")
    only = [n for n in a.only.split(",") if n]
    unknown = sorted(set(only) - {m["name"] for m in manifest["models"]})
    if unknown:
        ap.error(f"--only names {', '.join(unknown)}, which {a.models}/manifest.json does not list")
    import torch
    import onnxruntime
    stamp = scripts_digest() + " torch " + torch.__version__
    try:
        with open(os.path.join(a.cache, "scripts.sha256")) as f:
            fresh = f.read() == stamp
    except OSError:
        fresh = False
    if not fresh:
        print(f"isa_peer: building the modules into {a.cache} (real_models.build_all)", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--build-cache", "--cache", a.cache], check=True)
    sys.path.insert(0, HERE)
    from compare import describe_commit, describe_machine
    os.makedirs(a.out, exist_ok=True)
    report = {"commit": describe_commit(), "date": datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC"), "machine": describe_machine(), "torch": torch.__version__,
        "ort": onnxruntime.__version__,
        "level": a.level, "metric": a.metric, "rounds": a.rounds, "warmup": a.warmup, "runs": a.runs, "mask": a.mask,
        "probes": [probe(False), probe(True)], "rows": []}
    for p in report["probes"]:
        print(f"isa_peer: probe {p}", file=sys.stderr, flush=True)
    for m in manifest["models"]:
        if only and m["name"] not in only:
            continue
        row = measure(m, a)
        report["rows"].append(row)
        print("isa_peer: " + m["name"] + " " + " ".join(f"{c}={row[c]:.3f}" for c, _ in COLUMNS if c in row) +
              f" load {row['load_before']} / {row['load_after']}", file=sys.stderr, flush=True)
        with open(os.path.join(a.out, "isa_peer.json"), "w") as f:
            json.dump(report, f, indent=1)
        with open(os.path.join(a.out, "isa_peer.md"), "w") as f:
            f.write(markdown(report))
    print(markdown(report))
    return 0 if all("estimate_avx2" in r for r in report["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
