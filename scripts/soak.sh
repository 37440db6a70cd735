#!/usr/bin/env bash
# The soak test (docs/testing.md, "Soak test"), run by `scripts/test.sh --long` after the build: tb_soak runs the
# demo models (models/) and the bench models' quick set (bench/models/make_models.py, written into
# build/bench-models/quick with onnx and numpy from a venv in build/bench-venv; skipped with a note when they
# cannot be installed) on every available backend at O1, O2 and O3 from 2 threads, checks every output against
# the CPU O0 reference and bounds the memory drift. Exit status: tb_soak's (0 passed, 1 failed, 2/3 setup).
# Usage: bash scripts/soak.sh [SECONDS] [BUILD_DIR]   (defaults: 600, build/ci)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-600}"
build="${2:-build/ci}"
soak="$build/tests/soak/tb_soak"
[ -x "$soak" ] || { echo "scripts/soak.sh: $soak is missing; build $build first (scripts/test.sh does)" >&2; exit 2; }

models=(models/cnn_small.onnx models/encoder_small.onnx)
venv=build/bench-venv
bench=build/bench-models/quick
if [ ! -f "$bench/manifest.json" ]; then
  if { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
     { "$venv/bin/python" -c "import onnx, numpy" 2>/dev/null || "$venv/bin/pip" install --quiet onnx numpy; }; then
    "$venv/bin/python" bench/models/make_models.py "$bench" --quick || rm -f "$bench/manifest.json"
  fi
fi
if [ -f "$bench/manifest.json" ]; then
  models+=("$bench"/*.onnx)
else
  echo "scripts/soak.sh: the bench models could not be made (no venv with onnx and numpy); the demo models only"
fi

echo "== soak: ${#models[@]} models, $seconds s =="
# Without the Vulkan validation layer (scripts/test.sh turns it on): its own allocations would count in the RSS.
TB_VULKAN_VALIDATION= "$soak" --duration "$seconds" --threads 2 --levels O1,O2,O3 "${models[@]}"
