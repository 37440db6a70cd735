#!/usr/bin/env bash
# The test command: install what is missing, build with warnings as errors, run the suite, then build and
# run it again under AddressSanitizer + UndefinedBehaviorSanitizer, with the memory tests under valgrind too.
# Usage: scripts/test.sh [--no-sanitize] [--long]   (--no-sanitize also skips the valgrind pass and the
# 60-second fuzzing; --long adds the 10-minute soak test, scripts/soak.sh, and fuzzes each file reader for
# 10 minutes instead, scripts/fuzz.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

sanitize=1
valgrind_pass=1
long=0
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) sanitize=0; valgrind_pass=0 ;;
    --long) long=1 ;;
    *) echo "scripts/test.sh: unknown option '$arg' (use --no-sanitize or --long)" >&2; exit 2 ;;
  esac
done

bash scripts/setup.sh

jobs="$(nproc)"
export TB_VULKAN_VALIDATION=1   # every Vulkan instance made in the tests runs under the validation layer

echo "== build (-Wall -Wextra -Werror) =="
cmake -S . -B build/ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_WERROR=ON >/dev/null
cmake --build build/ci -j"$jobs"
echo "== tests =="
ctest --test-dir build/ci --output-on-failure -j"$jobs"
bash scripts/test_python.sh             # the Python package: build, pytest, doctests (docs/python.md)

# No instruction the CPU lacks: the kernel tests and the demo models under qemu's Haswell (no AVX-512), and
# with TB_CPU_FEATURES=-avx512f,-amx (docs/testing.md).
bash scripts/test_isa.sh build/ci

if ((valgrind_pass)); then
  echo "== memory and tensor tests under valgrind =="
  # The tests that own device memory, tensors, DLPack storage and models, once more under memcheck: any error or
  # definitely-lost block fails. (Drivers' thread-local blocks show as "possibly lost" and do not count.)
  # test_device_memory:cuda is the device-memory suite with its argument (ctest's test_cuda_memory).
  # The thread-pool tests (pools of up to 64 threads) take about 4 and 6 s under valgrind here. valgrind runs one
  # thread at a time; --fair-sched=yes hands the CPU round-robin, so a thread spinning for its partner (the pool's
  # tests) cannot starve the partner, which the default lock allowed on the CI machine (work_runs_on_two_threads).
  for t in test_tensor test_tensor_views test_dlpack test_backend_memory test_allocator test_allocator_oom \
           test_allocator_cpu test_tensor_backends test_opencl_memory test_device_memory:cuda test_device_memory:hip \
           test_device_memory:level_zero test_exec test_prepare test_plan test_models test_npy test_onnx_reader \
           test_events test_events_fake test_discover_reload test_cuda_module test_cuda_exec test_cuda_gemm test_cuda_lowp test_cuda_conv_lowp test_cuda_cast_fuse test_cuda_conv_fp8 test_cuda_resize test_cuda_range test_cuda_blas_workspace test_exec_interop \
           test_threadpool test_threadpool_partition; do
    read -r -a cmd <<< "build/ci/tests/${t/:/ }"
    if ! valgrind -q --fair-sched=yes --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
         --suppressions=tests/valgrind.supp "${cmd[@]}" > "build/ci/valgrind-${t/:/-}.log" 2>&1; then
      cat "build/ci/valgrind-${t/:/-}.log"
      echo "valgrind: $t failed (log above)" >&2
      exit 1
    fi
    echo "valgrind: $t clean"
  done
fi

if ((sanitize)); then
  echo "== build (AddressSanitizer + UndefinedBehaviorSanitizer) =="
  cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DTB_WERROR=ON -DTB_SANITIZE=ON >/dev/null
  cmake --build build/asan -j"$jobs"
  echo "== tests under sanitizers =="
  # Vendor drivers loaded with dlopen (PoCL, Mesa) keep allocations of their own until exit: those leaks
  # are theirs and are suppressed by library name; ours are not.
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1" \
  LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir build/asan --output-on-failure -j"$jobs" -E 'install_consumer|conformance_.*_(opencl|vulkan)|conformance_node_cuda_emulated'
fi

if ((sanitize && !long)); then
  echo "== the onnx, safetensors and npy readers under libFuzzer (clang, ASan + UBSan) for 60 s each =="
  bash scripts/fuzz.sh 60 onnx safetensors npy
fi

if ((long)); then
  echo "== long suite: the soak test for 10 minutes (scripts/soak.sh, docs/testing.md) =="
  bash scripts/soak.sh 600 build/ci
  echo "== long suite: the onnx, safetensors and npy readers under libFuzzer for 10 minutes each =="
  bash scripts/fuzz.sh 600 onnx safetensors npy
fi
