#!/usr/bin/env bash
# The model-set benchmarks, TensorBridge against ONNX Runtime, from a clean clone in one command
# (docs/benchmarking.md, "Model set" and "Real set"):
#   1. installs what it needs: scripts/setup.sh (the build) plus python3-venv, and a venv with the Python
#      packages from PyPI (test tooling only; the library never uses them): build/bench-venv with onnx,
#      onnxruntime and numpy for the default set; build/real-venv with torch (CPU use), torchvision,
#      transformers, onnxscript besides for the real set (bench/models/real_venv.sh);
#   2. builds the library, tb and bench/model_bench.c, RelWithDebInfo, in build/bench;
#   3. writes the models with seeded weights: the default set into build/bench-models/{full,quick}
#      (make_models.py), the real set into build/real-models/{full,quick} (make_real.py: torchvision and
#      transformers architectures exported by torch.onnx, with ONNX Runtime's outputs as references);
#   4. runs every model in both runtimes, one process per configuration, checks TensorBridge's outputs
#      against ONNX Runtime's and prints the table (compare.py: build/bench/models.md and models.json;
#      compare_real.py: build/bench/real.md and real.json, with O0/O2/O3 checks and a profile per model).
# Usage: bash bench/models/run.sh [--set default|real] [--quick]
#   --quick: small inputs (and fewer runs): a check of the pipeline, not a measurement.
# Environment: BENCH_THREADS (default 1,2 for the default set; 1,<all CPUs> for the real set), BENCH_LEVELS
# (O2,O3), BENCH_WARMUP (3; real 2), BENCH_RUNS (30, 6 quick; real 10, 4 quick), BENCH_ROUNDS (3; real 2:
# ORT and each level take turns, RUNS / ROUNDS timed runs per turn); real set only: BENCH_CHECK_LEVELS
# (O0,O2,O3), BENCH_ONLY (comma-separated model names), BENCH_REMAKE=1 (write the models again even when
# the scripts that made them are unchanged). TB_CPU_FEATURES (e.g. -avx512f,-amx, docs/cpu.md) reaches
# TensorBridge's processes only, not ONNX Runtime's; with it set, TensorBridge is also timed without it in
# the same rounds (compare.py: the "unmasked" columns).
set -euo pipefail

quick="" set="default"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --set) [ $# -ge 2 ] || { echo "run.sh: --set wants default or real" >&2; exit 2; }; set="$2"; shift ;;
    *) echo "usage: bash bench/models/run.sh [--set default|real] [--quick]" >&2; exit 2 ;;
  esac
  shift
done
case "$set" in
  default|real) ;;
  *) echo "run.sh: --set '$set' is not a set; use --set default or --set real" >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
build=build/bench
size=$([ -n "$quick" ] && echo quick || echo full)

echo "== 1/4 packages and the Python venv"
bash scripts/setup.sh python3-venv
if [ "$set" = real ]; then
  venv=build/real-venv
  bash bench/models/real_venv.sh "$venv"
else
  venv=build/bench-venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
    "$venv/bin/pip" install --quiet onnx onnxruntime numpy
  fi
fi

echo "== 2/4 building TensorBridge (RelWithDebInfo), tb and model_bench in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_BUILD_BENCH=ON -DTB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target tb_bench_model tb_bench_cpu_pair_probe tb >/dev/null

if [ "$set" = default ]; then
  models=build/bench-models/$size
  echo "== 3/4 writing the model set into $models"
  rm -rf "$models"
  "$venv/bin/python" bench/models/make_models.py "$models" $quick
  echo "== 4/4 running (one process per configuration; progress on stderr)"
  exec "$venv/bin/python" bench/models/compare.py --models "$models" --runner "$build/bench/model_bench" --out "$build" \
    --threads "${BENCH_THREADS:-1,2}" --levels "${BENCH_LEVELS:-O2,O3}" --warmup "${BENCH_WARMUP:-3}" \
    --runs "${BENCH_RUNS:-$([ -n "$quick" ] && echo 6 || echo 30)}" --rounds "${BENCH_ROUNDS:-3}"
fi

models=build/real-models/$size
echo "== 3/4 the real set in $models"
# exporting takes minutes: the models are written again only when missing or made by other scripts (the
# SHA-256 of make_real.py and real_models.py is kept in the folder; not file times, which a fresh checkout
# or a git worktree sets to its own)
scripts_sha=$(cat bench/models/make_real.py bench/models/real_models.py | sha256sum | cut -d' ' -f1)
if [ "${BENCH_REMAKE:-0}" = 1 ] || [ ! -f "$models/manifest.json" ] || \
   [ "$(cat "$models/scripts.sha256" 2>/dev/null)" != "$scripts_sha" ]; then
  rm -rf "$models"
  # a model that fails to export is listed in the manifest and in the table's failures: go on
  "$venv/bin/python" bench/models/make_real.py "$models" $quick || true
  [ -f "$models/manifest.json" ] && echo "$scripts_sha" > "$models/scripts.sha256"
else
  echo "   (kept: made by these make_real.py and real_models.py; BENCH_REMAKE=1 writes them again)"
fi
echo "== 4/4 running (one process per configuration; progress on stderr)"
exec "$venv/bin/python" bench/models/compare_real.py --models "$models" --runner "$build/bench/model_bench" \
  --tb "$build/tb" --out "$build" --threads "${BENCH_THREADS:-1,$(nproc)}" --levels "${BENCH_LEVELS:-O2,O3}" \
  --check-levels "${BENCH_CHECK_LEVELS:-O0,O2,O3}" --warmup "${BENCH_WARMUP:-2}" \
  --runs "${BENCH_RUNS:-$([ -n "$quick" ] && echo 4 || echo 10)}" --rounds "${BENCH_ROUNDS:-2}" --only "${BENCH_ONLY:-}"
