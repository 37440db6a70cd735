#!/usr/bin/env bash
# Fuzz the file readers with libFuzzer: build tests/fuzz/fuzz_<target> with clang (ASan + UBSan), seed it
# and run it for N seconds per target.
#   onnx         seeds: the models and test_data_set .pb files of Debian's libonnx-testdata; findings in
#                tests/fuzz/regressions/, where a unit test loads each one from then on
#   safetensors  seeds: tests/fixtures/safetensors/*.safetensors; findings in tests/fuzz/regressions-safetensors/
#   npy          seeds: tests/fixtures/npy/*.npy; findings in tests/fuzz/regressions-npy/
# (the last two are replayed by CTest under TB_FUZZ=ON).
# Usage: scripts/fuzz.sh [SECONDS [TARGET ...]]   (default 600 onnx)
#        scripts/fuzz.sh 600 onnx safetensors npy
#        TB_FUZZ_BUILD=dir TB_FUZZ_JOBS=n scripts/fuzz.sh 60
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx)
for t in "${targets[@]}"; do
  case "$t" in onnx|safetensors|npy) ;; *) echo "unknown fuzz target '$t' (onnx, safetensors, npy)" >&2; exit 2 ;; esac
done
build="${TB_FUZZ_BUILD:-$root/build/fuzz}"
jobs="${TB_FUZZ_JOBS:-1}"
testdata=/usr/share/libonnx-testdata/data

bash "$root/scripts/setup.sh" clang libclang-rt-14-dev

fuzz_one() {
  local target="$1" corpus="$build/fuzz-corpus-$1" regressions
  case "$target" in
    onnx) regressions="$root/tests/fuzz/regressions"; corpus="$build/fuzz-corpus" ;;
    *) regressions="$root/tests/fuzz/regressions-$target" ;;
  esac
  echo "== build fuzz_$target (clang, -fsanitize=fuzzer,address,undefined) =="
  cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_FUZZ=ON >/dev/null
  cmake --build "$build" -j2 --target "fuzz_$target"
  mkdir -p "$corpus" "$regressions"
  case "$target" in
    onnx)
      if [ -d "$testdata" ]; then
        for suite in node pytorch-converted pytorch-operator simple; do
          for model in "$testdata/$suite"/*/model.onnx; do
            [ -f "$model" ] || continue
            name="$(basename "$(dirname "$model")")"
            cp -n "$model" "$corpus/$suite-$name.onnx"
            pb="$(dirname "$model")/test_data_set_0/input_0.pb"
            [ -f "$pb" ] && cp -n "$pb" "$corpus/$suite-$name-input_0.pb"
          done
        done
      else
        echo "note: $testdata is absent; fuzzing from an empty corpus" >&2
      fi ;;
    safetensors) cp -n "$root"/tests/fixtures/safetensors/*.safetensors "$corpus/" ;;
    npy) cp -n "$root"/tests/fixtures/npy/*.npy "$corpus/" ;;
  esac
  # Earlier findings seed the run too.
  find "$regressions" -type f ! -name README.md -exec cp -n {} "$corpus/" \;
  echo "== fuzz_$target for ${seconds}s ($(ls "$corpus" | wc -l) seeds); crashes go to $regressions =="
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
              -artifact_prefix="$regressions/" -print_final_stats=1)
  if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=1); fi
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$build/tests/fuzz/fuzz_$target" "${args[@]}" "$corpus"
}

for t in "${targets[@]}"; do fuzz_one "$t"; done
