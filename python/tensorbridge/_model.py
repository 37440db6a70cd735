"""Models: load an ONNX model, prepare it for a backend at a level, and run it on NumPy or DLPack arrays."""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _tb
from ._backend import Backend, _handle
from ._errors import InvalidArgumentError

__all__ = ["Model", "PreparedModel", "PrepareResult", "ValueInfo", "load"]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class ValueInfo:
    """A graph input or output: its dims are ints, symbolic names (``"batch"``) or None when unknown."""
    name: str
    dtype: str
    shape: Tuple[Union[int, str, None], ...]
    has_shape: bool


@dataclass(frozen=True)
class PrepareResult:
    """What preparation did (the seeds' OptimizationResult; keys of ``tb_prepare_result_to_json``)."""
    success: bool
    level: str
    precision: str
    optimizations_applied: Tuple[str, ...]
    warnings: Tuple[str, ...]
    metrics: Dict[str, Any] = field(hash=False)

    @property
    def precision_choices(self) -> Tuple[str, ...]:
        """When bf16 was asked for (precision bf16, or auto at O3): per CPU node, the precision it runs in and
        why ("Conv (c1): fp32: bf16 1.8x slower on this shape (trial: 0.41 vs 0.23 ms)"; docs/engine.md); on a
        device asked for a reduced precision, the same per device node ("MatMul (m): bf16: precision fp8 needs a
        GPU of compute capability 8.9 or newer ...; this product runs in bf16 on the device ..."; docs/cuda.md)."""
        return tuple(self.metrics.get("precision_choices", ()))

    @property
    def placements(self) -> List[Dict[str, str]]:
        """Where each node runs, in execution order: {"node": "Relu (r1)", "device": "cuda:0", "reason": ""};
        the reason says why a node is not on the backend's device ("no cuda kernel for ...; ran on vulkan:0,
        the same GPU (PCI ...)")."""
        placements: List[Dict[str, str]] = copy.deepcopy(self.metrics.get("placements", []))
        return placements

    def to_dict(self) -> Dict[str, Any]:
        return {"success": self.success, "level": self.level, "precision": self.precision,
                "optimizations_applied": list(self.optimizations_applied), "warnings": list(self.warnings),
                "metrics": copy.deepcopy(self.metrics)}


