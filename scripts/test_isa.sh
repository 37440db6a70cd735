#!/usr/bin/env bash
# The instruction-set checks of the test command (scripts/test.sh runs this after the suite): the library
# never runs an instruction the CPU lacks, and TB_CPU_FEATURES keeps the kernels it removes off.
#  1. Under qemu-user emulating a Haswell CPU (AVX2 + FMA, no AVX-512, no AMX): `tb info cpu` must show
#     that CPU's features; the kernel tests run there (any AVX-512 instruction is SIGILL); and both demo
#     models run at O2 and O3, match ONNX Runtime's outputs, with no AVX-512 kernel in the profile.
#  2. On this CPU with TB_CPU_FEATURES=-avx512f,-amx: the same kernel tests (each starts from that mask,
#     see tbt_clear_env), and the same model runs and profile check.
#  3. With TB_CPU_FEATURES=-avx2,-fma,-avx512f,-amx (a CPU with AVX or only SSE: every x86-64 CPU must run the
#     suite): the kernel tests, and the models with no AVX2, AVX-512 or AMX kernel in the profile.
# Usage: scripts/test_isa.sh [BUILD_DIR]   (default build/ci, already built)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build="${1:-build/ci}"
mask="-avx512f,-amx"
mask_sse="-avx2,-fma,-avx512f,-amx"
qemu=(qemu-x86_64 -cpu Haswell)

# The tests whose kernels have AVX2 / AVX-512 / AVX512-BF16 / AMX paths, or which run models through them.
kernel_tests=(test_cpu test_cpu_features test_convert test_convert_pairs test_gemm_fast test_gemm_driver
              test_gemm_bf16 test_fused_matmul_epilogue test_conv_fast test_conv_depthwise test_conv_pointwise test_conv_grouped test_conv_taps test_conv_direct test_conv_direct_bf16
              test_conv_winograd test_conv_transpose_fast test_resize_fast test_seq_fast test_attention_bf16 test_attention_row
              test_vec_math test_vec_elementwise test_vec_nn test_vec_transpose test_layout_fast
              test_models test_prepare)
# The same less the CPU probe's own tests (they check what the probe reports, which the mask changes).
mask_tests=("${kernel_tests[@]:2}")

fail() { echo "test_isa: $*" >&2; exit 1; }

# One test executable with CTest's environment (tests/CMakeLists.txt); output kept in a log, shown on failure.
run_test() {
  local label="$1" t="$2" log
  shift 2
  log="$build/isa-$label-$t.log"
  if ! env TB_BACKEND= TB_FSROOT= TB_CPU_FEATURES= TB_LOG=error CMOCKA_MESSAGE_OUTPUT=stdout "$@" "$build/tests/$t" >"$log" 2>&1; then
    cat "$log"
    fail "$t failed $label (log above, also in $log)"
  fi
  echo "$label: $t passed ($(grep -c '^\[  SKIPPED \]' "$log" || true) skipped)"
}

# Both demo models at O2 and O3 on their reference inputs: outputs within the bundled tolerance of ONNX
# Runtime's (--compare-dir), and no node's kernel (--profile --json lists every node) whose name matches the
# extended regular expression `forbidden` (the instruction sets the CPU or the mask lacks).
run_models() {
  local label="$1" forbidden="$2" out kernels model input level
  shift 2
  for model in cnn_small:input encoder_small:x; do
    input="${model#*:}"
    model="${model%%:*}"
    for level in O2 O3; do
      if ! out="$(env TB_BACKEND= TB_CPU_FEATURES= "$@" "$build/tb" run "models/$model.onnx" --backend cpu --level "$level" --json --profile \
                  --input "$input=models/$model/inputs/$input.npy" --compare-dir "models/$model/outputs" 2>&1)"; then
        echo "$out"
        fail "tb run models/$model.onnx --level $level failed $label (output above)"
      fi
      kernels="$(grep -o '"kernel": *"[^"]*"' <<<"$out" | sed 's/.*: *//' | sort | uniq -c | tr -s ' \n' ' ')"
      [ -n "$kernels" ] || fail "tb run models/$model.onnx --level $level $label: no profile in the output: $out"
      if grep -Eiq "$forbidden" <<<"$kernels"; then
        fail "tb run models/$model.onnx --level $level $label: a kernel that needs what '$forbidden' names ran:$kernels"
      fi
      echo "$label: models/$model.onnx at $level matches the reference; kernels:$kernels"
    done
  done
}

echo "== kernel tests and models under qemu-x86_64 -cpu Haswell (AVX2, no AVX-512) =="
command -v qemu-x86_64 >/dev/null || fail "qemu-x86_64 is missing: install Debian's qemu-user (scripts/setup.sh does)"
features="$(env TB_CPU_FEATURES= TB_LOG=error "${qemu[@]}" "$build/tb" info cpu 2>/dev/null | sed -n 's/^  features: *//p' | head -1)"
[ -n "$features" ] || fail "tb info cpu under qemu printed no features line"
grep -qw avx2 <<<"$features" && grep -qw fma <<<"$features" || fail "qemu's Haswell should show avx2 and fma: '$features'"
! grep -Eqw 'avx512f|amx_tile' <<<"$features" || fail "qemu's Haswell should show no AVX-512 or AMX: '$features'"
echo "qemu: tb info cpu shows Haswell's features: $features"
start=$SECONDS
for t in "${kernel_tests[@]}"; do run_test qemu-haswell "$t" "${qemu[@]}"; done
run_models qemu-haswell "avx512|amx" "${qemu[@]}"
echo "qemu: done in $((SECONDS - start)) s"

echo "== kernel tests and models with TB_CPU_FEATURES=$mask =="
start=$SECONDS
for t in "${mask_tests[@]}"; do run_test mask "$t" TB_CPU_FEATURES="$mask"; done
run_models "mask $mask" "avx512|amx" env TB_CPU_FEATURES="$mask"
echo "mask: done in $((SECONDS - start)) s"

echo "== kernel tests and models with TB_CPU_FEATURES=$mask_sse (no AVX2, FMA, AVX-512 or AMX) =="
start=$SECONDS
for t in "${mask_tests[@]}"; do run_test mask-sse "$t" TB_CPU_FEATURES="$mask_sse"; done
run_models "mask $mask_sse" "avx2|fma|avx512|amx" env TB_CPU_FEATURES="$mask_sse"
echo "mask-sse: done in $((SECONDS - start)) s"
