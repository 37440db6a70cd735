#!/usr/bin/env bash
# The CUDA backend checked on a machine with an NVIDIA GPU, in one run (docs/cuda.md, "Checking on a GPU"):
#   1. the machine: nvidia-smi, `tb devices`, `tb doctor`;
#   2. the kernel module's first compile against a cache hit (`tb run` twice on a fresh TB_CACHE_DIR);
#   3. each bundled model (models/*.onnx) with `tb run --backend cuda:0` at O0 and O2 against ONNX
#      Runtime's outputs (--compare-dir), with --profile (where each node ran, time per kernel), then
#      `tb validate --backends cuda:0 --levels O0,O2 --localize` against the CPU O0 reference;
#   4. the ONNX node conformance suite on cuda:0 at O0 and O2 (tb_conformance --check: a test that is not an
#      expected failure on the CPU must pass on cuda:0 too, within the same tolerances; nodes without a CUDA
#      kernel run on the CPU), where libonnx-testdata's data is installed;
# and prints a summary, one line per step: PASS, FAIL (with the log to read) or SKIP (with the reason).
#
# Usage: bash scripts/gpu_check.sh [BUILD_DIR]
#   BUILD_DIR  a build of this tree (default build/gpu), made here or carried from another machine (tb,
#              libtensorbridge.so*, and tests/conformance/tb_conformance for step 4); when it has no `tb`
#              it is configured and built here (Release; tb_conformance too when cmocka is installed).
# Environment: GPU_CHECK_TIMEOUT seconds per step (default 300); GPU_CHECK_LEVELS (default "O0 O2");
#   OUT (or GPU_CHECK_OUT) the folder for the logs and summary.txt (default BUILD_DIR/gpu_check);
#   CONFORMANCE_DATA the conformance data folder with node/ (default /usr/share/libonnx-testdata/data;
#   a machine without it can be given a copy: node/ is 27 MB).
# Time: about 2 minutes on 16 cores when the build is carried (the conformance dominates).
# Exit: 0 when no step failed, 1 otherwise. Steps that cannot run (no GPU, no data) are SKIP, not FAIL.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build="${1:-build/gpu}"
limit="${GPU_CHECK_TIMEOUT:-300}"
levels="${GPU_CHECK_LEVELS:-O0 O2}"
out="${OUT:-${GPU_CHECK_OUT:-$build/gpu_check}}"
data="${CONFORMANCE_DATA:-/usr/share/libonnx-testdata/data}"
mkdir -p "$out"
summary="$out/summary.txt"
: >"$summary"
failed=0

note() { printf '%-5s %-44s %s\n' "$1" "$2" "$3" | tee -a "$summary"; [ "$1" = FAIL ] && failed=1; return 0; }
# step NAME LOG CMD...: run CMD under the step timeout into LOG; PASS or FAIL (124: timed out).
step() {
  local name="$1" log="$out/$2"; shift 2
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then note PASS "$name" "$((SECONDS - t0)) s"
  elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then note FAIL "$name" "timed out after ${limit} s; see $log"
  else note FAIL "$name" "exit $rc; see $log: $(grep -iE 'error|fail|mismatch' "$log" | grep -v -m1 '^OPERATOR' | cut -c1-120)"
  fi
  return $rc
}

echo "gpu_check: $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), tree $(git rev-parse --short HEAD 2>/dev/null || echo '?')" | tee -a "$summary"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
else
  note SKIP "nvidia-smi" "not installed: the CUDA steps below say what they find"
fi

# ---- build -------------------------------------------------------------------------------------------
tb="$build/tb"
if [ ! -x "$tb" ]; then
  if timeout "$limit" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1; then
    step "build tb, tb_conformance" build.log cmake --build "$build" -j"$(nproc)" --target tb tb_conformance
  elif timeout "$limit" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTB_BUILD_TESTS=OFF >"$out/configure.log" 2>&1; then
    step "build tb (no cmocka: no tb_conformance)" build.log cmake --build "$build" -j"$(nproc)" --target tb
  fi
