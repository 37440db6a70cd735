#!/usr/bin/env python3
"""Runs the model set (written by make_models.py) in TensorBridge and in ONNX Runtime, one process per
configuration, and prints the comparison as a markdown table; writes it to OUT/models.md and OUT/models.json.

For each model and thread count, ONNX Runtime (ort_runner.py) and TensorBridge at each level (model_bench)
take turns: ROUNDS rounds, each running every one of them once for RUNS / ROUNDS timed runs (rounded up),
and each configuration's latencies are those of all its rounds together. Interleaved so that both sides
sample the same minutes: on a shared machine the speed of a core drifts over minutes, and one side's block
of runs falling in a slow minute would move the ratio more than the code does. The peak memory is the
highest of the rounds. TensorBridge's outputs are checked against ONNX Runtime's of the same thread count with the
library's tolerance for the precision the level ran in: an element passes when
|ours - ort| <= atol * s + rtol * |ort|, s = max(1, max |ort|) (the table's atol is for outputs of unit
scale; a logit near 0 among logits of 400 carries the rounding of the 400s). Exit code 0 when every
configuration ran and passed the check.

Usage: compare.py --models DIR --runner PATH/model_bench --out DIR [--threads 1,2] [--levels O2,O3]
                  [--warmup 3] [--runs 20] [--rounds 3]"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT_S = 3600
MIB = 1024.0 * 1024.0


# TB_CPU_FEATURES (e.g. -avx512f,-amx: TensorBridge as on an AVX2-only CPU, docs/cpu.md) is forwarded to
# TensorBridge's processes only: ONNX Runtime runs without it, and with it set TensorBridge is timed a second
# time without it in the same rounds (the "unmasked" columns), so the table holds ours masked against ORT
# unmasked (a pessimistic bound for an AVX2 machine: ORT keeps AVX-512) and ours masked against ours unmasked.
CPU_MASK = os.environ.get("TB_CPU_FEATURES", "")
MASK_HEAD = ["ours unmasked median / p90 ms", "masked / unmasked"] if CPU_MASK else []


def env_without_mask():
    env = dict(os.environ)
    env.pop("TB_CPU_FEATURES", None)
    return env


def mask_note():
    return (f" TensorBridge ran with TB_CPU_FEATURES={CPU_MASK}; ONNX Runtime and the \"unmasked\" columns "
            f"without it (ours masked against ORT on every feature of this CPU: a pessimistic bound)." if CPU_MASK
            else "")


def run_json(cmd, env=None):
    """Run one configuration (env: its environment, default ours); its JSON, or {"error": the last line it
    wrote on stderr}."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {TIMEOUT_S} s"}
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines() or [f"exit code {p.returncode}"]
        return {"error": lines[-1][:300]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def cpu_pair(runner, threads):
    """bench/cpu_pair_probe beside the runner, when there: whether `threads` CPUs are independent right now
    (FP throughput together against alone, cache-line round trip, steal); None when it is absent or fails."""
    probe = os.path.join(os.path.dirname(runner), "cpu_pair_probe")
    if threads < 2 or not os.access(probe, os.X_OK):
        return None
    result = run_json([probe, str(threads), "3"])
    return None if "error" in result else result


def pingpong_cell(probe):
    """The round trip in ns; a round cut short by the probe's time budget (CPUs held by other work) says so."""
    cut = probe.get("pings", 20000) < 20000
    return f"{probe['pingpong_ns']:.0f}" + (f" (cut short: {probe['pings']} pings)" if cut else "")


def cpu_pair_lines(rows):
    """The probe's readings before each round of the multi-thread rows, as markdown lines (none: no lines)."""
    seen, cells = set(), []
    for r in rows:
        key = (r["model"], r["threads"])
        if key in seen or not r.get("cpu_pair"):
            continue
        seen.add(key)
        cells.append([r["model"], str(r["threads"]), ", ".join(f"{p['fma_speedup']:.2f}x" for p in r["cpu_pair"]),
                      ", ".join(pingpong_cell(p) for p in r["cpu_pair"]),
                      ", ".join("-" if p["steal_pct"] is None else f"{p['steal_pct']:.1f}%" for p in r["cpu_pair"])])
    if not cells:
        return []
    head = ["model", "threads", "FP throughput together / alone, per round", "cache-line round trip ns", "steal"]
    return ["", "CPU pair probe before each round of the multi-thread rows (bench/cpu_pair_probe.c; near the "
            "thread count: the CPUs were whole and free; near 1x: they shared one core or were taken by other "
            "work, and those rows say little about the library):", "",
            "| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(c) + " |" for c in cells]


def max_error(ours_dir, ort_dir, rtol, atol):
    """max |ours - ort|, that over max |ort|, and how many elements fall outside atol * s + rtol * |ort|."""
    err = {"max_abs": 0.0, "max_rel": 0.0, "outside": 0, "elements": 0, "rtol": rtol, "atol": atol}
    for name in sorted(os.listdir(ort_dir)):
        ref = np.load(os.path.join(ort_dir, name)).astype(np.float64)
        got = np.load(os.path.join(ours_dir, name)).astype(np.float64)
        if got.shape != ref.shape:
            return dict(err, error=f"{name}: shape {got.shape}, ONNX Runtime's {ref.shape}")
        diff = np.abs(got - ref)
        scale = float(np.max(np.abs(ref), initial=0.0))
        bad = ~(diff <= atol * max(1.0, scale) + rtol * np.abs(ref))  # NaN counts as outside
        err["outside"] += int(bad.sum())
        err["elements"] += ref.size
        worst = float(np.max(diff, initial=0.0)) if np.isfinite(diff).all() else float("inf")
        scale = scale or 1.0
        err["max_abs"] = max(err["max_abs"], worst)
        err["max_rel"] = max(err["max_rel"], worst / scale)
    return err


def describe_machine():
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def describe_commit():
    git = ["git", "-C", HERE]
    try:
        commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True).stdout.strip()
        return commit + (" + uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def pooled(results):
    """One configuration's rounds as one result: every round's timed runs together (median and p90 by
    linear interpolation, as bench_util.c and ort_runner.py compute them), the memory of the round that
    peaked highest; the first error when a round failed."""
    for r in results:
        if "error" in r:
            return r
    out = dict(max(results, key=lambda r: r.get("peak_rss_bytes", 0)))
    times = [t for r in results for t in r["times_ms"]]
    out.update({"times_ms": sorted(times), "runs": len(times), "rounds": len(results),
                "median_ms": float(np.percentile(times, 50)), "p90_ms": float(np.percentile(times, 90)),
                "min_ms": min(times), "mean_ms": float(np.mean(times))})
    return out


def ms(r):
    def fmt(v):
        return f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.1f}"
    return f"{fmt(r['median_ms'])} / {fmt(r['p90_ms'])}" if "median_ms" in r else "failed"


def row_cells(row):
    ours, ort, err = row["tensorbridge"], row["onnxruntime"], row.get("error_check") or {}
    ratio = f"{ort['median_ms'] / ours['median_ms']:.3g}" if "median_ms" in ours and "median_ms" in ort else "-"
    peak_ours = f"{ours['peak_rss_bytes'] / MIB:.0f}" if "peak_rss_bytes" in ours else "-"
    peak_ort = (f"{ort['peak_rss_bytes'] / MIB:.0f} ({(ort['peak_rss_bytes'] - ort['rss_baseline_bytes']) / MIB:.0f})"
                if "peak_rss_bytes" in ort else "-")
    if "max_abs" not in err:
        error, check = "-", "not checked"
    else:
        error = f"{err['max_abs']:.1e} / {err['max_rel']:.1e}"
        tol = f"rtol {err['rtol']:g}, atol {err['atol']:g}"
        check = (f"**no**: {err.get('error')}" if "error" in err else
                 f"yes ({tol})" if err["outside"] == 0 else f"**no**: {err['outside']} of {err['elements']} outside {tol}")
    level = f"{row['level']} {ours.get('precision', '')}".strip()
    cells = [row["model"], str(row["threads"]), level, ms(ours), ms(ort), ratio, f"{peak_ours} / {peak_ort}", error,
             check]
    if "unmasked" in row:
        plain = row["unmasked"]
        cells += [ms(plain), f"{ours['median_ms'] / plain['median_ms']:.3g}"
                  if "median_ms" in ours and "median_ms" in plain else "-"]
    return cells


def markdown(report):
    head = ["model", "threads", "level", "ours median / p90 ms", "ORT median / p90 ms", "ORT / ours",
            "peak MiB ours / ORT (ORT above Python)", "max error abs / rel", "within tolerance"] + MASK_HEAD
    lines = [f"{report.get('title', 'Model set')}, {'quick' if report['quick'] else 'full size'}: commit {report['commit']}, "
             f"{report['date']}", f"Machine: {report['machine']}; ONNX Runtime {report['ort_version']}; "
             f"{report['rounds']} interleaved rounds of one process per configuration, each {report['warmup']} "
             f"warm-up runs and {-(-report['runs'] // report['rounds'])} timed runs.{mask_note()}",
             "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in report["rows"]]
    lines += cpu_pair_lines(report["rows"])
    failures = []  # ONNX Runtime's failure is in every level's row: listed once
    for r in report["rows"]:
        for side, level in (("tensorbridge", r["level"] + " "), ("onnxruntime", "")):
            line = f"- {r['model']} threads {r['threads']} {level}{side}: {r[side].get('error')}"
            if "error" in r[side] and line not in failures:
                failures.append(line)
    lines += [""] + (["Failures:"] + failures + [""] if failures else [])
    lines += ["Models: " + "; ".join(f"{m['name']}: {m['what']}" for m in report["models"]) + "."]
    return "\n".join(lines) + "\n"


def time_model(m, threads, levels, a, outputs_root):
    """One model at one thread count: ROUNDS rounds of ONNX Runtime then TensorBridge at each level, each a
    process of its own; one row per level with both sides' pooled results and TensorBridge's outputs
    checked against ONNX Runtime's. a: the options (runner, rounds, warmup, runs)."""
    outputs = os.path.join(outputs_root, m["name"], f"t{threads}")
    ort_dir = os.path.join(outputs, "ort")
    os.makedirs(ort_dir, exist_ok=True)
    timing = ["--warmup", str(a.warmup), "--runs", str(-(-a.runs // a.rounds))]
    common = [m["path"], "--inputs", m["inputs"], "--threads", str(threads)] + timing
    rounds = {"ort": [], **{level: [] for level in levels}, **{level + " unmasked": [] for level in levels}}
    probes = []
    for _ in range(a.rounds):
        probe = cpu_pair(a.runner, threads)
        if probe:
            probes.append(probe)
        rounds["ort"].append(run_json([sys.executable, os.path.join(HERE, "ort_runner.py")] + common +
                                      ["--outputs", ort_dir], env=env_without_mask()))
        for level in levels:
            ours_dir = os.path.join(outputs, level)
            os.makedirs(ours_dir, exist_ok=True)
            rounds[level].append(run_json([a.runner] + common + ["--level", level, "--outputs", ours_dir]))
            if CPU_MASK:
                plain_dir = os.path.join(outputs, level + "-unmasked")
                os.makedirs(plain_dir, exist_ok=True)
                rounds[level + " unmasked"].append(run_json([a.runner] + common + ["--level", level, "--outputs",
                                                                                   plain_dir], env=env_without_mask()))
    ort = pooled(rounds["ort"])
    rows = []
    for level in levels:
        ours_dir = os.path.join(outputs, level)
        ours = pooled(rounds[level])
        row = {"model": m["name"], "threads": threads, "level": level, "tensorbridge": ours, "onnxruntime": ort}
        if probes:
            row["cpu_pair"] = probes
        if CPU_MASK:
            row["unmasked"] = pooled(rounds[level + " unmasked"])
            row["cpu_mask"] = CPU_MASK
        if "error" not in ours and "error" not in ort:
            row["error_check"] = max_error(ours_dir, ort_dir, ours["rtol"], ours["atol"])
        rows.append(row)
        print("compare: " + " | ".join(row_cells(row)), file=sys.stderr, flush=True)
    return rows


def ort_version(rows):
    return next((r["onnxruntime"]["version"] for r in rows if "version" in r["onnxruntime"]), "?")


def row_ok(r):
    return ("error" not in r["tensorbridge"] and "error" not in r["onnxruntime"] and
            r.get("error_check", {}).get("outside", 1) == 0 and "error" not in r.get("error_check", {}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--levels", default="O2,O3")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated model names (default: every model of the manifest)")
    a = ap.parse_args()
    if a.rounds < 1 or a.runs < 1:
        ap.error(f"--runs ({a.runs}) and --rounds ({a.rounds}) must be at least 1")
    with open(os.path.join(a.models, "manifest.json")) as f:
        manifest = json.load(f)
    report = {"commit": describe_commit(), "date": datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M UTC"), "machine": describe_machine(), "quick": manifest["quick"], "warmup": a.warmup,
        "runs": a.runs, "rounds": a.rounds, "models": manifest["models"], "rows": [],
        "title": manifest.get("title", "Model set")}
    only = {n for n in a.only.split(",") if n}
    unknown = only - {m["name"] for m in manifest["models"]}
    if unknown:
        ap.error(f"--only names {', '.join(sorted(unknown))}, not in {a.models}/manifest.json; use its model names")
    report["models"] = [m for m in manifest["models"] if not only or m["name"] in only]
    for m in report["models"]:
        for threads in [int(t) for t in a.threads.split(",")]:
            report["rows"] += time_model(m, threads, a.levels.split(","), a, os.path.join(a.out, "model-outputs"))
    report["ort_version"] = ort_version(report["rows"])
    table = markdown(report)
    print(table)
    with open(os.path.join(a.out, "models.md"), "w") as f:
        f.write(table)
    with open(os.path.join(a.out, "models.json"), "w") as f:
        json.dump(report, f, indent=1)
    ok = all(row_ok(r) for r in report["rows"])
    print(f"compare: wrote {a.out}/models.md and models.json; " +
          ("every configuration ran and passed the check" if ok else "SOME CONFIGURATIONS FAILED (see above)"),
          file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
