"""Backends: a handle on one device, its caching allocator's statistics and limits, and scoped use."""
from __future__ import annotations

import json
from typing import Any, Dict, Optional, Sequence

from . import _tb
from ._devices import Device
from ._errors import InvalidArgumentError

__all__ = ["Backend", "Tensor", "Event"]

Tensor = _tb.Tensor
"""A tensor of the library: ``.numpy()``, ``.cpu()``, ``.dtype``, ``.shape``, the buffer protocol and DLPack."""


Event = _tb.Event
"""A marker in a backend's stream of work: ``record()``, ``synchronize()``, ``query()``, ``elapsed_ms(end)``."""


class Backend:
    """A backend on the device a request selects (``"auto"``, ``"cpu"``, ``"opencl:0"``; None, the default,
    reads TB_BACKEND and falls back to auto). Used in a ``with`` block it is a scope (``tb_backend_scope_begin``/``end``): when the
    outermost block ends, the backend synchronizes and releases its cache. ``close()`` frees the handle;
    tensors made on it stay valid.

    >>> with tensorbridge.Backend("cpu") as b:
    ...     b.kind, b.device.device
    ('cpu', 'cpu:0')
    """

    def __init__(self, request: Optional[str] = None, *, memory_fraction: Optional[float] = None) -> None:
        self._h = _tb.Backend(request)
        if memory_fraction is not None:
            self.set_memory_fraction(memory_fraction)

    @property
    def kind(self) -> str:
        """The backend's name: ``"cpu"``, ``"cuda"``, ``"opencl"``, ..."""
        return self._h.kind

    @property
    def device(self) -> Device:
        """The device this backend runs on."""
        return Device._from_json(json.loads(self._h.device_json()))

    @property
    def closed(self) -> bool:
        return bool(self._h.closed)

    def memory_stats(self) -> Dict[str, Any]:
        """The caching allocator's statistics, keys as ``tb info --memory --json`` (docs/tensors.md §2).

        >>> b = tensorbridge.Backend("cpu")
        >>> stats = b.memory_stats()
        >>> stats["allocated_bytes"] >= 0 and "peak_reserved_bytes" in stats
        True
        """
        stats: Dict[str, Any] = json.loads(self._h.memory_stats_json())
        return stats

    def empty_cache(self) -> None:
        """Return fully free cached blocks to the device."""
        self._h.empty_cache()

    def reset_peak_memory(self) -> None:
        """Start the peak counters again from the current values."""
        self._h.reset_peak_memory()

    def synchronize(self) -> None:
        """Wait until all work queued on the device has finished."""
        self._h.synchronize()

    def set_memory_fraction(self, fraction: float) -> None:
        """Cap the memory this backend holds at ``fraction`` of the device's total, 0 < fraction <= 1."""
        self._h.set_memory_fraction(float(fraction))

    @property
    def memory_limit(self) -> Optional[int]:
        """The reserved-bytes limit set by ``set_memory_fraction``; None when there is none."""
        limit = self.memory_stats().get("limit_bytes")
        return int(limit) if limit else None

    def set_device(self, index: int) -> None:
        """Move to device ``index`` of the same kind (refused while tensors made on this backend live)."""
        self._h.set_device(int(index))

    def empty(self, shape: Sequence[int], dtype: str = "f32") -> Tensor:
        """A new tensor on this backend, contents undefined."""
        return self._h.empty(dtype, list(shape))

    def random(self, shape: Sequence[int], dtype: str = "f32", seed: int = 0, index: int = 0) -> Tensor:
        """A tensor filled as ``tb run`` fills inputs: floats uniform in [-1, 1), integers in [0, 10)."""
        return self._h.random(dtype, list(shape), int(seed), int(index))

    def tensor(self, value: Any) -> Tensor:
        """A copy of a NumPy array or DLPack object (PyTorch, CuPy, JAX) on this backend (a DLPack object in this
        device's memory is read in place and copied on the device)."""
        return self._h.copy_in(value)

    def event(self) -> Event:
        """A new event on this backend, for waiting on part of its work and timing it.

        >>> b = tensorbridge.Backend("cpu")
        >>> start, end = b.event(), b.event()
        >>> start.record(); end.record(); end.synchronize()
        >>> start.query(), start.elapsed_ms(end) >= 0
        (True, True)
        """
        return self._h.event()

    def close(self) -> None:
        """Free the handle. Tensors and prepared models made with it keep working."""
        self._h.close()

    def __enter__(self) -> "Backend":
        self._h.scope_begin()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._h.closed:
            self._h.scope_end()

    def __repr__(self) -> str:
        if self._h.closed:
            return "<tensorbridge.Backend (closed)>"
        return f"<tensorbridge.Backend {self.device.device}>"


def _handle(backend: "Backend | str | None") -> _tb.Backend:
    if isinstance(backend, Backend):
        return backend._h
    if backend is None or isinstance(backend, str):
        return Backend(backend)._h
    raise InvalidArgumentError(1, f"backend: expected a tensorbridge.Backend or a request string such as 'cpu', "
                                  f"got a {type(backend).__name__}")
