#!/usr/bin/env bash
# Fuzz the ONNX reader with libFuzzer: build tests/fuzz/fuzz_onnx with clang (ASan + UBSan), seed it with
# the models and test_data_set .pb files of Debian's libonnx-testdata, and run it for N seconds.
# Inputs that crash it are kept in tests/fuzz/regressions/, where a unit test loads each one from then on.
# Usage: scripts/fuzz.sh [SECONDS]        (default 600)
#        TB_FUZZ_BUILD=dir TB_FUZZ_JOBS=n scripts/fuzz.sh 60
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-600}"
build="${TB_FUZZ_BUILD:-$root/build/fuzz}"
jobs="${TB_FUZZ_JOBS:-1}"
testdata=/usr/share/libonnx-testdata/data
regressions="$root/tests/fuzz/regressions"

bash "$root/scripts/setup.sh" clang libclang-rt-14-dev

echo "== build fuzz_onnx (clang, -fsanitize=fuzzer,address,undefined) =="
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTB_FUZZ=ON >/dev/null
cmake --build "$build" -j2 --target fuzz_onnx

corpus="$build/fuzz-corpus"
mkdir -p "$corpus" "$regressions"
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
fi
# Earlier findings seed the run too.
find "$regressions" -type f ! -name README.md -exec cp -n {} "$corpus/" \;

echo "== fuzz for ${seconds}s ($(ls "$corpus" | wc -l) seeds); crashes go to $regressions =="
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536
      -artifact_prefix="$regressions/" -print_final_stats=1)
if [ "$jobs" -gt 1 ]; then args+=(-fork="$jobs" -ignore_crashes=1); fi
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$build/tests/fuzz/fuzz_onnx" "${args[@]}" "$corpus"
