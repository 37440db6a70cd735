#!/usr/bin/env python3
"""DLPack in device memory on a real NVIDIA GPU: what the fake CUDA runtime cannot prove (docs/tensors.md
"Device memory", docs/python.md). Run it on a machine with a GPU, in a venv that has a CUDA build of PyTorch and
this package (python3 -m pip install ./ , then python3 scripts/test_dlpack_gpu.py [cuda:N]). It checks, each
against torch.cuda:
  1. torch -> TensorBridge: from_dlpack of a torch.cuda tensor shares its memory (the export of the import has
     torch's data_ptr), on a given backend and on one opened for the device; the memory stats do not count it.
  2. TensorBridge -> torch: torch.from_dlpack of a tensor the library made on cuda:N gives a torch tensor on
     cuda:N with the same data_ptr (two imports share one pointer), values as written.
  3. A model run on cuda:N with a torch.cuda input in place (relu of a tensor computed on a side stream: the
     stream handshake must order torch's pending kernels before the library's reads), the output handed to
     torch without a copy, and, with two GPUs, a tensor of the other one refused with the library's sentence.
Exit status 0 when every check passed, 1 on a failed check, 77 when there is no CUDA GPU or no CUDA torch."""
from __future__ import annotations

import ctypes
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    try:
        import torch
    except ImportError:
        print("skip: PyTorch is not installed (install a CUDA build of torch in this venv)")
        return 77
    if not torch.cuda.is_available():
        print(f"skip: torch {torch.__version__} sees no CUDA GPU")
        return 77
    import numpy as np
    import tensorbridge
    sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
    import onnx_build

    device = sys.argv[1] if len(sys.argv) > 1 else "cuda:0"
    index = int(device.split(":")[1])
    tdev = torch.device("cuda", index)
    backend = tensorbridge.Backend(device)
    failures = []

    def check(what: str, ok: bool) -> None:
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    def export_pointer(t: tensorbridge.Tensor) -> int:
        """The device pointer of a Tensor's DLPack export (data + byte_offset), read from the capsule."""
        capsule = t.__dlpack__(max_version=(1, 1))
        api = ctypes.pythonapi
        api.PyCapsule_GetPointer.restype = ctypes.c_void_p
        api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        m = api.PyCapsule_GetPointer(capsule, b"dltensor_versioned")
        # DLManagedTensorVersioned: version (8 bytes), manager_ctx, deleter, flags, then DLTensor (data first);
        # byte_offset is the DLTensor's last field, after data 8, device 8, ndim 4 + dtype 4, shape 8, strides 8.
        data = ctypes.c_uint64.from_address(m + 32).value
        byte_offset = ctypes.c_uint64.from_address(m + 32 + 40).value
        return data + byte_offset

    # 1. torch -> TensorBridge, zero-copy
    x = torch.arange(12, dtype=torch.float32, device=tdev).reshape(3, 4)
    for given in (backend, None):
        t = tensorbridge.from_dlpack(x, given)
        check(f"from_dlpack(torch.cuda, backend={'given' if given else 'None'}) is on {device}",
              t.device == device and not t.is_host)
        check("  the import shares torch's memory (data_ptr equal)", export_pointer(t) == x.data_ptr())
        check("  values read through the library", np.array_equal(t.numpy(), x.cpu().numpy()))
        del t
    check("imports are not in the backend's memory stats", backend.memory_stats()["allocated_bytes"] == 0)

    # 2. TensorBridge -> torch, zero-copy
    mine = backend.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    a, b = torch.from_dlpack(mine), torch.from_dlpack(mine)
    check(f"torch.from_dlpack(library tensor) is on {tdev}", a.device == tdev)
    check("  two imports share one pointer, the library's (data_ptr equal)",
          a.data_ptr() == b.data_ptr() == export_pointer(mine))
    check("  values as the library wrote them", torch.equal(a.cpu(), torch.arange(6, dtype=torch.float32).reshape(2, 3)))
    a.mul_(2)  # a write by torch, seen by the library: the same memory
    check("  a write by torch is seen by the library", np.array_equal(mine.numpy(), np.arange(6).reshape(2, 3) * 2.0))
    del a, b, mine

    # 3. a model run in place, with the stream handshake
    prepared, _ = tensorbridge.load(onnx_build.relu((1024, 1024))).prepare(backend)
    side = torch.cuda.Stream(device=tdev)
    with torch.cuda.stream(side):
        big = torch.randn(1024, 1024, device=tdev)
        for _ in range(20):  # pending work on a side stream when run() asks for the memory
            big = big * 1.0001
        out = prepared.run({"x": big}, as_numpy=False)["y"]
    y = torch.from_dlpack(out)
    check(f"run on {device}: output handed to torch on {tdev}", y.device == tdev)
    check("  relu of the side stream's result (the handshake ordered it)", torch.equal(y, torch.relu(big)))
    check("  torch.from_dlpack(output) shares the library's memory", y.data_ptr() == export_pointer(out))

    if torch.cuda.device_count() > 1:
        other = torch.ones(3, 4, device=torch.device("cuda", (index + 1) % torch.cuda.device_count()))
        try:
            tensorbridge.from_dlpack(other, backend)
            check("a tensor of another GPU is refused", False)
        except tensorbridge.InvalidArgumentError as e:
            check(f"a tensor of another GPU is refused: {e}", "but the backend is" in str(e))
    else:
        print("skip: one GPU, so no tensor of another GPU to refuse")

    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
