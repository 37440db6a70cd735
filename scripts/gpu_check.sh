#!/usr/bin/env bash
# The CUDA backend checked on a machine with an NVIDIA GPU, in one run (docs/cuda.md, "Checking on a GPU"):
#   1. the machine: nvidia-smi, `tb devices`, `tb doctor`;
#   2. the kernel module's first compile against a cache hit (`tb run` twice on a fresh TB_CACHE_DIR);
#   3. each bundled model (models/*.onnx) with `tb run --backend cuda:0` at O0 and O2 against ONNX
#      Runtime's outputs (--compare-dir), with --profile (where each node ran, time per kernel), then
#      `tb validate --backends cuda:0 --levels O0,O2 --localize` against the CPU O0 reference;
#   4. a ResNet-18-shaped model on cuda:0: where its nodes ran, `tb bench` against the CPU, and PyTorch's
#      resnet18 on the same GPU where torch is installed;
#   5. the ONNX node conformance suite on cuda:0 at O0 and O2 (tb_conformance --check: a test that is not an
#      expected failure on the CPU must pass on cuda:0 too, within the same tolerances; nodes without a CUDA
#      kernel run on the CPU), where libonnx-testdata's data is installed;
#   6. graph replay: the small RNN model (bench/models' quick LSTM, 0.1-0.3 ms on a CPU), and the real set's
#      streaming GRU / LSTM where built, checked with `tb validate` on cuda:0 (the LSTM / GRU kernels' values on
#      the GPU) and timed under `tb bench` on cuda:0 with graph replay and with TB_GRAPH_CAPTURE=off, against the
#      target of issue 15 (<= 50 us per inference with replay); the device time from CUDA events beside the wall time;
#   7. host-to-device bandwidth (bench/bandwidth cuda:0 at 64 MiB and up) without and with pinned staging in the
#      same run, against the target of issue 15 (>= 2x the 8.6 GB/s measured before staging);
#   8. the GEMM rate: chains of square fp32 MatMuls on cuda:0 at O2 through cuBLASLt and through the own
#      tiled kernel (TB_CUDA_GEMM=own), against PyTorch's torch.matmul where it is installed
#      (scripts/gpu_gemm_rate.py; needs numpy and onnx, else SKIP; GPU_CHECK_GEMM_SIZES, default
#      "512 1024 2048 4096");
#   9. reduced precision (docs/cuda.md "Reduced precision"): the bundled models and the benchmark set's models
#      (GPU_CHECK_BENCH_MODELS, default build/bench-models/full/{mlp,bert,resnet18}.onnx where present) under
#      `tb validate --backends cuda:0` at O3 (bf16 products and convolutions), with --precision tf32 at O2, fp16
#      at O3, and fp8 at O2 on compute capability 8.9 and newer (SKIP below), against the tolerance rows of cuda
#      tf32 / bf16 / fp16 / fp8 (assumed until this step measures them); then the GEMM rate in bf16 (O3) against
#      torch.matmul on bf16 tensors (gpu_gemm_rate.py --precision bf16); the fp8 convolutions through cuDNN
#      (cnn_small under --precision fp8 at 8.9 and newer: its FusedConv nodes in fp8 e4m3, cuDNN's engine found);
#      and the conversions fused into their producers (encoder_small at O3 with TB_CUDA_FUSE_CASTS on and off: the
#      outputs' sha256 equal);
#  10. CumSum's block scan (docs/cuda.md "CumSum's block scan"): an int32 [4, 2^20] and a float16 [64, 4096]
#      CumSum along the last axis under `tb bench` on cpu and cuda:0 (needs numpy and onnx, else skipped);
#  11. TopK's radix select (docs/cuda.md "TopK's radix select"): a float32 [1, 200000] TopK with k = 100000 and a
#      [64, 8192] one with k = 1024, checked with `tb validate` on cuda:0 (indices bit for bit: the order is total)
#      and timed under `tb bench` on cpu and cuda:0 (needs numpy and onnx, else skipped);
# and prints a summary, one line per step: PASS, FAIL (with the log to read) or SKIP (with the reason).
#
# Usage: bash scripts/gpu_check.sh [BUILD_DIR]
#   BUILD_DIR  a build of this tree (default build/gpu), made here or carried from another machine (tb,
#              libtensorbridge.so*, and tests/conformance/tb_conformance for step 5); when it has no `tb`
#              it is configured and built here (Release; tb_conformance too when cmocka is installed).
# Environment: GPU_CHECK_TIMEOUT seconds per step (default 300); GPU_CHECK_LEVELS (default "O0 O2");
#   GPU_CHECK_RNN an ONNX file for step 6 (default: made with bench/models/make_models.py --quick where Python
#   has onnx and numpy); GPU_CHECK_REAL the folder of the real model set for step 6's streaming models
#   (default build/real-models/full);
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

