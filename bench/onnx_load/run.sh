#!/usr/bin/env bash
# Peak memory and time of loading an ONNX model with a large initializer: TensorBridge's own reader
# (weights used in place from the mapped file) against protobuf-c (Debian's libprotobuf-c, code generated
# from Debian's onnx.proto), in the same run. Usage: bench/onnx_load/run.sh [MiB]   (default 512)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mib="${1:-512}"
bash "$root/scripts/setup.sh" protobuf-c-compiler libprotobuf-c-dev libonnx-dev python3-onnx python3-numpy
work="$root/build/bench-onnx-load"
mkdir -p "$work"
cmake -S "$root" -B "$root/build/release" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build/release" -j"$(nproc)" --target tensorbridge >/dev/null
(cd "$work" && protoc-c --proto_path=/usr/include/onnx --c_out=. /usr/include/onnx/onnx.proto)
cc -O2 -I"$work" "$root/bench/onnx_load/load_protobuf_c.c" "$work/onnx.pb-c.c" -lprotobuf-c -o "$work/load_protobuf_c"
cc -O2 -I"$root/include" "$root/bench/onnx_load/load_tensorbridge.c" -L"$root/build/release" -ltensorbridge \
   -Wl,-rpath,"$root/build/release" -o "$work/load_tensorbridge"
/usr/bin/python3 "$root/bench/onnx_load/make_model.py" "$work/model.onnx" "$mib"
/usr/bin/python3 "$root/bench/onnx_load/make_model.py" "$work/model_external.onnx" "$mib" external
echo "one ${mib} MiB initializer; peak resident memory of loading it (file pages the reader touched count too)"
printf '%-14s %-28s %14s %10s\n' reader model "peak RSS (MiB)" "time (s)"
for m in model model_external; do
  for r in tensorbridge protobuf_c; do
    [ "$r" = protobuf_c ] && [ "$m" = model_external ] && continue   # protobuf-c does not read external data
    out=$( { /usr/bin/time -f "%M %e" "$work/load_$r" "$work/$m.onnx" >/dev/null; } 2>&1 | tail -1)
    printf '%-14s %-28s %14d %10s\n' "$r" "$m.onnx" "$(( ${out% *} / 1024 ))" "${out#* }"
  done
done
