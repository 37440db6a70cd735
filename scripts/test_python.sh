#!/usr/bin/env bash
# The Python package's tests (docs/python.md §8): make build/venv when missing, install the test tooling from
# PyPI, build and install the package with -Werror (incrementally, in build/python/), check its type hints
# with mypy --strict, run python/tests (the doctests of docs/python.md included), run them again with PyTorch
# (Debian's CPU-only python3-torch, in build/venv-torch) for the torch round trips, and print the overhead
# report of bench/python/run_overhead.py.
# Usage: scripts/test_python.sh [--wheel] [--sanitize]
#   --wheel     also build a wheel with `python -m build` and install it into a fresh venv without a compiler
#   --sanitize  also build the extension with ASan + UBSan (build/python-asan) and run the tests under them
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

wheel=0
sanitize=0
for arg in "$@"; do
  case "$arg" in
    --wheel) wheel=1 ;;
    --sanitize) sanitize=1 ;;
    *) echo "scripts/test_python.sh: unknown option '$arg' (use --wheel or --sanitize)" >&2; exit 2 ;;
  esac
done

venv=build/venv
if [ ! -x "$venv/bin/python" ]; then
  echo "== python: creating $venv =="
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check scikit-build-core pytest numpy onnxruntime build mypy

echo "== python: build and install the package (-Werror) =="
"$py" -m pip install -q --disable-pip-version-check --no-build-isolation --force-reinstall --no-deps \
  --config-settings=cmake.define.TB_WERROR=ON .

echo "== python: type check (mypy --strict) =="
"$py" -m mypy --strict --cache-dir build/mypy-cache python/tensorbridge

echo "== python: tests =="
(cd build && "../$py" -m pytest -q -p no:cacheprovider "$root/python/tests")

echo "== python: tests again with PyTorch (Debian's CPU-only python3-torch) =="
# PyPI's torch is the CUDA build (several GB with its libraries); Debian's is CPU-only and ~230 MB installed.
# Its venv sees the system site-packages (torch and the NumPy it was built with) and gets this package's wheel.
bash scripts/setup.sh python3-torch
tvenv=build/venv-torch
[ -x "$tvenv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$tvenv"
"$tvenv/bin/pip" install -q --disable-pip-version-check pytest
rm -rf build/wheel-torch
"$py" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps -w build/wheel-torch .
"$tvenv/bin/pip" install -q --disable-pip-version-check --no-deps --force-reinstall build/wheel-torch/tensorbridge-*.whl
(cd build && "../$tvenv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests/test_dlpack.py" \
  "$root/python/tests/test_model.py" "$root/python/tests/test_lifetimes.py")

echo "== python: overhead of prepared.run against the C API (target <= 5 us; a report, not a gate) =="
"$py" bench/python/run_overhead.py --iterations 20000 --repeats 5

if ((wheel)); then
  echo "== python: wheel, installed into a clean venv =="
  rm -rf build/wheel build/venv-clean
  "$py" -m build --wheel --no-isolation --outdir build/wheel . >/dev/null
  python3 -m venv build/venv-clean
  build/venv-clean/bin/pip install -q --disable-pip-version-check build/wheel/tensorbridge-*.whl
  (cd build && venv-clean/bin/python -c "import tensorbridge as tb; print('wheel ok:', tb.__version__, tb.select('cpu').device.device)")
fi

if ((sanitize)); then
  echo "== python: the extension under AddressSanitizer + UndefinedBehaviorSanitizer =="
  asan=build/python-asan
  cmake -S . -B "$asan" -DCMAKE_BUILD_TYPE=Debug -DTB_WERROR=ON -DTB_SANITIZE=ON -DTB_BUILD_PYTHON=ON \
    -DTB_BUILD_TESTS=OFF -DPython_EXECUTABLE="$root/$py" >/dev/null
  cmake --build "$asan" --target _tb -j"$(nproc)"
  rm -rf "$asan/pkg" && mkdir -p "$asan/pkg/tensorbridge"
  cp python/tensorbridge/*.py python/tensorbridge/py.typed "$asan"/python/_tb*.so "$asan/pkg/tensorbridge/"
  # Python keeps its own allocations at exit, so LeakSanitizer is off; the tests count our handles instead.
  (cd build && PYTHONPATH="$root/$asan/pkg" LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)" \
    ASAN_OPTIONS="detect_leaks=0:halt_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "../$py" -m pytest -q -p no:cacheprovider "$root/python/tests")
fi