fi
export LD_LIBRARY_PATH="$root/$build:$build:${LD_LIBRARY_PATH:-}" # a carried build finds its libtensorbridge
if [ ! -x "$tb" ]; then
  note FAIL "build" "no $tb; see $out/configure.log and $out/build.log"
  exit 1
fi

# ---- the machine -------------------------------------------------------------------------------------
step "tb devices" devices.log "$tb" devices
step "tb doctor" doctor.log "$tb" doctor
if ! grep -q "cuda:0" "$out/devices.log"; then
  note SKIP "every cuda:0 step" "tb devices lists no cuda:0 (see $out/devices.log)"
  exit $failed
fi

# ---- the module: first compile, then a cache hit -----------------------------------------------------
cache="$(mktemp -d)"
model=models/cnn_small.onnx
for pass in compile hit; do
  t0=$(date +%s%N)
  TB_CACHE_DIR="$cache" step "module $pass (tb run $model)" "module_$pass.log" "$tb" run "$model" --backend cuda:0 --level O0
  echo "    module $pass: $(( ($(date +%s%N) - t0) / 1000000 )) ms for the whole tb run" | tee -a "$summary"
done
rm -rf "$cache"

# ---- the bundled models against ONNX Runtime, then tb validate ----------------------------------------
for onnx in models/*.onnx; do
  name="$(basename "$onnx" .onnx)"
  inputs=()
  for npy in "models/$name/inputs/"*.npy; do
    [ -e "$npy" ] && inputs+=(--input "$(basename "$npy" .npy)=$npy")
  done
  for level in $levels; do
    step "$name run cuda:0 $level vs ORT" "run_${name}_$level.log" "$tb" run "$onnx" --backend cuda:0 --level "$level" \
      "${inputs[@]}" --compare-dir "models/$name/outputs" --profile --repeat 5
    grep -m3 -iE "ran on|device nodes|fallback|median" "$out/run_${name}_$level.log" | sed "s/^/    /" | tee -a "$summary"
    echo "    $(grep -c '^  fallback:' "$out/run_${name}_$level.log") nodes ran on the CPU:" \
      "$(grep '^  fallback:' "$out/run_${name}_$level.log" | awk '{print $2}' | sort | uniq -c | tr -s ' ' | tr '\n' ',')" |
      tee -a "$summary"
  done
  step "$name validate cuda:0 (${levels// /,})" "validate_$name.log" "$tb" validate "$onnx" --backends cuda:0 \
    --levels "${levels// /,}" --localize
  grep -m2 -E "passed [0-9]+/[0-9]+" "$out/validate_$name.log" | sed "s/^/    /" | tee -a "$summary"
done

# ---- CUDA coverage: the operators with a CUDA kernel (tb ops' last line) -------------------------------
step "tb ops (CUDA coverage)" ops.log "$tb" ops
tail -n1 "$out/ops.log" | sed "s/^/    /" | tee -a "$summary"

# ---- the node conformance suite ----------------------------------------------------------------------
conf="$build/tests/conformance/tb_conformance"
if [ ! -x "$conf" ]; then
  note SKIP "conformance" "no tb_conformance in $build (a build with the tests makes it)"
elif [ ! -d "$data/node" ]; then
  note SKIP "conformance" "no ONNX test data in $data (apt install libonnx-testdata, or set CONFORMANCE_DATA)"
else
  for level in $levels; do
    step "conformance node $level cuda:0" "conformance_$level.log" "$conf" --data "$data" --suite node --level "$level" \
      --backend cuda:0 --expected tests/conformance/expected_failures.txt --check --jobs "$(nproc)" --timeout 60
    grep -m1 "node tests at" "$out/conformance_$level.log" | sed "s/^/    /" | tee -a "$summary"
  done
fi

echo "summary: $summary" | tee -a "$summary"
exit $failed
