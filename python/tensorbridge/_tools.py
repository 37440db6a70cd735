"""Validation, benchmarking, policies (AMP, ONNX Runtime providers) and safetensors files."""
from __future__ import annotations

import json
import math
import os
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from . import _tb
from ._backend import Backend, Tensor
from ._devices import Device
from ._errors import InvalidArgumentError
from ._model import Model, PathLike, load

__all__ = ["ValidationReport", "validate", "replay", "BenchResult", "bench", "AmpPolicy", "amp_policy",
           "ort_providers", "load_safetensors", "save_safetensors", "safetensors_metadata", "capabilities",
           "tolerance", "tolerance_table", "config_for_preset", "compare", "convert"]


def _model(model: Union[Model, PathLike, bytes]) -> Model:
    return model if isinstance(model, Model) else load(model)


@dataclass(frozen=True)
class ValidationReport:
    """Reference (CPU, O0, fp32) against each configuration; the keys of docs/validation.md in ``to_dict()``."""
    passed: int
    total: int
    configurations: List[Dict[str, Any]] = field(hash=False)
    _json: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    @property
    def ok(self) -> bool:
        """Every configuration passed."""
        return self.passed == self.total

    def to_dict(self) -> Dict[str, Any]:
        copy: Dict[str, Any] = json.loads(json.dumps(self._json))
        return copy


def _report(text: str) -> ValidationReport:
    d = json.loads(text)
    return ValidationReport(passed=d["passed"], total=d["total"], configurations=d["configurations"], _json=d)


def validate(model: Union[Model, PathLike, bytes], backends: Optional[Sequence[str]] = None,
             levels: Optional[Sequence[str]] = None, precision: str = "auto", *,
             inputs: Optional[Mapping[str, Any]] = None, seed: int = 0, dims: Optional[Mapping[str, int]] = None,
             localize: bool = False, rtol: Optional[float] = None, atol: Optional[float] = None) -> ValidationReport:
    """Run ``model`` on each backend request (default ["cpu"]) at each level (default O0-O3) and compare every
    output with the CPU O0 fp32 reference on the same inputs (given ones, the rest random from ``seed``),
    with the tolerance table or ``rtol``/``atol``. A configuration that cannot run fails in the report.

    >>> report = tensorbridge.validate(relu_model, backends=["cpu"], levels=["O0", "O2"])
    >>> report.passed, report.total
    (2, 2)
    """
    return _report(_tb.validate(_model(model)._h, list(backends) if backends is not None else None,
                                list(levels) if levels is not None else None, precision,
                                dict(inputs) if inputs is not None else None, int(seed),
                                dict(dims) if dims is not None else None, bool(localize), rtol, atol))


def replay(record: PathLike, model: Optional[PathLike] = None, backend: Optional[str] = None) -> ValidationReport:
    """Rerun a record written by ``tb run --record`` and compare with its outputs (``tb validate --replay``)."""
    return _report(_tb.validate_replay(os.fspath(record), os.fspath(model) if model is not None else None, backend))


@dataclass(frozen=True)
class BenchResult:
    """Latency of ``prepared.run`` through the C API (each run followed by a synchronize), in milliseconds."""
    device: str
    level: str
    precision: str
    prepare_ms: float
    warmup: int
    iterations: int
    median_ms: float
    p10_ms: float
    p90_ms: float
    mean_ms: float
    stddev_ms: float
    min_ms: float
    inferences_per_s: float
    device_peak_reserved_bytes: int
    samples_ms: List[float] = field(hash=False, repr=False)

    def to_dict(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def _percentile(sorted_ms: List[float], q: float) -> float:
    pos = q * (len(sorted_ms) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_ms) - 1)
    return sorted_ms[lo] + (sorted_ms[hi] - sorted_ms[lo]) * (pos - lo)


