#!/usr/bin/env bash
# Install what TensorBridge needs to build, test and run its demo on Debian 12, when it is missing.
# Runs apt-get only for packages that are not installed yet; uses sudo when not root.
# Usage: scripts/setup.sh [EXTRA_PACKAGE ...]
set -euo pipefail

packages=(
  build-essential cmake pkg-config git   # the build
  libcjson-dev                           # JSON output (library dependency)
  libcmocka-dev                          # the test framework
  ocl-icd-libopencl1 pocl-opencl-icd     # OpenCL loader and the CPU OpenCL driver (a real OpenCL device here)
  libvulkan1 mesa-vulkan-drivers         # Vulkan loader and Mesa drivers (lavapipe: a real Vulkan device here)
  vulkan-validationlayers                # the Khronos validation layer, on during the tests
  glslc                                  # compiles the Vulkan compute shaders to SPIR-V at build time
  libclblast1                            # CLBlast: the OpenCL backend's GEMM when present (opened with dlopen)
  python3 valgrind                       # test tooling
  python3-venv python3-dev               # the Python package (scripts/test_python.sh): its venv and Python.h
  libonnx-testdata                       # the ONNX operator conformance suite with reference outputs
  qemu-user                              # qemu-x86_64 -cpu Haswell: the suite on a CPU without AVX-512
)
packages+=("$@")                         # extra packages a caller needs (scripts/fuzz.sh: clang)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: all packages present"
fi
