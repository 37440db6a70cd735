#!/usr/bin/env bash
# The demo: install what is missing, build, then find the devices, explain the choice, check the setup,
# and run the bundled models (models/, made by scripts/make_models.py) with `tb run` at O0, O1 and O2 (O2: the fast fp32 GEMM).
# Each run is checked against ONNX Runtime's reference outputs with `tb run --compare-dir` (every element
# within 1e-5 + 1e-4 * |reference|; a difference makes tb exit 1 and stops the demo) and prints the median
# and fastest time of 5 runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"$(nproc)" --target tb >/dev/null
tb=build/release/tb
echo "\$ tb devices"; "$tb" devices
echo; echo "\$ tb select --explain"; "$tb" select --explain
echo; echo "\$ tb doctor"; "$tb" doctor

# model name, input name
for spec in "cnn_small input" "encoder_small x"; do
  set -- $spec
  model=$1 input=$2
  for level in O0 O1 O2; do
    args=(run "models/$model.onnx" --level "$level" --input "$input=models/$model/inputs/$input.npy"
          --compare-dir "models/$model/outputs" --repeat 5)
    echo; echo "\$ tb ${args[*]}"
    "$tb" "${args[@]}"
  done
done
echo; echo "Every output matched ONNX Runtime's reference within rtol 1e-4 / atol 1e-5."
