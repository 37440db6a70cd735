"""Discovery and selection: devices(), select() and doctor(), as objects over the library's JSON."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from . import _tb
from ._errors import TensorBridgeError

__all__ = ["Device", "BackendReport", "Check", "Candidate", "Selection", "DoctorReport", "devices", "select",
           "doctor"]


@dataclass(frozen=True)
class Device:
    """One device as one backend sees it: every field of ``tb_device_info`` (keys as in docs/json.md)."""

    device: str
    backend: str
    index: int
    name: str
    vendor: str
    type: str
    architecture: str
    arch_id: str
    compute_capability: Optional[str]
    usable: bool
    reason: str
    fix: str
    compute_units: int
    memory_total_bytes: Optional[int]
    memory_free_bytes: Optional[int]
    memory_type: str
    driver_version: str
    pci_bus_id: str
    uuid: str
    capability_source: str
    physical_id: int
    dtypes: Tuple[str, ...]
    features: Tuple[str, ...]
    routes: Tuple[str, ...]
    properties: Dict[str, str] = field(hash=False)

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "Device":
        return cls(
            device=d["device"], backend=d["backend"], index=d["index"], name=d["name"], vendor=d["vendor"],
            type=d["type"], architecture=d["architecture"], arch_id=d["arch_id"],
            compute_capability=d.get("compute_capability"), usable=d["usable"], reason=d["reason"], fix=d["fix"],
            compute_units=d["compute_units"], memory_total_bytes=d["memory_total_bytes"],
            memory_free_bytes=d["memory_free_bytes"], memory_type=d["memory_type"],
            driver_version=d["driver_version"], pci_bus_id=d["pci_bus_id"], uuid=d["uuid"],
            capability_source=d["capability_source"], physical_id=d["physical_id"], dtypes=tuple(d["dtypes"]),
            features=tuple(d["features"]), routes=tuple(d["routes"]), properties=dict(d["properties"]))

    def to_dict(self) -> Dict[str, Any]:
        """The device object of docs/json.md (``compute_capability`` only when the device has one)."""
        d: Dict[str, Any] = {}
        for key in self.__dataclass_fields__:
            value = getattr(self, key)
            if key == "compute_capability" and value is None:
                continue
            d[key] = list(value) if isinstance(value, tuple) else (dict(value) if isinstance(value, dict) else value)
        return d

    def __str__(self) -> str:
        state = "usable" if self.usable else f"not usable: {self.reason}"
        return f"{self.device} {self.name} ({state})"


@dataclass(frozen=True)
class Check:
    """One thing discovery tried for a backend."""
    what: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class BackendReport:
    """What discovery found for one backend (``tb_backend_report``)."""
    backend: str
    available: bool
    device_count: int
    summary: str
    fix: str
    checks: Tuple[Check, ...]

    @classmethod
    def _from_json(cls, d: Dict[str, Any]) -> "BackendReport":
        return cls(backend=d["backend"], available=d["available"], device_count=d["device_count"],
                   summary=d["summary"], fix=d["fix"], checks=tuple(Check(**c) for c in d["checks"]))

    def to_dict(self) -> Dict[str, Any]:
        return {"backend": self.backend, "available": self.available, "device_count": self.device_count,
                "summary": self.summary, "fix": self.fix,
                "checks": [{"what": c.what, "ok": c.ok, "detail": c.detail} for c in self.checks]}


def _discover() -> Dict[str, Any]:
    listing: Dict[str, Any] = json.loads(_tb.devices_json())
    return listing


def devices(usable_only: bool = False) -> List[Device]:
    """Every device on this machine (by backend, then index), usable or not; ``usable_only`` keeps the usable.

    >>> cpu = [d for d in tensorbridge.devices() if d.backend == "cpu"][0]
    >>> cpu.device, cpu.usable, cpu.type
    ('cpu:0', True, 'cpu')
    """
    found = [Device._from_json(d) for d in _discover()["devices"]]
    return [d for d in found if d.usable] if usable_only else found


@dataclass(frozen=True)
class Candidate:
    """One device the selection considered, with its verdict."""
    device: str
    name: str
    rank: int
    chosen: bool
    usable: bool
    outcome: str
    verdict: str


@dataclass(frozen=True)
class Selection:
    """Which device a request picks and why (``tb_select``)."""
    request: str
    source: str
    device: Device
    candidates: Tuple[Candidate, ...]
    explanation: str
    _json: Dict[str, Any] = field(repr=False, compare=False, hash=False)

    def explain(self) -> str:
        """The text ``tb select --explain`` prints: every candidate and its verdict."""
        return self.explanation

    def to_dict(self) -> Dict[str, Any]:
        """The selection object of docs/selection.md."""
        copy: Dict[str, Any] = json.loads(json.dumps(self._json))
        return copy


def _selection(d: Dict[str, Any]) -> Selection:
    return Selection(request=d["request"], source=d["source"], device=Device._from_json(d["selected"]),
                     candidates=tuple(Candidate(**c) for c in d["candidates"]), explanation=d["explanation"],
                     _json=d)


def select(request: Optional[str] = "auto") -> Selection:
    """Choose a device: ``"auto"``, a backend (``"cuda"``, ``"amd"``) or a device (``"opencl:0"``); None reads
    TB_BACKEND. Raises NotFoundError / UnavailableError / InvalidArgumentError as ``tb select`` fails.

    >>> sel = tensorbridge.select("cpu")
    >>> sel.device.device, sel.source
    ('cpu:0', 'argument')
    >>> sel.explain().splitlines()[0].startswith("selected cpu:0")
    True
    """
    return _selection(json.loads(_tb.select_json(request)))


@dataclass(frozen=True)
class DoctorReport:
    """What ``tb doctor`` reports: every backend's probe, what ``auto`` picks, TB_BACKEND and what to fix."""
    version: str
    backends: Tuple[BackendReport, ...]
    selected: Optional[Selection]
    selected_error: str
    tb_backend: Optional[Dict[str, Any]]
    todo: Tuple[Dict[str, str], ...]

    def to_dict(self) -> Dict[str, Any]:
        """The object of ``tb doctor --json`` (docs/json.md)."""
        return {"tensorbridge_version": self.version, "backends": [b.to_dict() for b in self.backends],
                "selected": self.selected.to_dict() if self.selected else None,
                "selected_error": self.selected_error, "tb_backend": self.tb_backend,
                "todo": [dict(t) for t in self.todo]}

    def __str__(self) -> str:
        lines = [f"TensorBridge {self.version}"]
        for b in self.backends:
            lines.append(f"  {b.backend:<7} {'ok ' if b.available else '-- '} {b.summary}")
        lines.append(f"auto: {self.selected.device.device if self.selected else self.selected_error}")
        lines += [f"fix ({t['about']}): {t['fix']}" for t in self.todo]
        return "\n".join(lines)


