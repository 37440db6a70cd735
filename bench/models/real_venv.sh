#!/usr/bin/env bash
# The real set's Python venv (docs/benchmarking.md, "Real set: packages"), made when missing: PyTorch for
# the CPU, torchvision, transformers, onnx, onnxscript, onnxruntime, numpy, all from PyPI.
# PyPI's torch for Linux x86-64 is the CUDA build: its metadata asks for the whole CUDA stack (cuBLAS,
# cuDNN, cuSOLVER, NCCL, Triton, ...; several GB). Only the libraries that libtorch_cuda.so and
# libtorch_python.so are linked against have to exist for `import torch` to load on a machine without a
# GPU, so torch and torchvision are installed with --no-deps, then their pure-Python dependencies, then
# those CUDA libraries at the versions torch's own metadata pins (read from the installed torch), leaving
# out Triton, cuSOLVER, CUPTI, NVTX and cuda-bindings. When that import fails (a torch whose libraries are
# linked differently), the full `pip install torch` is the fallback.
# Usage: bash bench/models/real_venv.sh VENV   (TORCH_VERSION, TORCHVISION_VERSION override the pins)
set -euo pipefail
venv="${1:?usage: real_venv.sh VENV}"
torch_version="${TORCH_VERSION:-2.15.0}"
torchvision_version="${TORCHVISION_VERSION:-0.29.2}"
probe="import torch, torchvision, transformers, onnx, onnxruntime, onnxscript, numpy; torch.zeros(1)"

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
if "$py" -c "$probe" 2>/dev/null; then
  echo "real_venv: $venv has every package"
  exit 0
fi
pip=("$py" -m pip install --quiet --disable-pip-version-check)
echo "real_venv: installing torch $torch_version and torchvision $torchvision_version (CPU use, without the CUDA stack)"
"${pip[@]}" --no-deps "torch==$torch_version" "torchvision==$torchvision_version"
"${pip[@]}" filelock "typing-extensions>=4.13" "setuptools>=77" "sympy>=1.13.3" "networkx>=2.5.1" jinja2 \
  "fsspec>=0.8.5" pillow
# the CUDA libraries torch's shared objects are linked against, at the versions its metadata pins
mapfile -t cuda < <("$py" - <<'PY'
import re
from importlib.metadata import requires
linked = {"cuda-toolkit", "nvidia-cudnn", "nvidia-cusparselt", "nvidia-nccl", "nvidia-nvshmem"}
for req in requires("torch") or []:
    spec, _, marker = req.partition(";")
    if "extra ==" in marker:
        continue
    name = re.match(r"[A-Za-z0-9_.-]+", spec.strip()).group(0)
    base = re.sub(r"-cu\d+$", "", name.lower())
    if base not in linked:
        continue
    if base == "cuda-toolkit":  # only the toolkit parts libtorch_cuda.so is linked against
        spec = re.sub(r"\[[^\]]*\]", "[cublas,cudart,cufft,cufile,cusparse,nvrtc]", spec.strip())
    print(spec.strip())
PY
)
if [ "${#cuda[@]}" -gt 0 ]; then
  echo "real_venv: installing the CUDA libraries torch is linked against: ${cuda[*]}"
  "${pip[@]}" "${cuda[@]}"
fi
if ! "$py" -c "import torch; torch.zeros(1)" 2>/dev/null; then
  echo "real_venv: torch does not load with the linked CUDA libraries only; installing torch with every dependency"
  "${pip[@]}" "torch==$torch_version" "torchvision==$torchvision_version"
fi
"${pip[@]}" transformers onnx onnxscript onnxruntime numpy
"$py" -c "$probe"
echo "real_venv: $venv ready ($("$py" -c 'import torch, onnxruntime; print("torch", torch.__version__, "onnxruntime", onnxruntime.__version__)'))"
