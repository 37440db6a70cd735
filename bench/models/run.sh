#!/usr/bin/env bash
# The model-set benchmark, TensorBridge against ONNX Runtime, from a clean clone in one command
# (docs/benchmarking.md, "Model set"):
#   1. installs what it needs: scripts/setup.sh (the build) plus python3-venv, and a venv in build/bench-venv
#      with onnx, onnxruntime and numpy from PyPI (test tooling only; the library never uses them);
#   2. builds the library and bench/model_bench.c, RelWithDebInfo, in build/bench;
#   3. writes the model set with seeded weights into build/bench-models/{full,quick} (make_models.py);
#   4. runs every model in both, threads 1 and 2, TensorBridge at O2 and O3, one process per configuration,
#      checks TensorBridge's outputs against ONNX Runtime's, and prints the table (compare.py), also written
#      to build/bench/models.md and build/bench/models.json.
# Usage: bash bench/models/run.sh [--quick]   (--quick: small models, 6 timed runs: a check, not a measurement)
# Environment: BENCH_THREADS (default 1,2), BENCH_LEVELS (O2,O3), BENCH_WARMUP (3), BENCH_RUNS (30; 6 quick),
# BENCH_ROUNDS (3: ORT and each level take turns, RUNS / ROUNDS timed runs per turn).
set -euo pipefail

quick=""
case "${1:-}" in
  "") ;;
  --quick) quick="--quick" ;;
  *) echo "usage: bash bench/models/run.sh [--quick]" >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
build=build/bench
venv=build/bench-venv
models=build/bench-models/$([ -n "$quick" ] && echo quick || echo full)

echo "== 1/4 packages and the Python venv ($venv)"
bash scripts/setup.sh python3-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  "$venv/bin/pip" install --quiet onnx onnxruntime numpy
fi

echo "== 2/4 building TensorBridge (RelWithDebInfo) and model_bench in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_BUILD_BENCH=ON -DTB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target tb_bench_model >/dev/null

echo "== 3/4 writing the model set into $models"
rm -rf "$models"
"$venv/bin/python" bench/models/make_models.py "$models" $quick

echo "== 4/4 running (one process per configuration; progress on stderr)"
"$venv/bin/python" bench/models/compare.py --models "$models" --runner "$build/bench/model_bench" --out "$build" \
  --threads "${BENCH_THREADS:-1,2}" --levels "${BENCH_LEVELS:-O2,O3}" --warmup "${BENCH_WARMUP:-3}" \
  --runs "${BENCH_RUNS:-$([ -n "$quick" ] && echo 6 || echo 30)}" --rounds "${BENCH_ROUNDS:-3}"
