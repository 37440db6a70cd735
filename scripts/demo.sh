#!/usr/bin/env bash
# The demo: install what is missing, build, then find the devices, explain the choice, check the setup,
# and run the bundled models (models/, made by scripts/make_models.py) with `tb run` on the CPU at O0, O1, O2
# (the fast fp32 kernels) and O3 (bf16), and at O2 on OpenCL and Vulkan when present, then profile one.
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
  run_args=(run "models/$model.onnx" --input "$input=models/$model/inputs/$input.npy" --compare-dir "models/$model/outputs"
            --repeat 5)
  for level in O0 O1 O2; do
    echo; echo "\$ tb ${run_args[*]} --backend cpu --level $level"
    "$tb" "${run_args[@]}" --backend cpu --level "$level"
  done
  # O3: MatMul/Gemm/Conv in bf16 with fp32 accumulation (on a CPU with AVX512-BF16 or AMX; else fp32 and a
  # warning), checked with the tolerance table's bf16 bar
  echo; echo "\$ tb ${run_args[*]} --backend cpu --level O3 --rtol 1e-2 --atol 1e-2"
  "$tb" "${run_args[@]}" --backend cpu --level O3 --rtol 1e-2 --atol 1e-2
  # the same model on the portable GPU APIs (PoCL and lavapipe here: CPU implementations, so this shows that
  # every node runs there and matches, not GPU speed)
  for backend in opencl:0 vulkan:0; do
    if "$tb" select "$backend" >/dev/null 2>&1; then
      echo; echo "\$ tb ${run_args[*]} --backend $backend --level O2"
      "$tb" "${run_args[@]}" --backend "$backend" --level O2
    else
      echo; echo "($backend is not available here: skipped)"
    fi
  done
done
echo; echo "\$ tb run models/encoder_small.onnx --backend cpu --level O2 --repeat 20 --profile --dim batch=2"
"$tb" run models/encoder_small.onnx --backend cpu --level O2 --repeat 20 --profile --dim batch=2 | sed -n '/^run:/p;/^profile:/,$p'
echo; echo "Every output matched ONNX Runtime's reference: within rtol 1e-4 / atol 1e-5 in fp32, 1e-2 in bf16."