def _random_inputs(model: Model, given: Mapping[str, Any], dims: Mapping[str, int], seed: int) -> Dict[str, Any]:
    cpu = _tb.Backend("cpu")
    feeds: Dict[str, Any] = dict(given)
    for index, io in enumerate(model.inputs):
        if io.name in feeds:
            continue
        shape = [d if isinstance(d, int) else int(dims.get(d, 1)) if isinstance(d, str) else 1 for d in io.shape]
        feeds[io.name] = cpu.random(io.dtype, shape, seed, index)
    return feeds


def bench(model: Union[Model, PathLike, bytes], backend: Union[Backend, str, None] = None, level: str = "O2",
          precision: str = "auto", threads: Optional[int] = None, *, warmup: int = 3, iterations: int = 20,
          inputs: Optional[Mapping[str, Any]] = None, dims: Optional[Mapping[str, int]] = None,
          seed: int = 0) -> BenchResult:
    """Benchmark like ``tb bench`` on ``backend`` (None: TB_BACKEND, else auto): prepare (timed), ``warmup`` untimed runs, then ``iterations`` timed runs
    in C with the GIL released; inputs not given are random as ``tb run`` makes them.

    >>> r = tensorbridge.bench(relu_model, "cpu", iterations=5)
    >>> r.iterations, r.min_ms <= r.median_ms <= r.p90_ms
    (5, True)
    """
    if iterations < 1 or warmup < 0:
        raise InvalidArgumentError(1, f"iterations {iterations} / warmup {warmup}: need iterations >= 1 and "
                                      f"warmup >= 0")
    m = _model(model)
    b = backend if isinstance(backend, Backend) else Backend(backend)
    prepared, result = m.prepare(b, level, precision, threads, dims=dims)
    feeds = _random_inputs(m, inputs or {}, dims or {}, seed)
    b.reset_peak_memory()
    ms = prepared._h.time_runs(feeds, int(warmup), int(iterations), b._h)
    s = sorted(ms)
    median = statistics.median(s)
    return BenchResult(device=b.device.device, level=result.level, precision=result.precision,
                       prepare_ms=float(result.metrics["prepare_ms"]), warmup=warmup, iterations=iterations,
                       median_ms=median, p10_ms=_percentile(s, 0.1), p90_ms=_percentile(s, 0.9),
                       mean_ms=statistics.fmean(s), stddev_ms=statistics.pstdev(s), min_ms=s[0],
                       inferences_per_s=1000.0 / median if median > 0 else math.inf,
                       device_peak_reserved_bytes=int(b.memory_stats()["peak_reserved_bytes"]), samples_ms=ms)


@dataclass(frozen=True)
class AmpPolicy:
    """Whether autocast is worth enabling on a device, in which dtype, and whether to scale the loss."""
    device: str
    enabled: bool
    dtype: str
    use_grad_scaler: bool
    reason: str


def amp_policy(device: Union[Device, str, None] = "auto") -> AmpPolicy:
    """The mixed-precision policy of a device (a Device, or a request as ``select`` takes it).

    >>> tensorbridge.amp_policy("cpu").device
    'cpu:0'
    """
    request = device.device if isinstance(device, Device) else device
    return AmpPolicy(**_tb.amp_policy(request))


def ort_providers(request: str = "auto", available: Optional[Sequence[str]] = None) -> List[str]:
    """The ONNX Runtime execution providers for a backend request, best first, CPU last, to pass to
    ``onnxruntime.InferenceSession(path, providers=...)``. ``available`` defaults to what onnxruntime
    reports (or only the CPU provider when onnxruntime is not installed).

    >>> tensorbridge.ort_providers("cpu", ["CPUExecutionProvider"])
    ['CPUExecutionProvider']
    """
    if available is None:
        try:
            import onnxruntime  # type: ignore[import-untyped,import-not-found,unused-ignore]
            available = onnxruntime.get_available_providers()
        except ImportError:
            available = ["CPUExecutionProvider"]
    return _tb.ort_providers(request, list(available))


