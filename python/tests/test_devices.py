"""devices(), select(), doctor(): every field of the device info, the explanation, every error."""
import dataclasses
import json
import os
import subprocess

import pytest

import tensorbridge as tb


def test_devices_have_every_field_of_the_json(tb_cli):
    listing = json.loads(subprocess.run([str(tb_cli), "devices", "--json"], check=True, capture_output=True,
                                        text=True).stdout)
    # free memory changes between the two calls
    assert [stable_device(d.to_dict()) for d in tb.devices()] == [stable_device(d) for d in listing["devices"]]


def test_device_fields_and_types():
    cpu = [d for d in tb.devices() if d.backend == "cpu"][0]
    fields = {f.name for f in dataclasses.fields(tb.Device)}
    assert fields == {"device", "backend", "index", "name", "vendor", "type", "architecture", "arch_id",
                      "compute_capability", "usable", "reason", "fix", "compute_units", "memory_total_bytes",
                      "memory_free_bytes", "memory_type", "driver_version", "pci_bus_id", "uuid",
                      "capability_source", "physical_id", "dtypes", "features", "routes", "properties"}
    assert cpu.device == "cpu:0" and cpu.usable and cpu.reason == "" and cpu.type == "cpu"
    assert cpu.compute_units == os.cpu_count() or cpu.compute_units >= 1
    assert "f32" in cpu.dtypes and "avx2" in cpu.features
    assert cpu.memory_total_bytes and cpu.memory_total_bytes > 0
    d = cpu.to_dict()
    assert "compute_capability" not in d and d["dtypes"] == list(cpu.dtypes)
    assert all(d.usable for d in tb.devices(usable_only=True))


def test_select_cpu_explains():
    sel = tb.select("cpu")
    assert sel.device.device == "cpu:0" and sel.request == "cpu" and sel.source == "argument"
    assert sel.candidates[0].chosen and sel.candidates[0].rank == 1
    assert sel.explain().startswith("selected cpu:0")
    assert sel.to_dict()["selected"]["device"] == "cpu:0"


def test_select_none_reads_tb_backend(monkeypatch):
    monkeypatch.setenv("TB_BACKEND", "cpu")
    sel = tb.select(None)
    assert sel.source == "TB_BACKEND" and sel.device.backend == "cpu"


@pytest.mark.parametrize("request_, cls, start", [
    ("nosuch", tb.NotFoundError, "'nosuch' is not a backend"),
    ("cpu:7", tb.NotFoundError, "cpu:7"),
    ("cpu:x", tb.InvalidArgumentError, "cpu:x"),
    ("", tb.InvalidArgumentError, ""),
])
def test_select_errors(request_, cls, start):
    with pytest.raises(cls) as info:
        tb.select(request_)
    assert start in info.value.message and info.value.message


def test_select_unavailable_backend_names_reason():
    missing = [r.backend for r in tb.doctor().backends if not r.available]
    if not missing:
        pytest.skip("every backend is available here")
    with pytest.raises(tb.UnavailableError) as info:
        tb.select(missing[0])
    assert missing[0] in info.value.message.lower() or "no " in info.value.message


def test_select_rejects_non_string():
    with pytest.raises(tb.InvalidArgumentError, match="request: expected a string"):
        tb.select(3)  # type: ignore[arg-type]


def stable_device(d):
    props = {k: v for k, v in d["properties"].items() if k != "memory_available_bytes"}
    return d | {"memory_free_bytes": None, "properties": props}


def test_doctor_matches_cli(tb_cli, monkeypatch):
    monkeypatch.setenv("TB_BACKEND", "nosuch")
    cli = json.loads(subprocess.run([str(tb_cli), "doctor", "--json"], capture_output=True, text=True).stdout)
    ours = tb.doctor().to_dict()

    def stable(d):
        d = json.loads(json.dumps(d))
        for b in d["backends"]:
            b["checks"] = [c["what"] for c in b["checks"]]
        if d["selected"]:
            d["selected"]["selected"] = stable_device(d["selected"]["selected"])
        return d
    assert stable(ours) == stable(cli)
    assert ours["tb_backend"]["request"] == "nosuch" and ours["tb_backend"]["selected"] is None
    assert ours["todo"][-1]["about"] == "TB_BACKEND"
    assert "TensorBridge" in str(tb.doctor())
