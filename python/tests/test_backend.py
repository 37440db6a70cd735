"""Backend: scopes, memory statistics in the library's schema, cache, limit, synchronize, errors."""
import numpy as np
import pytest

import tensorbridge as tb

STATS_KEYS = {"allocated_bytes", "requested_bytes", "reserved_bytes", "peak_allocated_bytes", "peak_reserved_bytes",
              "num_allocs", "num_frees", "num_device_allocs", "num_device_frees", "num_oom_retries", "limit_bytes",
              "device_free_bytes", "device_total_bytes"}


def test_memory_stats_schema_and_counts():
    b = tb.Backend("cpu")
    assert b.kind == "cpu" and b.device.device == "cpu:0"
    before = b.memory_stats()
    assert set(before) == STATS_KEYS
    t = b.empty((256, 256), "f32")
    during = b.memory_stats()
    assert during["allocated_bytes"] >= before["allocated_bytes"] + 256 * 256 * 4
    assert during["num_allocs"] == before["num_allocs"] + 1
    del t
    after = b.memory_stats()
    assert after["num_frees"] == before["num_frees"] + 1
    assert after["allocated_bytes"] == before["allocated_bytes"]
    assert after["reserved_bytes"] > 0  # the freed block stays cached
    b.empty_cache()
    assert b.memory_stats()["reserved_bytes"] == 0
    b.reset_peak_memory()
    assert b.memory_stats()["peak_reserved_bytes"] == 0


def test_context_manager_scope_releases_cache_at_the_end():
    with tb.Backend("cpu") as b:
        with b:
            del_me = b.empty((1024,), "f32")
            del del_me
        assert b.memory_stats()["reserved_bytes"] > 0  # inner scope: nothing released yet
    assert b.memory_stats()["reserved_bytes"] == 0


def test_memory_limit():
    b = tb.Backend("cpu", memory_fraction=0.5)
    total = b.memory_stats()["device_total_bytes"]
    assert b.memory_limit == pytest.approx(total * 0.5, rel=1e-6)
    assert tb.Backend("cpu").memory_limit is None
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(tb.InvalidArgumentError) as info:
            b.set_memory_fraction(bad)
        assert "fraction" in info.value.message


def test_limit_refuses_allocation_beyond_it():
    b = tb.Backend("cpu")
    total = b.memory_stats()["device_total_bytes"]
    b.set_memory_fraction(64 * 1024 * 1024 / total)
    with pytest.raises(tb.OutOfMemoryError) as info:
        b.empty((128 * 1024 * 1024,), "u8")
    assert info.value.status == 5


def test_synchronize_random_and_tensor_copy():
    b = tb.Backend("cpu")
    b.synchronize()
    r1, r2 = b.random((4, 4), "f32", seed=3), b.random((4, 4), "f32", seed=3)
    np.testing.assert_array_equal(r1.numpy(), r2.numpy())
    assert r1.numpy().min() >= -1 and r1.numpy().max() < 1
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = b.tensor(x)
    x[0, 0] = 99  # a copy: not shared
    assert t.numpy().tolist() == [[0, 1, 2], [3, 4, 5]] and t.dtype == "i32" and t.shape == (2, 3)


def test_other_backends_when_usable():
    for d in tb.devices(usable_only=True):
        if d.backend == "cpu":
            continue
        b = tb.Backend(d.device)
        t = b.tensor(np.arange(5, dtype=np.float32))
        assert not t.is_host and t.device == d.device
        np.testing.assert_array_equal(t.numpy(), np.arange(5, dtype=np.float32))
        with pytest.raises(tb.UnsupportedError, match="not host memory"):
            memoryview(t)
        b.synchronize()


def test_errors():
    with pytest.raises(tb.NotFoundError, match="'nosuch' is not a backend"):
        tb.Backend("nosuch")
    with pytest.raises(tb.InvalidArgumentError, match="request: expected a string"):
        tb.Backend(3)  # type: ignore[arg-type]
    b = tb.Backend("cpu")
    with pytest.raises(tb.InvalidArgumentError, match="dtype"):
        b.empty((2,), 5)  # type: ignore[arg-type]
    with pytest.raises(tb.NotFoundError):
        b.empty((2,), "complex")
    with pytest.raises(tb.InvalidArgumentError, match="at most 8"):
        b.empty((1,) * 9)
    with pytest.raises(tb.InvalidArgumentError):
        b.empty((-2,))
    with pytest.raises(tb.NotFoundError, match="no device cpu:5; cpu has 1 device"):
        b.set_device(5)
    b.close()
    assert b.closed and "closed" in repr(b)
    for call in (b.memory_stats, b.synchronize, b.empty_cache, lambda: b.device, lambda: b.empty((1,))):
        with pytest.raises(tb.InvalidArgumentError, match="this Backend was closed"):
            call()
    b.close()  # twice is fine


def test_default_request_reads_tb_backend(monkeypatch):
    monkeypatch.setenv("TB_BACKEND", "cpu")
    assert tb.Backend().device.device == "cpu:0"
    monkeypatch.setenv("TB_BACKEND", "nosuch")
    with pytest.raises(tb.NotFoundError, match="nosuch"):
        tb.Backend()
    assert tb.Backend("cpu").kind == "cpu"  # an explicit request does not read it
