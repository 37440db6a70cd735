#!/usr/bin/env python3
"""The real set (written by make_real.py) in TensorBridge against ONNX Runtime: for each model

  1. correctness: TensorBridge at each --check-levels level (O0, O2, O3; one run on all cores) against the
     reference outputs make_real.py saved from ONNX Runtime, with the library's tolerance for the precision
     the level ran in (compare.max_error: fp32 for O0/O2, bf16 for O3 where it ran bf16);
  2. latency: ONNX Runtime and TensorBridge at each --levels level on each --threads count, taking turns in
     ROUNDS rounds of one process per configuration (compare.time_model, as the model set does), with the
     outputs of each checked against ONNX Runtime's of the same thread count;
  3. profile: `tb run --profile` at --profile-level on 1 thread: the share of the kernel time per operator
     and kernel, and which operators ran on reference (level-0) kernels and what share they took (issue
     16 item 2: none above 2%).

Writes OUT/real.md (the tables) and OUT/real.json (everything). Exit code 0 when every model was made,
every configuration ran and every output passed its check.

Usage: compare_real.py --models DIR --runner PATH/model_bench --tb PATH/tb --out DIR [--threads 1,N]
                       [--levels O2,O3] [--check-levels O0,O2,O3] [--profile-level O2] [--profile-runs 5]
                       [--warmup 2] [--runs 10] [--rounds 2] [--only NAME,NAME]"""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import (MASK_HEAD, CPU_MASK, cpu_pair_lines, describe_commit, describe_machine, mask_note, max_error,  # noqa: E402
                     ort_version, row_cells, row_ok, run_json, time_model)

REFERENCE_LIMIT = 2.0  # percent of a model's profiled time (issue 16 item 2)
# The library's fp32 tolerance at O1-O3 (docs/validation.md), which compare.py's checks get from model_bench;
# the table's O0 entry is 0 (O0 is what the others are measured against), too tight against another runtime
FP32_AGAINST_ORT = (1e-4, 1e-5)


def check_level(m, level, threads, runner, out_root):
    """One run at `level` against make_real.py's reference outputs."""
    out = os.path.join(out_root, m["name"], "check", level)
    os.makedirs(out, exist_ok=True)
    r = run_json([runner, m["path"], "--inputs", m["inputs"], "--threads", str(threads), "--level", level,
                  "--warmup", "0", "--runs", "1", "--outputs", out])
    if "error" in r:
        return {"level": level, "error": r["error"]}
    rtol, atol = r["rtol"], r["atol"]
    if rtol == 0 and atol == 0:  # O0 is the library's own reference (tolerance 0); ORT sums in another order
        rtol, atol = FP32_AGAINST_ORT
    err = max_error(out, m["reference"], rtol, atol)
    return {"level": level, "precision": r["precision"], "ms": r["median_ms"], **err}


def check_cell(c):
    if "error" in c and "max_abs" not in c:
        return f"**failed**: {c['error']}"
    tol = f"rtol {c['rtol']:g}, atol {c['atol']:g}"
    if "error" in c:
        return f"**no**: {c['error']}"
    verdict = "yes" if c["outside"] == 0 else f"**no**: {c['outside']} of {c['elements']} outside"
    return f"{verdict} ({c['precision']}, {tol}; max abs {c['max_abs']:.1e}, rel {c['max_rel']:.1e})"


def check_ok(c):
    return "error" not in c and c.get("outside", 1) == 0