def load_safetensors(source: Union[PathLike, bytes]) -> Dict[str, Any]:
    """Every tensor of a safetensors file (or its bytes) as {name: numpy.ndarray}, in file order; bf16 and
    fp8 tensors, which NumPy lacks, come as tensorbridge.Tensor (DLPack: ``torch.from_dlpack``)."""
    src = source if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    tensors, _ = _tb.safetensors_load(src)
    return {name: (t.numpy() if t.dtype not in ("bf16", "fp8_e4m3fn", "fp8_e5m2") else t) for name, t in tensors}


def safetensors_metadata(source: Union[PathLike, bytes]) -> Dict[str, str]:
    """The ``__metadata__`` map of a safetensors file."""
    src = source if isinstance(source, (bytes, bytearray, memoryview)) else os.fspath(source)
    return _tb.safetensors_load(src)[1]


def save_safetensors(tensors: Mapping[str, Any], path: PathLike, metadata: Optional[Mapping[str, str]] = None) -> None:
    """Write {name: array} (NumPy, DLPack objects or Tensors) to a safetensors file in the order the safetensors
    package writes (docs/checkpoints.md); the file is written under a temporary name and renamed.

    >>> import numpy as np, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> tensorbridge.save_safetensors({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, path, {"step": "7"})
    >>> tensorbridge.load_safetensors(path)["w"].tolist(), tensorbridge.safetensors_metadata(path)
    ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], {'step': '7'})
    """
    _tb.safetensors_save(os.fspath(path), list(tensors.items()), dict(metadata) if metadata else None)


def capabilities() -> List[Dict[str, Any]]:
    """The capability table (architecture -> dtypes, features, matrix unit, sources), as docs/capabilities.md.

    >>> [r["architecture"] for r in tensorbridge.capabilities() if r["key"] == "sm_90"]
    ['Hopper']
    """
    return _tb.capabilities()


def tolerance(backend: str, precision: str, level: str) -> Dict[str, Any]:
    """The validation tolerance for a configuration, with the table's fallback order (docs/validation.md).

    >>> t = tensorbridge.tolerance("cpu", "fp32", "O0")
    >>> t["rtol"], t["source"]
    (0.0, 'measured')
    """
    return _tb.tolerance(backend, precision, level)


def tolerance_table() -> List[Dict[str, Any]]:
    """Every entry of the tolerance table; ``"any"`` where an entry matches every backend, precision or level."""
    return _tb.tolerance_table()


def config_for_preset(preset: str, device: Union[Device, str, None] = None) -> Dict[str, Any]:
    """The settings a preset (training, inference, development) recommends for a device (a Device or a
    request; None: TB_BACKEND, else auto): level, precision, determinism, validation, memory fraction, why.

    >>> tensorbridge.config_for_preset("inference", "cpu")["level"]
    'O2'
    """
    return _tb.config_for_preset(preset, device.device if isinstance(device, Device) else device)


def compare(got: Any, ref: Any, rtol: float = 1e-4, atol: float = 1e-5) -> Dict[str, Any]:
    """The metrics ``validate`` computes for one output, for any two arrays of the same dtype and shape:
    max abs/rel error, cosine, ULP distance (f32), mismatches outside atol*S + rtol*|ref|, NaN/Inf counts.

    >>> import numpy as np
    >>> m = tensorbridge.compare(np.float32([1, 2]), np.float32([1, 2.5]), rtol=0.0, atol=0.1)
    >>> m["max_abs_error"], m["mismatches"], m["passed"]
    (0.5, 1, False)
    """
    return _tb.compare(got, ref, float(rtol), float(atol))


def convert(value: Any, dtype: str, saturate: bool = True) -> Tensor:
    """A copy of an array in another dtype with the ONNX Cast rules of docs/dtypes.md (bf16, fp8 included),
    as a CPU tensorbridge.Tensor.

    >>> t = tensorbridge.convert(np.float32([1.0, 3.0]), "bf16")
    >>> t.dtype, tensorbridge.convert(t, "f32").numpy().tolist()
    ('bf16', [1.0, 3.0])
    """
    return _tb.convert(value, dtype, bool(saturate))
