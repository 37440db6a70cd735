#!/usr/bin/env bash
# The per-node overhead benchmark and the thread-scaling run (docs/performance.md, "Per-node overhead" and
# "Thread scaling"), with the model set's machinery: a venv with onnx, onnxruntime and numpy (build/bench-venv,
# or build/real-venv when it exists), model_bench built RelWithDebInfo in build/bench.
#   bash bench/overhead/run.sh             chains of 100 and 1000 tiny Add/Relu nodes, models/cnn_small,
#                                          models/encoder_small and, when the real set has been written
#                                          (bench/models/run.sh --set real), streaming_gru and streaming_lstm,
#                                          against ONNX Runtime: microseconds per node; build/bench-overhead/
#   bash bench/overhead/run.sh --scaling   every real-set model on 1 and 2 threads at O2, ONNX Runtime on the
#                                          same counts as the peer; build/bench-overhead/scaling.md
# Environment: BENCH_THREADS (overhead: 1; scaling: 1,<all CPUs>), BENCH_LEVELS (overhead: O2), BENCH_RUNS
# (overhead 300, scaling 6), BENCH_ROUNDS (3 / 2), BENCH_ONLY (scaling: comma-separated model names),
# BENCH_BASELINE (scaling: another model_bench, e.g. the main branch's, run in the same rounds as "base").
set -euo pipefail

mode=overhead
case "${1:-}" in
  "") ;;
  --scaling) mode=scaling ;;
  *) echo "usage: bash bench/overhead/run.sh [--scaling]" >&2; exit 2 ;;
esac

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
build=build/bench
out=build/bench-overhead
real=build/real-models/full

echo "== 1/3 packages and the Python venv"
bash scripts/setup.sh python3-venv
if [ -x build/real-venv/bin/python ]; then
  venv=build/real-venv
else
  venv=build/bench-venv
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  if ! "$venv/bin/python" -c "import onnx, onnxruntime, numpy" 2>/dev/null; then
    "$venv/bin/pip" install --quiet onnx onnxruntime numpy
  fi
fi

echo "== 2/3 building TensorBridge (RelWithDebInfo) and model_bench in $build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_BUILD_BENCH=ON -DTB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target tb_bench_model >/dev/null

echo "== 3/3 running (one process per configuration; progress on stderr); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$mode" = scaling ]; then
  [ -f "$real/manifest.json" ] || { echo "run.sh: no real set in $real; write it with bash bench/models/run.sh --set real" >&2; exit 2; }
  exec "$venv/bin/python" bench/overhead/scaling.py --runner "$build/bench/model_bench" --models "$real" --out "$out" \
    --threads "${BENCH_THREADS:-1,$(nproc)}" --runs "${BENCH_RUNS:-6}" --rounds "${BENCH_ROUNDS:-2}" --ort \
    --only "${BENCH_ONLY:-}" ${BENCH_BASELINE:+--baseline "$BENCH_BASELINE"}
fi
models=(--model cnn_small=models/cnn_small.onnx:models/cnn_small/inputs
        --model encoder_small=models/encoder_small.onnx:models/encoder_small/inputs)
for m in streaming_gru streaming_lstm; do
  [ -f "$real/$m.onnx" ] && models+=(--model "$m=$real/$m.onnx:$real/$m/inputs")
done
exec "$venv/bin/python" bench/overhead/overhead.py --runner "$build/bench/model_bench" --out "$out" "${models[@]}" \
  --threads "${BENCH_THREADS:-1}" --levels "${BENCH_LEVELS:-O2}" --runs "${BENCH_RUNS:-300}" --rounds "${BENCH_ROUNDS:-3}"
