"""TensorBridge for Python: discover accelerators, select one, prepare ONNX models at O0-O3 and run them on
NumPy arrays and DLPack tensors (PyTorch, CuPy, JAX). A thin layer over the C library (docs/python.md).

>>> import tensorbridge
>>> model = tensorbridge.load("model.onnx")                       # doctest: +SKIP
>>> prepared, result = model.prepare(tensorbridge.Backend("auto"))  # doctest: +SKIP
>>> outputs = prepared.run({"x": x})                               # doctest: +SKIP
"""
from __future__ import annotations

from typing import Optional

from ._errors import (InputOutputError, InternalError, InvalidArgumentError, ModelError, NotFoundError,
                      OutOfMemoryError, PermissionDeniedError, TensorBridgeError, UnavailableError,
                      UnsupportedError, DriverError)
from . import _tb
from ._backend import Backend, Event, Tensor
from ._devices import (BackendReport, Candidate, Check, Device, DoctorReport, Selection, devices, doctor,
                       select)
from ._model import Model, PreparedModel, PrepareResult, ValueInfo, load
from ._tools import (AmpPolicy, BenchResult, ValidationReport, amp_policy, bench, capabilities, compare,
                     config_for_preset, convert, load_safetensors, ort_providers, replay, safetensors_metadata,
                     save_safetensors, tolerance, tolerance_table, validate)

__version__: str = _tb.version()

__all__ = [
    "__version__", "Backend", "Tensor", "Event", "capabilities", "tolerance", "tolerance_table",
    "config_for_preset", "compare", "convert", "Device", "BackendReport", "Check", "Candidate", "Selection",
    "DoctorReport", "devices", "select", "doctor", "Model", "PreparedModel", "PrepareResult", "ValueInfo",
    "load", "ValidationReport", "validate", "replay", "BenchResult", "bench", "AmpPolicy", "amp_policy",
    "ort_providers", "load_safetensors", "save_safetensors", "safetensors_metadata", "from_dlpack",
    "TensorBridgeError", "InvalidArgumentError", "NotFoundError", "UnavailableError", "DriverError",
    "OutOfMemoryError", "ModelError", "UnsupportedError", "InputOutputError", "PermissionDeniedError",
    "InternalError",
]


def from_dlpack(value: object, backend: Optional[Backend] = None) -> Tensor:
    """A tensorbridge.Tensor sharing the memory of a NumPy array or a DLPack object, without a copy (read-only
    memory is copied). Host memory goes on the CPU backend; CUDA (kDLCUDA, kDLCUDAManaged) and ROCm (kDLROCM)
    device memory on ``backend``, which must be a backend of that device (else InvalidArgumentError saying what
    differs), or with ``backend=None`` on one opened for it (``cuda:N`` / ``rocm:N``). The producer is asked
    for the memory with DLPack's stream handshake: ``__dlpack__(stream=1)`` for CUDA (the legacy default
    stream, which the library's blocking copies use), ``stream=0`` for ROCm."""
    return Tensor.from_value(value, backend._h if backend is not None else None)
