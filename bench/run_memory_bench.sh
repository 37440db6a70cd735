#!/bin/sh
# Build the benchmarks (Release, -DTB_BUILD_BENCH=ON) in build/bench and run the memory ones: copy
# bandwidth and allocator throughput, on every available backend or on the backends given.
#   bench/run_memory_bench.sh                 # every available backend
#   bench/run_memory_bench.sh cpu opencl      # these backends (or devices: vulkan:0)
#   BENCH_JSON=1 bench/run_memory_bench.sh    # two JSON documents (bandwidth, alloc) instead of tables
#   TB_BENCH_BUILD_DIR=/tmp/b bench/run_memory_bench.sh   # another build directory
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${TB_BENCH_BUILD_DIR:-$root/build/bench}
jobs=${TB_BENCH_JOBS:-2}
json=""
if [ "${BENCH_JSON:-0}" = 1 ]; then json=--json; fi
# Headings go to stderr with --json, so that stdout is the programs' JSON only.
note() { if [ -n "$json" ]; then echo "$@" >&2; else echo "$@"; fi; }

mkdir -p "$build"
log=$build/run_memory_bench.log
if ! { cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTB_BUILD_BENCH=ON -DTB_BUILD_TESTS=OFF &&
       cmake --build "$build" -j "$jobs" --target tb_bench_bandwidth tb_bench_alloc; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "run_memory_bench.sh: the build failed (log above, also in $log)" >&2
  exit 1
fi

note "# machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
note "# bandwidth: host->device / device->host vs memcpy (GB/s = 1e9 B/s)"
rc=0
"$build/bench/bandwidth" $json "$@" || rc=1
note "# allocator: tb_tensor_create/destroy vs the plain allocation call (ns per alloc/free pair)"
"$build/bench/alloc_bench" $json "$@" || rc=1
exit $rc