def doctor() -> DoctorReport:
    """Diagnose this machine as ``tb doctor --json`` does.

    >>> report = tensorbridge.doctor()
    >>> [b.backend for b in report.backends][:2]
    ['cpu', 'cuda']
    >>> report.to_dict()["backends"][0]["available"]
    True
    """
    listing = _discover()
    backends = tuple(BackendReport._from_json(b) for b in listing["backends"])
    selected: Optional[Selection] = None
    selected_error = ""
    try:
        selected = _selection(json.loads(_tb.select_json("auto")))
    except TensorBridgeError as e:
        selected_error = e.message
    env = os.environ.get("TB_BACKEND", "")
    tb_backend: Optional[Dict[str, Any]] = None
    if env:
        try:
            picked = json.loads(_tb.select_json(None))["selected"]["device"]  # None: as TB_BACKEND is read
            tb_backend = {"request": env, "selected": picked, "error": ""}
        except TensorBridgeError as e:
            tb_backend = {"request": env, "selected": None, "error": e.message}
    todo: List[Dict[str, str]] = []
    seen = set()

    def add(about: str, fix: str) -> None:
        if fix and fix not in seen:
            seen.add(fix)
            todo.append({"about": about, "fix": fix})

    by_backend: Dict[str, List[Dict[str, Any]]] = {}
    for d in listing["devices"]:
        by_backend.setdefault(d["backend"], []).append(d)
    for b in backends:
        add(b.backend, b.fix)
        for d in by_backend.get(b.backend, []):
            if not d["usable"]:
                add(b.backend, d["fix"])
    if tb_backend and tb_backend["error"]:
        add("TB_BACKEND", tb_backend["error"])
    return DoctorReport(version=listing["tensorbridge_version"], backends=backends, selected=selected,
                        selected_error=selected_error, tb_backend=tb_backend, todo=tuple(todo))