# ---- a ResNet-18-shaped model on cuda:0 (convolutions through cuDNN or the own kernels), and PyTorch's ----
# The benchmark set's resnet18 (bench/models/make_models.py: 1x3x224x224, BatchNormalization, residual Adds):
# RESNET18 names one, else build/bench-models/full/resnet18.onnx, else it is written here when python3 has
# onnx and numpy. `tb run --profile` says where each node ran (no Conv / pool / BatchNormalization on the
# CPU expected) and `tb bench` times it at each level; then torchvision's resnet18 in PyTorch on the same GPU
# (fp32, TF32 off, the same input shape), where torch with CUDA is installed.
resnet="${RESNET18:-build/bench-models/full/resnet18.onnx}"
if [ ! -f "$resnet" ] && python3 -c 'import onnx, numpy' >/dev/null 2>&1; then
  mkdir -p "$out/models"
  python3 bench/models/make_models.py "$out/models" >"$out/make_models.log" 2>&1 && resnet="$out/models/resnet18.onnx"
fi
if [ ! -f "$resnet" ]; then
  note SKIP "resnet18 on cuda:0" "no $resnet and no python3 with onnx to write it (bench/models/run.sh makes it)"
else
  step "resnet18 run cuda:0 O2 --profile" resnet18_run.log "$tb" run "$resnet" --backend cuda:0 --level O2 --profile --repeat 5
  grep -m3 -iE "ran on|device nodes|fallback" "$out/resnet18_run.log" | sed "s/^/    /" | tee -a "$summary"
  if grep -qE "no cuda kernel for (Conv|MaxPool|BatchNormalization|GlobalAveragePool)" "$out/resnet18_run.log"; then
    note FAIL "resnet18 CNN ops on cuda:0" "a Conv, pool or BatchNormalization ran on the CPU; see $out/resnet18_run.log"
  fi
  step "resnet18 bench cpu,cuda:0 (${levels// /,})" resnet18_bench.log "$tb" bench "$resnet" --backends cpu,cuda:0 \
    --levels "${levels// /,}" --threads 1 --warmup 3 --iters 20
  grep -E "^(cpu|cuda)" "$out/resnet18_bench.log" | sed "s/^/    /" | tee -a "$summary"
fi
if python3 -c 'import torch, torchvision, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  step "resnet18 PyTorch cuda fp32" resnet18_torch.log python3 - <<'PY'
import statistics, time, torch, torchvision
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
m = torchvision.models.resnet18().eval().cuda()
x = torch.randn(1, 3, 224, 224, device="cuda")
times = []
with torch.no_grad():
    for i in range(25):
        torch.cuda.synchronize(); t0 = time.perf_counter(); m(x); torch.cuda.synchronize()
        if i >= 5: times.append((time.perf_counter() - t0) * 1000)
print(f"torch {torch.__version__} resnet18 1x3x224x224 fp32 median {statistics.median(times):.3f} ms over {len(times)} runs")
PY
  grep -m1 "median" "$out/resnet18_torch.log" | sed "s/^/    /" | tee -a "$summary"
else
  note SKIP "resnet18 PyTorch" "no torch + torchvision with CUDA in python3"
fi

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

# ---- graph replay: the small RNN's latency -------------------------------------------------------------
# LSTM, GRU and RNN run on cuda:0 (kernels/50_rnn.cu), so every node of the small RNN is on the device and its
# run is one CUDA graph: its values first (tb validate against the CPU), then its latency with replay on and off.
# The real set's streaming GRU / LSTM (GPU_CHECK_REAL, default build/real-models/full) go the same way when there.
rnn="${GPU_CHECK_RNN:-}"
if [ -z "$rnn" ] && python3 -c "import onnx, numpy" >/dev/null 2>&1; then
  python3 bench/models/make_models.py "$out/models" --quick >"$out/make_models.log" 2>&1 && rnn="$out/models/lstm.onnx"
