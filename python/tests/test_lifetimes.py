"""Lifetimes: objects outliving the ones they came from, interpreter exit with objects alive, and no leaks
(tracemalloc for Python memory; the module's live-handle counters and the allocator's counters for ours)."""
import gc
import subprocess
import sys
import tracemalloc

import numpy as np

import onnx_build
import tensorbridge as tb
from tensorbridge import _tb


def test_prepared_outlives_model_and_backend():
    model = tb.load(onnx_build.relu((4,)))
    backend = tb.Backend("cpu")
    p, _ = model.prepare(backend)
    model.close()
    backend.close()
    del model, backend
    gc.collect()
    np.testing.assert_array_equal(p.run({"x": np.array([-1, 1, -2, 2], np.float32)})["y"], [0, 1, 0, 2])


def test_tensors_outlive_their_backend_and_prepared_model():
    b = tb.Backend("cpu")
    t = b.tensor(np.arange(3, dtype=np.float32))
    p, _ = tb.load(onnx_build.relu((3,))).prepare(b)
    y = p.run({"x": np.array([-1, 0, 1], np.float32)})["y"]
    b.close()
    p.close()
    del p
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2])
    np.testing.assert_array_equal(y, [0, 0, 1])


def test_no_leak_over_many_runs():
    before = dict(_tb.live_objects())
    b = tb.Backend("cpu")
    p, _ = tb.load(onnx_build.two_outputs((256,))).prepare(b)
    x = np.random.default_rng(0).standard_normal(256).astype(np.float32)
    for _ in range(50):
        p.run({"x": x})
    tracemalloc.start()
    gc.collect()
    start, _ = tracemalloc.get_traced_memory()
    for _ in range(2000):
        p.run({"x": x})
        p.run({"x": x}, as_numpy=False)
    gc.collect()
    end, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert end - start < 64 * 1024, f"Python memory grew by {end - start} bytes over 4000 runs"
    stats = b.memory_stats()
    assert stats["num_allocs"] - stats["num_frees"] <= 4  # the prepared model's own buffers only
    assert _tb.live_objects()["tensors"] == before["tensors"]
    assert _tb.live_objects()["imports"] == before["imports"]
    del p, b
    gc.collect()
    assert _tb.live_objects() == before


def test_interpreter_exit_with_objects_alive():
    code = (
        "import numpy as np, tensorbridge as tb, sys\n"
        "sys.path.insert(0, %r)\n"
        "import onnx_build\n"
        "b = tb.Backend('cpu')\n"
        "p, r = tb.load(onnx_build.relu((3,))).prepare(b)\n"
        "x = np.array([-1, 0, 1], np.float32)\n"
        "t = tb.from_dlpack(x)\n"
        "y = p.run({'x': x}, as_numpy=False)\n"
        "cycle = [p, b, t, y]; cycle.append(cycle)\n"
        "print('alive', y['y'].numpy().tolist())\n"
    ) % (str(__import__("pathlib").Path(__file__).parent),)
    out = subprocess.run([sys.executable, "-X", "dev", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "alive [0.0, 0.0, 1.0]"
    assert out.stderr == ""


def test_close_is_refused_while_another_thread_uses_the_handle(cnn_path):
    import threading
    import time

    import pytest
    b = tb.Backend("cpu")
    m = tb.load(cnn_path)
    p, _ = m.prepare(b, threads=1)
    x = {"input": np.zeros((1, 3, 32, 32), np.float32)}
    started = threading.Event()

    def work() -> None:
        started.set()
        p._h.time_runs(x, 0, 20000, b._h)  # seconds of runs, each followed by b's synchronize, GIL released
    t = threading.Thread(target=work)
    t.start()
    started.wait()
    time.sleep(0.05)
    assert t.is_alive()
    with pytest.raises(tb.InvalidArgumentError, match="Backend.close\\(\\): another thread is using it"):
        b.close()
    t.join()
    b.close()  # free again once the call returned
    assert b.closed