class PreparedModel:
    """A model prepared for one backend. ``run`` releases the GIL while the library runs; one run at a time
    per prepared model (other threads wait), so prepare one per thread to run in parallel. It keeps the
    library's references to its model and backend: both may be closed first."""

    def __init__(self, handle: _tb.Prepared) -> None:
        self._h = handle

    @property
    def output_names(self) -> Tuple[str, ...]:
        return tuple(self._h.output_names)

    @property
    def result(self) -> PrepareResult:
        """What preparation did."""
        d = json.loads(self._h.result_json())
        return PrepareResult(success=d["success"], level=d["level"], precision=d["precision"],
                             optimizations_applied=tuple(d["optimizations_applied"]),
                             warnings=tuple(d["warnings"]), metrics=d["metrics"])

    def run(self, inputs: Mapping[str, Any], outputs: Optional[Sequence[str]] = None, *,
            as_numpy: bool = True) -> Dict[str, Any]:
        """Run once. ``inputs`` maps input names to NumPy arrays or DLPack objects (PyTorch, CuPy, JAX: host
        memory, and CUDA / ROCm memory of the device this model was prepared on, are used in place, never
        copied; the producer is asked with DLPack's stream handshake); ``outputs`` picks outputs by name
        (default: all). Returns {name: numpy.ndarray} (views of the library's memory on the CPU backend, copies
        from a device) or, with ``as_numpy=False``, {name: tensorbridge.Tensor} for DLPack consumers
        (``torch.from_dlpack``: a device backend's outputs export as kDLCUDA / kDLROCM, no copy).
        A wrong name, dtype or shape raises InvalidArgumentError naming the input, expected and given."""
        return self._h.run(inputs, outputs, as_numpy)

    def set_profiling(self, on: bool) -> None:
        """Time every node from now on (device nodes are waited for one by one, so runs are slower); turning
        it on again clears the counts."""
        self._h.set_profiling(bool(on))

    def profile(self) -> List[Dict[str, Any]]:
        """Per node in execution order: name, op_type, placement, kernel, runs and total_ms since profiling
        was turned on (InvalidArgumentError while it is off).

        >>> p, _ = tensorbridge.load(relu_model).prepare("cpu")
        >>> p.set_profiling(True)
        >>> _ = p.run({"x": np.zeros((3, 4), np.float32)})
        >>> [(e["op_type"], e["runs"]) for e in p.profile()]
        [('Relu', 1)]
        """
        return self._h.profile()

    def close(self) -> None:
        """Free the prepared model (waits for a run in progress on another thread)."""
        self._h.close()

    def __enter__(self) -> "PreparedModel":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Model:
    """An ONNX model loaded by the library (``tensorbridge.load``)."""

    def __init__(self, handle: _tb.Model) -> None:
        self._h = handle

    @property
    def inputs(self) -> List[ValueInfo]:
        """The graph inputs as declared."""
        return [ValueInfo(*i) for i in self._h.inputs()]

    @property
    def outputs(self) -> List[ValueInfo]:
        """The graph outputs as declared."""
        return [ValueInfo(*o) for o in self._h.outputs()]

    @property
    def sha256(self) -> str:
        """SHA-256 of the model's bytes, 64 hex digits."""
        return self._h.sha256()

    def property(self, key: str) -> Optional[str]:
        """A fact about the model: producer, producer_version, ir_version, opset, nodes, initializers,
        weight_bytes, graph_name; None for an unknown key."""
        return self._h.property(key)

    def prepare(self, backend: Union[Backend, str, None] = None, level: str = "O2", precision: str = "auto",
                threads: Optional[int] = None, *, dims: Optional[Mapping[str, int]] = None,
                cpu_fallback: bool = False, conv_algo: str = "default",
                device_only: bool = False) -> Tuple[PreparedModel, PrepareResult]:
        """Prepare for ``backend`` (a Backend, or a request; None: TB_BACKEND, else auto) at ``level`` (O0-O3) and ``precision`` (auto, fp32,
        bf16, fp16, fp8, tf32) with ``threads`` CPU threads (None: the backend's default); ``dims`` binds symbolic
        dimensions now; ``cpu_fallback`` lets nodes a device has no kernel for run on the CPU; ``conv_algo``
        (default, auto, winograd, direct, gemm) picks the CPU convolution method where it applies (default:
        TB_CONV_DIRECT / TB_CONV_WINOGRAD, else auto); ``device_only`` raises UnsupportedError, naming the
        nodes, their ops and why, instead of running any node on the CPU (each node must run on the device or
        on another route to the same hardware; ``result.placements`` says where each node runs). Returns the
        prepared model and what preparation did.

        >>> model = tensorbridge.load(relu_model)
        >>> prepared, result = model.prepare("cpu", level="O2")
        >>> result.level, result.success
        ('O2', True)
        """
        if threads is not None and (not isinstance(threads, int) or threads < 1):
            raise InvalidArgumentError(1, f"threads: {threads!r} is not a count >= 1; pass None for the "
                                          f"backend's default")
        handle = self._h.prepare(_handle(backend), level, precision, threads or 0,
                                 dict(dims) if dims else None, bool(cpu_fallback), conv_algo, bool(device_only))
        prepared = PreparedModel(handle)
        return prepared, prepared.result

    def export_weights(self, path: PathLike) -> None:
        """Write every initializer to a safetensors file (docs/checkpoints.md)."""
        self._h.export_weights(os.fspath(path))

    def override_weights(self, path: PathLike, allow_narrowing: bool = False) -> int:
        """Replace initializers with the tensors of a safetensors file; returns how many were replaced."""
        return int(self._h.override_weights(os.fspath(path), bool(allow_narrowing)))

    def close(self) -> None:
        """Free the model. Prepared models made from it keep working."""
        self._h.close()

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load(source: Union[PathLike, bytes, bytearray, memoryview], base_dir: Optional[PathLike] = None) -> Model:
    """Load an ONNX model from a file or from bytes (external data relative to ``base_dir``; None refuses
    it for bytes). A malformed file raises ModelError naming the field and the reason.

    >>> tensorbridge.load(b"not a model")
    Traceback (most recent call last):
    ...
    tensorbridge.ModelError: ...
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Model(_tb.Model.load_bytes(source, os.fspath(base_dir) if base_dir is not None else None))
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidArgumentError(1, f"source: expected a path or bytes, got a {type(source).__name__}")
    return Model(_tb.Model.load(os.fspath(source)))
