#!/usr/bin/env bash
# The operator benchmark, TensorBridge's level-2 ConvTranspose and Resize kernels against ONNX Runtime on
# one-node models (docs/benchmarking.md, "Operator set"), with the model set's machinery: the venv and the
# model_bench build of bench/models/run.sh, the one-node models written by make_op_models.py into
# build/bench-ops-models/{full,quick}, and bench/models/compare.py, which interleaves ONNX Runtime and
# TensorBridge rounds (one process per configuration), checks our outputs against ONNX Runtime's and writes
# the table to build/bench-ops/models.md and models.json.
# Usage: bash bench/ops/run.sh [--quick]   (--quick: a quarter of the spatial size, 6 timed runs)
# Environment: BENCH_THREADS (default 1,2), BENCH_LEVELS (O2), BENCH_WARMUP (3), BENCH_RUNS (30; 6 quick),
# BENCH_ROUNDS (3), BENCH_ONLY (comma-separated model names; default all).
set -euo pipefail

quick=""
case "${1:-}" in
  "") ;;
  --quick) quick="--quick" ;;
  *) echo "usage: bash bench/ops/run.sh [--quick]" >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
build=build/bench
venv=build/bench-venv
models=build/bench-ops-models/$([ -n "$quick" ] && echo quick || echo full)

echo "== 1/4 packages and the Python venv ($venv)"
bash scripts/setup.sh python3-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
if ! "$venv/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
  "$venv/bin/pip" install --quiet onnx onnxruntime numpy
fi

echo "== 2/4 building TensorBridge (RelWithDebInfo) and model_bench in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_BUILD_BENCH=ON -DTB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target tb_bench_model >/dev/null

echo "== 3/4 writing the operator models into $models"
rm -rf "$models"
"$venv/bin/python" bench/ops/make_op_models.py "$models" $quick

echo "== 4/4 running (one process per configuration; progress on stderr)"
mkdir -p build/bench-ops
"$venv/bin/python" bench/models/compare.py --models "$models" --runner "$build/bench/model_bench" --out build/bench-ops \
  --threads "${BENCH_THREADS:-1,2}" --levels "${BENCH_LEVELS:-O2}" --warmup "${BENCH_WARMUP:-3}" \
  --runs "${BENCH_RUNS:-$([ -n "$quick" ] && echo 6 || echo 30)}" --rounds "${BENCH_ROUNDS:-3}" --only "${BENCH_ONLY:-}"