def profile(m, tb, level, runs):
    """`tb run --profile --json` on 1 thread: per (operator, kernel) the nodes and the ms per run, the
    reference kernels' share."""
    cmd = [tb, "run", m["path"], "--level", level, "--threads", "1", "--repeat", str(runs + 1), "--profile", "--json"]
    for name in sorted(os.listdir(m["inputs"])):
        cmd += ["--input", f"{name[:-4]}={os.path.join(m['inputs'], name)}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        return {"error": "tb run --profile timed out after 3600 s"}
    if p.returncode != 0:
        lines = (p.stderr or p.stdout).strip().splitlines() or [f"exit code {p.returncode}"]
        return {"error": lines[-1][:300]}
    entries = json.loads(p.stdout)["profile"]
    total = sum(e["ms_per_run"] for e in entries)
    groups = {}
    for e in entries:
        kernel = "reference" if e["kernel"] == "reference" else "fast"
        g = groups.setdefault((e["op"], kernel), {"op": e["op"], "kernel": kernel, "nodes": 0, "ms": 0.0,
                                                  "kernels": set()})
        g["nodes"] += 1
        g["ms"] += e["ms_per_run"]
        g["kernels"].add(e["kernel"])
    ops = sorted(groups.values(), key=lambda g: -g["ms"])
    for g in ops:
        g["share"] = 100.0 * g["ms"] / total if total > 0 else 0.0
        g["kernels"] = sorted(g["kernels"])
    reference = [g for g in ops if g["kernel"] == "reference"]
    return {"level": level, "runs": runs, "total_ms": total, "operators": ops,
            "reference_share": sum(g["share"] for g in reference),
            "reference_over_limit": [g["op"] for g in reference if g["share"] > REFERENCE_LIMIT]}


def profile_cells(m, p):
    if "error" in p:
        return [m["name"], "-", "-", f"**failed**: {p['error']}", "-"]
    ref = [g for g in p["operators"] if g["kernel"] == "reference"]
    ref_text = ", ".join(f"{g['op']} {g['share']:.1f}% ({g['nodes']})" for g in ref) or "none"
    top = ", ".join(f"{g['op']}{' (ref)' if g['kernel'] == 'reference' else ''} {g['share']:.0f}%"
                    for g in p["operators"][:4])
    over = ", ".join(p["reference_over_limit"]) or "none"
    return [m["name"], f"{p['total_ms']:.3g}", f"{p['reference_share']:.1f}%", ref_text, over, top]


def geomeans(rows):
    """ORT / ours per (threads, level) over the models where both ran: the geometric mean and the worst."""
    out = {}
    for r in rows:
        if "median_ms" in r["tensorbridge"] and "median_ms" in r["onnxruntime"]:
            out.setdefault((r["threads"], r["level"]), []).append(
                (r["onnxruntime"]["median_ms"] / r["tensorbridge"]["median_ms"], r["model"]))
    return [{"threads": t, "level": lv, "models": len(v),
             "geomean_ort_over_ours": math.exp(sum(math.log(x) for x, _ in v) / len(v)),
             "worst": min(v)[0], "worst_model": min(v)[1], **masked_geomean(rows, t, lv)}
            for (t, lv), v in sorted(out.items())]


def masked_geomean(rows, threads, level):
    """With TB_CPU_FEATURES: the geometric mean of ours masked / ours unmasked (above 1: the mask costs)."""
    v = [r["tensorbridge"]["median_ms"] / r["unmasked"]["median_ms"] for r in rows
         if r["threads"] == threads and r["level"] == level and "median_ms" in r["tensorbridge"] and
         "median_ms" in r.get("unmasked", {})]
    return {"geomean_masked_over_unmasked": math.exp(sum(math.log(x) for x in v) / len(v))} if v else {}


def table(head, rows):
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


def markdown(report):
    partial = f" (so far {len(report['models'])} of {report['total']} models)" if len(report["models"]) < report["total"] else ""
    lines = [f"Real set, {'quick' if report['quick'] else 'full size'}{partial}: commit {report['commit']}, {report['date']}",
             f"Machine: {report['machine']}; ONNX Runtime {report['ort_version']}; exported by torch "
             f"{report['versions'].get('torch', '?')} (opset {report['opset']}). Latency: {report['rounds']} "
             f"interleaved rounds (ONNX Runtime, then TensorBridge at each level, one process each), each "
             f"{report['warmup']} warm-up and {-(-report['runs'] // report['rounds'])} timed runs.{mask_note()}", "",
             "Correctness against ONNX Runtime's reference outputs (1 run on all cores):", ""]
    levels = report["check_levels"]
    lines += table(["model"] + levels, [[c["model"]] + [check_cell(x) for x in c["levels"]] for c in report["checks"]])
    lines += ["", "Latency (ORT / ours above 1: TensorBridge is faster):", ""]
    lines += table(["model", "threads", "level", "ours median / p90 ms", "ORT median / p90 ms", "ORT / ours",
                    "peak MiB ours / ORT (ORT above Python)", "max error abs / rel", "within tolerance"] + MASK_HEAD,
                   [row_cells(r) for r in report["rows"]])
    lines += cpu_pair_lines(report["rows"])
    lines += ["", "Geometric mean of ORT / ours over the models:", ""]
    lines += table(["threads", "level", "models", "geomean ORT / ours", "worst (model)"] +
                   (["geomean ours masked / unmasked"] if CPU_MASK else []),
                   [[str(g["threads"]), g["level"], str(g["models"]), f"{g['geomean_ort_over_ours']:.3g}",
                     f"{g['worst']:.3g} ({g['worst_model']})"] +
                    ([f"{g['geomean_masked_over_unmasked']:.3g}" if "geomean_masked_over_unmasked" in g else "-"]
                     if CPU_MASK else []) for g in report["geomeans"]])
    lines += ["", f"Profile at {report['profile_level']}, 1 thread (tb run --profile, "
              f"{report['profile_runs']} runs after one warm-up; the kernels' time, per operator):", ""]
    lines += table(["model", "ms per run", "reference share", "reference kernels: operator share (nodes)",
                    f"reference above {REFERENCE_LIMIT:g}%", "largest shares"],
                   [profile_cells(m, p) for m, p in zip(report["models"], report["profiles"])])
    failures = [f"- {f['name']}: not made: {f['error']}" for f in report["failed_to_make"]]
    for c in report["checks"]:
        failures += [f"- {c['model']} {x['level']}: {x.get('error') or 'outside the tolerance'}"
                     for x in c["levels"] if not check_ok(x)]
    for r in report["rows"]:
        for side in ("tensorbridge", "onnxruntime"):
            line = f"- {r['model']} threads {r['threads']} {r['level']} {side}: {r[side].get('error')}"
            if "error" in r[side] and line not in failures:
                failures.append(line)
    lines += [""] + (["Failures:"] + failures + [""] if failures else [])
    lines += ["Models:", ""] + [f"- `{m['name']}` ({m['nodes']} nodes, {m['parameters'] / 1e6:.1f} M parameters): "
                               f"{m['what']}" for m in report["models"]]
    return "\n".join(lines) + "\n"


def write(report, out):
    """real.md and real.json of the models done so far; the markdown text."""
    done = len(report["checks"])
    report["models_done"] = done
    report["ort_version"] = ort_version(report["rows"])
    report["geomeans"] = geomeans(report["rows"])
    text = markdown(dict(report, models=report["models"][:done], total=len(report["models"])))
    with open(os.path.join(out, "real.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "real.json"), "w") as f:
        json.dump(report, f, indent=1)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--runner", required=True)
    ap.add_argument("--tb", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--threads", default=f"1,{os.cpu_count() or 1}")
    ap.add_argument("--levels", default="O2,O3")
    ap.add_argument("--check-levels", default="O0,O2,O3")
    ap.add_argument("--profile-level", default="O2")
    ap.add_argument("--profile-runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    if a.rounds < 1 or a.runs < 1 or a.profile_runs < 1:
        ap.error(f"--runs ({a.runs}), --rounds ({a.rounds}) and --profile-runs ({a.profile_runs}) must be at least 1")
    with open(os.path.join(a.models, "manifest.json")) as f:
        manifest = json.load(f)
    only = [n for n in a.only.split(",") if n]
    unknown = sorted(set(only) - {m["name"] for m in manifest["models"]})
    if unknown:
        ap.error(f"--only names {', '.join(unknown)}, which {a.models}/manifest.json does not list; it lists "
                 f"{', '.join(m['name'] for m in manifest['models'])}")
    models = [m for m in manifest["models"] if not only or m["name"] in only]
    threads = sorted({int(t) for t in a.threads.split(",")})
    check_threads = max(threads)
    report = {"set": "real", "commit": describe_commit(), "date": datetime.datetime.now(datetime.timezone.utc)
              .strftime("%Y-%m-%d %H:%M UTC"), "machine": describe_machine(), "quick": manifest["quick"],
              "versions": manifest.get("versions", {}), "opset": manifest.get("opset"), "warmup": a.warmup,
              "runs": a.runs, "rounds": a.rounds, "check_levels": a.check_levels.split(","),
              "profile_level": a.profile_level, "profile_runs": a.profile_runs, "models": models,
              "failed_to_make": manifest.get("failed_to_make", []), "checks": [], "rows": [], "profiles": []}
    outputs = os.path.join(a.out, "real-outputs")
    text = write(report, a.out)
    for m in models:
        print(f"compare_real: {m['name']}", file=sys.stderr, flush=True)
        checks = [check_level(m, level, check_threads, a.runner, outputs) for level in report["check_levels"]]
        report["checks"].append({"model": m["name"], "levels": checks})
        print("compare_real:   check " + "; ".join(f"{c['level']}: {check_cell(c)}" for c in checks), file=sys.stderr,
              flush=True)
        for t in threads:
            report["rows"] += time_model(m, t, a.levels.split(","), a, outputs)
        p = profile(m, a.tb, a.profile_level, a.profile_runs)
        report["profiles"].append(p)
        print("compare_real:   profile " + " | ".join(profile_cells(m, p)), file=sys.stderr, flush=True)
        text = write(report, a.out)  # after every model: a long run that is stopped leaves its tables so far
    print(text)
    ok = (not report["failed_to_make"] and all(check_ok(x) for c in report["checks"] for x in c["levels"]) and
          all(row_ok(r) for r in report["rows"]) and all("error" not in p for p in report["profiles"]))
    print(f"compare_real: wrote {a.out}/real.md and real.json; " +
          ("every model was made, ran and passed its checks" if ok else "SOME MODELS OR CONFIGURATIONS FAILED (see above)"),
          file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
