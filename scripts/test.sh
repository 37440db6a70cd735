#!/usr/bin/env bash
# The test command: install what is missing, build with warnings as errors, run the suite, then build and
# run it again under AddressSanitizer + UndefinedBehaviorSanitizer.
# Usage: scripts/test.sh [--no-sanitize] [--long]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

sanitize=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitize) sanitize=0 ;;
    --long) export TB_LONG_TESTS=1 ;;
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
    ctest --test-dir build/asan --output-on-failure -j"$jobs" -E install_consumer
fi
