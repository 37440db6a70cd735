"""Events, profiling, the capability and tolerance tables, presets, compare and convert: values and errors."""
import numpy as np
import pytest

import tensorbridge as tb


def test_events_time_work_on_the_backend():
    b = tb.Backend("cpu")
    start, end = b.event(), b.event()
    with pytest.raises(tb.InvalidArgumentError):
        start.query()  # never recorded
    with pytest.raises(tb.InvalidArgumentError):
        start.elapsed_ms(end)
    start.record()
    b.tensor(np.ones(1 << 20, np.float32))
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    assert end.elapsed_ms(start) <= 0 <= start.elapsed_ms(end)
    with pytest.raises(tb.InvalidArgumentError, match="end: expected an Event"):
        start.elapsed_ms(3)  # type: ignore[arg-type]
    b.close()
    end.record()  # the event keeps its backend alive
    end.synchronize()


def test_profile_counts_runs_per_node(cnn_path):
    p, result = tb.load(cnn_path).prepare("cpu", level="O2")
    with pytest.raises(tb.InvalidArgumentError):
        p.profile()  # profiling off
    p.set_profiling(True)
    for _ in range(3):
        p.run({"input": np.zeros((1, 3, 32, 32), np.float32)})
    prof = p.profile()
    assert len(prof) == result.metrics["nodes_after"]
    assert all(e["runs"] == 3 and e["total_ms"] >= 0 and e["placement"] == "cpu" for e in prof)
    p.set_profiling(True)  # again: counts cleared
    assert all(e["runs"] == 0 for e in p.profile())


def test_capabilities_and_tolerances():
    rows = tb.capabilities()
    hopper = [r for r in rows if r["key"] == "sm_90"][0]
    assert hopper["vendor"] == "NVIDIA" and "bf16" in hopper["dtypes"] and "tensor_cores" in hopper["features"]
    table = tb.tolerance_table()
    assert len(table) >= 5 and all(e["source"] in ("measured", "assumed") for e in table)
    assert tb.tolerance("cpu", "fp32", "O0")["rtol"] == 0
    fallback = tb.tolerance("vulkan", "fp8", "O3")
    assert fallback["backend"] in ("any", "vulkan") and fallback["precision"] == "fp8"
    with pytest.raises(tb.InvalidArgumentError, match="AUTO|auto"):
        tb.tolerance("cpu", "auto", "O2")
    with pytest.raises(tb.InvalidArgumentError, match="'auto' is not a backend kind"):
        tb.tolerance("auto", "fp32", "O2")
    with pytest.raises(tb.NotFoundError):
        tb.tolerance("nosuch", "fp32", "O2")


def test_config_for_preset():
    c = tb.config_for_preset("inference", tb.select("cpu").device)
    assert c["device"] == "cpu:0" and c["preset"] == "inference" and 0 < c["memory_fraction"] <= 1 and c["rationale"]
    assert tb.config_for_preset("dev", "cpu")["preset"] == "development"
    with pytest.raises(tb.TensorBridgeError, match="nosuch"):
        tb.config_for_preset("nosuch", "cpu")
    with pytest.raises(tb.NotFoundError):
        tb.config_for_preset("inference", "nosuch")


def test_compare():
    ref = np.array([1.0, 2.0, 4.0], np.float32)
    same = tb.compare(ref, ref.copy(), rtol=0.0, atol=0.0)
    assert same["passed"] and same["max_abs_error"] == 0 and same["cosine"] == pytest.approx(1.0) and same["numel"] == 3
    off = tb.compare(np.array([1.0, np.nan, 4.5], np.float32), ref, rtol=0.0, atol=0.01)
    assert not off["passed"] and off["nan_got"] == 1 and off["max_abs_error"] == pytest.approx(0.5)
    shapes = tb.compare(np.zeros(2, np.float32), np.zeros(3, np.float32))
    assert not shapes["shape_matches"] and not shapes["passed"]
    with pytest.raises(tb.InvalidArgumentError, match="got: a list is neither"):
        tb.compare([1.0], ref)
    with pytest.raises(tb.InvalidArgumentError, match="ref: a str is neither"):
        tb.compare(ref, "ref")


def test_convert_follows_the_cast_rules():
    x = np.array([1.0, 1.00390625, -2.5, 1e6, np.nan], np.float32)
    bf = tb.convert(x, "bf16")
    assert bf.dtype == "bf16" and bf.shape == (5,)
    back = tb.convert(bf, "f32").numpy()
    assert back[0] == 1.0 and back[1] == 1.0 and back[2] == -2.5 and np.isnan(back[4])  # ties to even
    assert tb.convert(np.array([500.0], np.float32), "fp8_e4m3fn").tobytes() == b"\x7e"  # saturates at 448
    assert tb.convert(np.array([2.7, -2.7, np.nan], np.float32), "i32").numpy().tolist() == [2, -2, 0]
    assert tb.convert(np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2], "f64").numpy().tolist() == [[0, 2], [3, 5]]
    with pytest.raises(tb.NotFoundError):
        tb.convert(x, "f7")