fi
rnn_models=()
[ -n "$rnn" ] && [ -f "$rnn" ] && rnn_models+=("$rnn")
real="${GPU_CHECK_REAL:-build/real-models/full}"
for name in streaming_gru streaming_lstm; do
  [ -f "$real/$name.onnx" ] && rnn_models+=("$real/$name.onnx")
done
if [ ${#rnn_models[@]} -eq 0 ]; then
  note SKIP "small RNN latency (graph replay)" "no model: set GPU_CHECK_RNN or install onnx and numpy for python3"
fi
for model in "${rnn_models[@]}"; do
  name="$(basename "$model" .onnx)"
  step "rnn $name validate cuda:0 (O0,O2)" "rnn_validate_$name.log" "$tb" validate "$model" --backends cuda:0 --levels O0,O2 --localize
  grep -m2 -E "passed [0-9]+/[0-9]+" "$out/rnn_validate_$name.log" | sed "s/^/    /" | tee -a "$summary"
  for mode in on off; do
    TB_GRAPH_CAPTURE="$mode" step "rnn $name cuda:0, graph capture $mode" "rnn_${name}_$mode.json" "$tb" bench "$model" \
      --backends cuda:0,cpu --levels O2 --warmup 50 --iters 2000 --json
    python3 - "$out/rnn_${name}_$mode.json" "$mode" <<'PY' 2>&1 | tee -a "$summary"
import json, sys
try:
    rows = json.load(open(sys.argv[1]))["results"]
except (OSError, ValueError, KeyError) as e:
    print(f"    no results in {sys.argv[1]} ({type(e).__name__}): see the step's line above")
    rows = []
for r in rows:
    if not r.get("ok"):
        print(f"    {r['device']}: failed: {r.get('error', '?')[:200]}")
        continue
    dev = f", device {r['device_median_ms'] * 1000:.1f} us" if "device_median_ms" in r else ""
    why = "" if r.get("graph_capture") else f" (graph replay off: {r.get('graph_capture_why', '')[:160]})"
    print(f"    {r['device']} median {r['median_ms'] * 1000:.1f} us{dev}{why}")
    if r["device"] == "cuda:0" and sys.argv[2] == "on":
        if not r.get("graph_capture"):
            print("    graph replay was expected (the recurrent nodes have CUDA kernels): it is off, see why above")
        verdict = "meets" if r["median_ms"] <= 0.050 else "MISSES"
        print(f"    target <= 50 us per inference with replay: {verdict} it")
PY
  done
done

# ---- host-to-device bandwidth without and with pinned staging -------------------------------------------
bw="$build/bench/bandwidth"
if [ ! -x "$bw" ]; then
  note SKIP "bandwidth cuda:0 (staging off/on)" "no $bw (a build with bench/ makes it)"
else
  step "bandwidth cuda:0 (staging off/on)" bandwidth.json "$bw" cuda:0 --min 64M --max 256M --runs 10 --json
  python3 - "$out/bandwidth.json" <<'PY' 2>&1 | tee -a "$summary"
import json, sys
rates = {}
try:
    backends = json.load(open(sys.argv[1]))["backends"]
except (OSError, ValueError, KeyError) as e:
    print(f"    no results in {sys.argv[1]} ({type(e).__name__}): see the step's line above")
    backends = []
for b in backends:
    for r in b.get("results", []):
        rates.setdefault(r["bytes"], {})[b.get("staging", "-")] = r["host_to_device"]["median_gbps"]
for size, by in sorted(rates.items()):
    off, on = by.get("off", 0.0), by.get("on", 0.0)
    verdict = "meets" if on >= 2 * 8.6 else "MISSES"
    print(f"    H2D {size >> 20} MiB: {off:.1f} GB/s direct, {on:.1f} GB/s staged ({on / off if off else 0:.2f}x); "
          f"target >= 17.2 GB/s: {verdict} it")
PY
fi

# ---- the GEMM rate: cuBLASLt, the own kernel, PyTorch ---------------------------------------------------
python="${GPU_CHECK_PYTHON:-python3}"
if ! "$python" -c "import numpy, onnx" >/dev/null 2>&1; then
  note SKIP "gemm rate" "$python lacks numpy or onnx (pip install numpy onnx, or set GPU_CHECK_PYTHON)"
else
  # shellcheck disable=SC2086
  step "gemm rate cuda:0 O2" gemm_rate.log "$python" scripts/gpu_gemm_rate.py "$tb" ${GPU_CHECK_GEMM_SIZES:-512 1024 2048 4096}
  grep -E "^N=" "$out/gemm_rate.log" | sed "s/^/    /" | tee -a "$summary"
fi

# ---- reduced precision: bf16 at O3, tf32, fp8 under tb validate; the bf16 GEMM rate against PyTorch's ---------
cc="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')"
bench_models="${GPU_CHECK_BENCH_MODELS:-build/bench-models/full/mlp.onnx build/bench-models/full/bert.onnx build/bench-models/full/resnet18.onnx}"
for onnx in models/*.onnx $bench_models; do
  [ -e "$onnx" ] || { note SKIP "reduced precision $(basename "$onnx")" "no $onnx (bench/run.sh makes the benchmark set)"; continue; }
  name="$(basename "$onnx" .onnx)"
  step "$name validate cuda:0 O3 (bf16)" "validate_${name}_bf16.log" "$tb" validate "$onnx" --backends cuda:0 --levels O3 --localize
  grep -m2 -E "passed [0-9]+/[0-9]+|max_abs" "$out/validate_${name}_bf16.log" | sed "s/^/    /" | tee -a "$summary"
  step "$name validate cuda:0 O2 tf32" "validate_${name}_tf32.log" "$tb" validate "$onnx" --backends cuda:0 --levels O2 \
    --precision tf32 --localize
  grep -m2 -E "passed [0-9]+/[0-9]+|max_abs" "$out/validate_${name}_tf32.log" | sed "s/^/    /" | tee -a "$summary"
  # fp16 products and convolutions (cuDNN with half X and W, or the own _f16 kernels)
  step "$name validate cuda:0 O3 fp16" "validate_${name}_fp16.log" "$tb" validate "$onnx" --backends cuda:0 --levels O3 \
    --precision fp16 --localize
  grep -m2 -E "passed [0-9]+/[0-9]+|max_abs" "$out/validate_${name}_fp16.log" | sed "s/^/    /" | tee -a "$summary"
  if [ -n "$cc" ] && [ "$cc" -ge 89 ]; then
    step "$name validate cuda:0 O2 fp8" "validate_${name}_fp8.log" "$tb" validate "$onnx" --backends cuda:0 --levels O2 \
      --precision fp8 --localize
    grep -m2 -E "passed [0-9]+/[0-9]+|max_abs" "$out/validate_${name}_fp8.log" | sed "s/^/    /" | tee -a "$summary"
  else
    note SKIP "$name validate cuda:0 fp8" "compute capability '${cc:-unknown}' below 8.9: fp8 runs as bf16 there (the O3 step)"
  fi
done
# fp8 convolutions through cuDNN (compute capability 8.9 and newer): cnn_small's FusedConv nodes must say fp8 e4m3 and
# cuDNN must have run them so (no "runs in bf16" at info level); tb validate above checked the numbers.
if [ -n "$cc" ] && [ "$cc" -ge 89 ] && [ -e models/cnn_small.onnx ]; then
  if step "fp8 convolutions cuda:0 (cnn_small)" fp8_conv.log env TB_LOG=info "$tb" run models/cnn_small.onnx --backend cuda:0 \
      --level O2 --precision fp8 --input input=models/cnn_small/inputs/input.npy --profile; then
    convs="$(grep -c 'FusedConv .*: fp8 e4m3: the precision asked for' "$out/fp8_conv.log")"
    if [ "$convs" -ge 1 ] && ! grep -q 'no engine for this fp8 convolution' "$out/fp8_conv.log"; then
      note PASS "fp8 convolutions through cuDNN" "$convs FusedConv nodes in fp8 e4m3"
    else
      note FAIL "fp8 convolutions through cuDNN" "$convs in fp8, or cuDNN had no engine (bf16 ran): see $out/fp8_conv.log"
    fi
  fi
else
  note SKIP "fp8 convolutions cuda:0" "compute capability '${cc:-unknown}' below 8.9 (or no models/cnn_small.onnx)"
fi
# the conversions fused into their producers: encoder_small at O3 with and without (TB_CUDA_FUSE_CASTS), the same bits
if [ -e models/encoder_small.onnx ]; then
  for fuse in on off; do
    step "encoder_small O3 TB_CUDA_FUSE_CASTS=$fuse" "fuse_casts_$fuse.log" env TB_CUDA_FUSE_CASTS=$fuse "$tb" run \
      models/encoder_small.onnx --backend cuda:0 --level O3 --seed 0
  done
  sums_on="$(grep 'sha256: ' "$out/fuse_casts_on.log")"
  if [ -n "$sums_on" ] && [ "$sums_on" = "$(grep 'sha256: ' "$out/fuse_casts_off.log")" ]; then
    note PASS "fused conversions: the same bits" "encoder_small O3, outputs' sha256 equal with and without"
  else
    note FAIL "fused conversions: the same bits" "the outputs differ: compare $out/fuse_casts_on.log and fuse_casts_off.log"
  fi
fi
if "$python" -c "import numpy, onnx" >/dev/null 2>&1; then
  # shellcheck disable=SC2086
  step "gemm rate cuda:0 O3 bf16" gemm_rate_bf16.log "$python" scripts/gpu_gemm_rate.py "$tb" --precision bf16 \
    ${GPU_CHECK_GEMM_SIZES:-512 1024 2048 4096}
  grep -E "^N=" "$out/gemm_rate_bf16.log" | sed "s/^/    /" | tee -a "$summary"
fi

# ---- CumSum's block scan: one long int32 row per block, float16 rows; cpu against cuda:0 ----------------------
if "$python" -c "import numpy, onnx" >/dev/null 2>&1; then
  mkdir -p "$out/models"
  if "$python" - "$out/models" >"$out/make_cumsum.log" 2>&1 <<'PY'
import sys, onnx
from onnx import helper, TensorProto
for name, dtype, shape in (("cumsum_i32", TensorProto.INT32, [4, 1 << 20]), ("cumsum_f16", TensorProto.FLOAT16, [64, 4096])):
    axis = helper.make_tensor("axis", TensorProto.INT64, [], [-1])
    node = helper.make_node("CumSum", ["x", "axis"], ["y"])
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", dtype, shape)],
                          [helper.make_tensor_value_info("y", dtype, shape)], [axis])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], ir_version=8), f"{sys.argv[1]}/{name}.onnx")
PY
  then
    for name in cumsum_i32 cumsum_f16; do
      step "$name bench cpu,cuda:0 O2" "${name}_bench.log" "$tb" bench "$out/models/$name.onnx" --backends cpu,cuda:0 \
        --levels O2 --threads 1 --warmup 3 --iters 20
      grep -E "^(cpu|cuda)" "$out/${name}_bench.log" | sed "s/^/    /" | tee -a "$summary"
    done
  else
    note FAIL "cumsum models" "see $out/make_cumsum.log"
  fi
else
  note SKIP "cumsum bench" "no numpy and onnx in $python"
fi

# ---- TopK's radix select: rows past the shared-memory sort, a large k; cpu against cuda:0 ----------------------
if "$python" -c "import numpy, onnx" >/dev/null 2>&1; then
  mkdir -p "$out/models"
  if "$python" - "$out/models" >"$out/make_topk.log" 2>&1 <<'PY'
import sys, onnx
from onnx import helper, TensorProto
for name, shape, k in (("topk_200000", [1, 200000], 100000), ("topk_64x8192", [64, 8192], 1024)):
    kt = helper.make_tensor("k", TensorProto.INT64, [1], [k])
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1)
    out = [shape[0], k]
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("v", TensorProto.FLOAT, out),
                           helper.make_tensor_value_info("i", TensorProto.INT64, out)], [kt])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), f"{sys.argv[1]}/{name}.onnx")
PY
  then
    for name in topk_200000 topk_64x8192; do
      step "$name validate cuda:0 O2" "${name}_validate.log" "$tb" validate "$out/models/$name.onnx" --backends cuda:0 --levels O2
      step "$name bench cpu,cuda:0 O2" "${name}_bench.log" "$tb" bench "$out/models/$name.onnx" --backends cpu,cuda:0 \
        --levels O2 --threads 1 --warmup 3 --iters 20
      grep -E "^(cpu|cuda)" "$out/${name}_bench.log" | sed "s/^/    /" | tee -a "$summary"
    done
  else
    note FAIL "topk models" "see $out/make_topk.log"
  fi
else
  note SKIP "topk bench" "no numpy and onnx in $python"
fi

echo "summary: $summary" | tee -a "$summary"
exit $failed
