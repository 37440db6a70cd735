#!/usr/bin/env python3
"""An AVX2 estimate from a peer that can be masked (docs/benchmarking.md, "AVX2 estimate from a maskable
peer"). ONNX Runtime reads cpuid and keeps AVX-512, so ours masked (TB_CPU_FEATURES=-avx512f,-amx) against
ORT unmasked is a pessimistic bound. PyTorch can be masked: ATEN_CPU_CAPABILITY=avx2 (its own kernels),
ONEDNN_MAX_CPU_ISA=AVX2 (convolutions, RNNs), MKL_ENABLE_INSTRUCTIONS=AVX2 (its GEMMs). For each model of the
real set (make_real.py's builders, seeds and inputs: the modules are built once by real_models.build_all and
pickled into --cache), interleaved rounds of one process each, the order rotated by one every round:

    PyTorch unmasked, PyTorch masked (torch_runner.py), ours unmasked, ours masked (model_bench at --level),
    ONNX Runtime (ort_runner.py)

all on 1 thread (the CPU times are the process's, every thread's: meaningful at 1 thread only), the ratios
of the least CPU time of a run (--metric; on a loaded machine the wall time holds the minutes other processes
held the core); PyTorch in eval, inference_mode, eager (no torch.jit, no torch.compile), its outputs checked
against make_real.py's reference outputs (the same model). Per model: the peer's mask cost (PyTorch masked /
unmasked), ours (masked / unmasked), and

    estimate ORT / ours on an AVX2 machine = (ORT / ours, unmasked) x max(1, peer mask cost) / (our mask cost)

under the assumption that ONNX Runtime loses to the mask what PyTorch loses (ORT's time grows by the peer's
cost, ours by our own; a peer cost below 1 is noise, flagged in the output and counted as 1, which gives the
masked bound, so the estimate never falls below it); and PyTorch masked / ours masked: a second peer
measured directly on AVX2. Before the rounds, one probe process per side prints what the masks did:
torch.backends.cpu.get_cpu_capability(), the ISA oneDNN reports (ONEDNN_VERBOSE) and the kernel it picks
for a convolution, and MKL's banner (MKL_VERBOSE).
A profile of PyTorch's unmasked run (torch.profiler) gives the share of its time in MKL's GEMMs (addmm, mm,
bmm, ...): where MKL runs no AVX-512 code (this AMD CPU: its banner says "Intel(R) Architecture
processors", not AVX-512) that share costs nothing masked, and the peer's cost understates the mask's.

This file is the driver and the report; PyTorch's side (the module cache, the timed worker, the probe) is
bench/models/torch_runner.py. Writes OUT/isa_peer.md (the tables) and OUT/isa_peer.json. Run from the
repository root with the real-set venv:

Usage: isa_peer.py --models DIR --runner PATH/model_bench --out DIR [--level O2] [--rounds 3] [--warmup 1]
                   [--runs 3] [--only NAME,NAME] [--cache DIR] [--mask -avx512f,-amx]
                   [--metric cpu_min_ms|min_ms]"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_RUNNER = os.path.join(HERE, "torch_runner.py")
TIMEOUT_S = 3600
PEER_MASK = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
ONE_THREAD = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def env_for(side, masked, tb_mask):
    """The environment of one process: no mask variable of the other side, one thread."""
    env = {k: v for k, v in os.environ.items() if k not in PEER_MASK and k != "TB_CPU_FEATURES"}
    env.update(ONE_THREAD)
    if masked and side == "torch":
        env.update(PEER_MASK)
    if masked and side == "ours":
        env["TB_CPU_FEATURES"] = tb_mask
    return env


def run_json(cmd, env, what):
    """The last line of a runner's stdout as JSON, or {"error": ...} naming the runner and the model (what)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"{what} timed out after {TIMEOUT_S} s"}
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines() or [f"exit code {p.returncode}"]
        return {"error": f"{what} failed: {lines[-1][:300]}"}
    lines = p.stdout.strip().splitlines()
    if not lines:
        return {"error": f"{what} exited 0 but printed nothing on stdout (expected one JSON line); run its "
                         f"command by hand: {' '.join(cmd)}"}
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"error": f"{what} printed a last line that is not JSON: {lines[-1][:200]!r}"}


def probe(masked):
    """What the masks did: torch_runner.py --probe with the verbose modes on."""
    env = env_for("torch", masked, "")
    env.update(ONEDNN_VERBOSE="1", MKL_VERBOSE="1")
    p = subprocess.run([sys.executable, TORCH_RUNNER, "--probe"], capture_output=True, text=True, env=env,
                       timeout=600)
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
    """One model: --rounds rounds of the five configurations, one process each, the order rotated per round."""
    rounds, runs = None, a.runs
    load_before = load()
    for r in range(a.rounds):
        configs = configurations(m, a, runs, profile_gemm=r == 0)
        rounds = rounds or {k: [] for k in configs}
        order = list(configs)
        for k in order[r % len(order):] + order[:r % len(order)]:  # each round starts one configuration later
            cmd, env = configs[k]
            rounds[k].append(run_json(cmd, env, f"{k} on {m['name']}"))
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
        # a mask cannot make the peer faster: a cost below 1 is noise, and counted as 1, so that the estimate
        # never falls below the masked bound (a cost of 1 gives the bound itself)
        row["peer_cost_noise"] = row["peer_cost"] < 1
        row["estimate_avx2"] = row["ort_over_ours"] * max(1.0, row["peer_cost"]) / row["ours_cost"]
        row["torch_masked_over_ours_masked"] = ms["torch masked"] / ms["ours masked"]
        row["torch_over_ours"] = ms["torch"] / ms["ours"]
    return row


def configurations(m, a, runs, profile_gemm):
    """The five processes of one round: name -> (command, environment)."""
    timing = ["--warmup", str(a.warmup), "--runs", str(runs)]
    common = [m["path"], "--inputs", m["inputs"], "--threads", "1"] + timing
    me = [sys.executable, TORCH_RUNNER, "--cache", a.cache, "--reference", m["reference"]] + timing
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


def cell(row, column):
    if column not in row:
        return "-"
    if column == "peer_cost" and row.get("peer_cost_noise"):
        return f"{row[column]:.2f} (noise, counted as 1)"
    return f"{row[column]:.2f}"


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
                                       [cell(r, c) for c, _ in COLUMNS] +
                                       [share, f"{r['load_before']} / {r['load_after']}"]) + " |")
    done = [r for r in report["rows"] if "estimate_avx2" in r]
    lines += ["", "| geomean over " + str(len(done)) + " models | " +
              " | ".join(f"{c[1]}: {geomean([r[c[0]] for r in done]):.3g}" for c in COLUMNS) + " |", ""]
    noise = [r for r in done if r.get("peer_cost_noise")]
    if noise:
        lines.append("PyTorch's mask cost below 1 (noise: a mask cannot speed it up), counted as 1 in the estimate, "
                     "which is then the masked bound: " +
                     ", ".join(f"{r['model']} {r['peer_cost']:.2f}" for r in noise) + ".")
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
    a = ap.parse_args()
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
    sys.path.insert(0, HERE)
    from torch_runner import scripts_digest
    stamp = scripts_digest() + " torch " + torch.__version__
    try:
        with open(os.path.join(a.cache, "scripts.sha256")) as f:
            fresh = f.read() == stamp
    except OSError:
        fresh = False
    if not fresh:
        print(f"isa_peer: building the modules into {a.cache} (real_models.build_all)", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, TORCH_RUNNER, "--build-cache", "--cache", a.cache], check=True)
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
