"""Several prepared models run from several threads at once, with the GIL released during each run."""
import sys
import threading
import time

import numpy as np

import onnx_build
import tensorbridge as tb


def test_many_threads_many_prepared_models(cnn_path):
    model = tb.load(cnn_path)
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((1, 3, 32, 32)).astype(np.float32) for _ in range(4)]
    reference, _ = model.prepare("cpu", threads=1)
    expected = [reference.run({"input": x})["probs"] for x in inputs]
    prepared = [model.prepare("cpu", threads=1)[0] for _ in range(4)]
    errors = []

    def work(k: int) -> None:
        try:
            for _ in range(30):
                np.testing.assert_array_equal(prepared[k].run({"input": inputs[k]})["probs"], expected[k])
        except Exception as e:  # reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_one_prepared_model_shared_by_threads_is_serialized():
    p, _ = tb.load(onnx_build.relu((64,))).prepare("cpu")
    results = []

    def work(k: int) -> None:
        x = np.full(64, float(k) - 2.0, np.float32)
        for _ in range(200):
            results.append(bool(np.array_equal(p.run({"x": x})["y"], np.maximum(x, 0))))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 800 and all(results)


def test_gil_is_released_during_run():
    # With a switch interval of 10 s nothing takes the GIL from the main thread while it runs Python code;
    # the spinner gives it back at once (sleep(0)). So the counter can advance between the two reads only
    # while run() has released the GIL.
    p, _ = tb.load(onnx_build.relu((4096, 1024))).prepare("cpu", threads=1)
    x = np.random.default_rng(0).standard_normal((4096, 1024)).astype(np.float32)
    p.run({"x": x})
    count = [0]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)
    old = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    t.start()
    sys.setswitchinterval(10.0)
    try:
        time.sleep(0.01)
        before = count[0]
        deadline = time.monotonic() + 5.0  # well inside the switch interval
        runs = 0
        while count[0] == before and time.monotonic() < deadline:
            p.run({"x": x})
            runs += 1
        during = count[0] - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
    assert during > 0, f"no other thread ran during {runs} runs"
