"""load / prepare / run: values against NumPy and onnxruntime, every level, and every error with its sentence."""
import hashlib
import os
import re

import numpy as np
import pytest

import onnx_build
import tensorbridge as tb


def test_load_path_pathlike_bytes(relu_path):
    for source in (relu_path, str(relu_path), relu_path.read_bytes(), bytearray(relu_path.read_bytes())):
        m = tb.load(source)
        assert [(i.name, i.dtype, i.shape) for i in m.inputs] == [("x", "f32", (3, 4))]
        assert [o.name for o in m.outputs] == ["y"]
    assert m.sha256 == hashlib.sha256(relu_path.read_bytes()).hexdigest()
    assert m.property("nodes") == "1" and m.property("opset") == "17"
    assert m.property("producer") == "tensorbridge-tests" and m.property("no such key") is None


def test_symbolic_dims_are_named():
    m = tb.load(onnx_build.add(("batch", 3)))
    assert m.inputs[0].shape == ("batch", 3) and m.inputs[0].has_shape


def test_load_errors(tmp_path):
    with pytest.raises(tb.ModelError) as info:
        tb.load(b"not a model")
    assert info.value.status == 6 and info.value.message
    with pytest.raises(tb.TensorBridgeError) as info:
        tb.load(tmp_path / "missing.onnx")
    assert "missing.onnx" in info.value.message
    with pytest.raises(tb.InvalidArgumentError, match="source: expected a path or bytes, got a int"):
        tb.load(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "O3"])
def test_prepare_levels_and_run_cnn_against_onnxruntime(cnn_path, level):
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    prepared, result = tb.load(cnn_path).prepare("cpu", level=level, precision="fp32", threads=1)
    assert result.success and result.level == level and result.precision == "fp32"
    assert result.metrics["nodes_before"] == 15
    out = prepared.run({"input": x})
    ref = ort.InferenceSession(str(cnn_path), providers=tb.ort_providers("cpu")).run(None, {"input": x})[0]
    np.testing.assert_allclose(out["probs"], ref, rtol=1e-4, atol=1e-5)
    assert result.to_dict()["level"] == level


def test_o3_says_each_nodes_precision_and_why(cnn_path):
    x = np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype(np.float32)
    ref, _ = tb.load(cnn_path).prepare("cpu", level="O0", threads=1)
    prepared, result = tb.load(cnn_path).prepare("cpu", level="O3", threads=1)
    choices = result.precision_choices
    assert len(choices) == result.metrics["nodes_after"]
    assert all(re.fullmatch(r".+ \(.*\): (bf16|fp32): .+", c) for c in choices), choices
    # the nodes the result says run bf16 are exactly those the choices say won their trial
    bf16_nodes = [c.split(": bf16", 1)[0] for c in choices if ": bf16: " in c]
    assert sorted(bf16_nodes) == sorted(n.rsplit(": ", 1)[0] for n in result.metrics["node_precisions"])
    assert result.precision == ("bf16" if bf16_nodes else "fp32")
    np.testing.assert_allclose(prepared.run({"input": x})["probs"], ref.run({"input": x})["probs"], rtol=1e-2, atol=1e-2)
    _, o2 = tb.load(cnn_path).prepare("cpu", level="O2", threads=1)
    assert o2.precision_choices == ()


@pytest.mark.parametrize("algo", ["default", "auto", "winograd", "direct", "GEMM"])
def test_conv_algo_gives_the_same_outputs(cnn_path, algo):
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    ref, _ = tb.load(cnn_path).prepare("cpu", level="O0", threads=1)
    prepared, result = tb.load(cnn_path).prepare("cpu", level="O2", precision="fp32", threads=1, conv_algo=algo)
    assert result.success
    np.testing.assert_allclose(prepared.run({"input": x})["probs"], ref.run({"input": x})["probs"], rtol=1e-4, atol=1e-5)


def test_run_values_outputs_and_tensors():
    prepared, _ = tb.load(onnx_build.two_outputs((4,))).prepare(tb.Backend("cpu"))
    x = np.array([-1, 2, -3, 4], np.float32)
    out = prepared.run({"x": x})
    assert list(out) == ["r", "n"] and prepared.output_names == ("r", "n")
    np.testing.assert_array_equal(out["r"], np.maximum(x, 0))
    np.testing.assert_array_equal(out["n"], -x)
    only = prepared.run({"x": x}, outputs=["n"])
    assert list(only) == ["n"]
    ts = prepared.run({"x": x}, as_numpy=False)
    assert isinstance(ts["r"], tb.Tensor) and ts["r"].shape == (4,) and ts["r"].dtype == "f32"
    assert ts["r"].device == "cpu:0" and ts["r"].is_host and ts["r"].nbytes == 16
    assert ts["r"].tobytes() == np.maximum(x, 0).tobytes()


def test_dims_bound_at_prepare_and_at_run():
    m = tb.load(onnx_build.add(("batch", 3)))
    p, _ = m.prepare("cpu", dims={"batch": 2})
    a = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(p.run({"x": a, "y": a})["z"], a * 2)
    p2, _ = m.prepare("cpu")
    b = np.ones((5, 3), np.float32)
    np.testing.assert_array_equal(p2.run({"x": b, "y": b})["z"], b * 2)


def test_every_dtype_through_relu():
    for dtype, np_dtype in (("f32", np.float32), ("f64", np.float64), ("f16", np.float16), ("i32", np.int32),
                            ("i64", np.int64), ("i8", np.int8)):
        p, _ = tb.load(onnx_build.relu((5,), dtype)).prepare("cpu", level="O0")
        x = np.array([-2, -1, 0, 1, 2], np_dtype)
        y = p.run({"x": x})["y"]
        assert y.dtype == np_dtype
        np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_prepare_errors(relu_path):
    m = tb.load(relu_path)
    with pytest.raises(tb.NotFoundError, match="O7"):
        m.prepare("cpu", level="O7")
    with pytest.raises(tb.TensorBridgeError, match="fp12"):
        m.prepare("cpu", precision="fp12")
    with pytest.raises(tb.InvalidArgumentError, match="threads: 0 is not a count >= 1"):
        m.prepare("cpu", threads=0)
    with pytest.raises(tb.NotFoundError, match="unknown convolution algorithm 'fft'; valid ones are default, auto"):
        m.prepare("cpu", conv_algo="fft")
    with pytest.raises(tb.InvalidArgumentError, match="expected a tensorbridge.Backend or a request"):
        m.prepare(3.5)  # type: ignore[arg-type]
    with pytest.raises(tb.InvalidArgumentError, match="dims: expected {name: size} with str names and int sizes"):
        m.prepare("cpu", dims={"batch": "two"})  # type: ignore[dict-item]
    b = tb.Backend("cpu")
    b.close()
    with pytest.raises(tb.InvalidArgumentError, match="this Backend was closed"):
        m.prepare(b)
    m.close()
    with pytest.raises(tb.InvalidArgumentError, match="this Model was closed"):
        m.prepare("cpu")
    with pytest.raises(tb.InvalidArgumentError, match="this Model was closed"):
        m.inputs


def test_run_errors(relu_path):
    p, _ = tb.load(relu_path).prepare("cpu")
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(tb.InvalidArgumentError) as info:
        p.run({"nope": x})
    assert "nope" in info.value.message
    with pytest.raises(tb.InvalidArgumentError) as info:
        p.run({"x": np.zeros((3, 4), np.int32)})
    assert "'x'" in info.value.message and "i32" in info.value.message and "f32" in info.value.message
    with pytest.raises(tb.InvalidArgumentError) as info:
        p.run({"x": np.zeros((2, 4), np.float32)})
    assert "'x'" in info.value.message
    with pytest.raises(tb.InvalidArgumentError, match="inputs: expected a dict"):
        p.run([x])  # type: ignore[arg-type]
    with pytest.raises(tb.InvalidArgumentError, match="inputs: a key is a int"):
        p.run({1: x})  # type: ignore[dict-item]
    with pytest.raises(tb.InvalidArgumentError, match="input 'x': a list is neither"):
        p.run({"x": [[0.0] * 4] * 3})
    with pytest.raises(tb.UnsupportedError, match="input 'x': element format 'Zf'"):
        p.run({"x": np.zeros((3, 4), np.complex64)})
    with pytest.raises(tb.InvalidArgumentError, match="outputs\\[0\\]: a int"):
        p.run({"x": x}, outputs=[0])  # type: ignore[list-item]
    with pytest.raises(tb.InvalidArgumentError, match="nosuch"):
        p.run({"x": x}, outputs=["nosuch"])
    p.close()
    with pytest.raises(tb.InvalidArgumentError, match="prepared model: it was closed"):
        p.run({"x": x})
    p.close()


def test_weights_export_and_override(cnn_path, tmp_path):
    m = tb.load(cnn_path)
    path = tmp_path / "w.safetensors"
    m.export_weights(path)
    weights = tb.load_safetensors(path)
    assert len(weights) == int(m.property("initializers"))
    assert tb.safetensors_metadata(path)["model_sha256"] == m.sha256
    zeroed = {k: np.zeros_like(v) for k, v in weights.items()}
    tb.save_safetensors(zeroed, tmp_path / "z.safetensors")
    assert m.override_weights(tmp_path / "z.safetensors") == len(weights)
    p, _ = m.prepare("cpu")
    probs = p.run({"input": np.ones((1, 3, 32, 32), np.float32)})["probs"]
    np.testing.assert_allclose(probs, np.full((1, 10), 0.1, np.float32), rtol=1e-6)  # softmax of zeros
    with pytest.raises(tb.TensorBridgeError) as info:
        m.override_weights(tmp_path / "missing.safetensors")
    assert "missing.safetensors" in info.value.message


def test_run_on_every_usable_device(cnn_path):
    x = np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)
    model = tb.load(cnn_path)
    ref = model.prepare("cpu", level="O0")[0].run({"input": x})["probs"]
    for d in tb.devices(usable_only=True):
        prepared, result = model.prepare(d.device, level="O2", precision="fp32", cpu_fallback=True)
        outs = prepared.run({"input": x}, as_numpy=False)
        assert outs["probs"].device == d.device
        np.testing.assert_allclose(outs["probs"].numpy(), ref, rtol=1e-3, atol=1e-4, err_msg=d.device)


def test_device_only_and_placements(relu_path):
    prepared, result = tb.load(relu_path).prepare("cpu", device_only=True)  # the CPU backend is the device
    assert [p["device"] for p in result.placements] == ["cpu:0"]
    assert result.placements[0]["reason"] == ""
    rnn = "/usr/share/libonnx-testdata/data/node/test_simple_rnn_defaults/model.onnx"  # RNN: no OpenCL kernel
    if not os.path.exists(rnn) or "opencl:0" not in [d.device for d in tb.devices(usable_only=True)]:
        pytest.skip("needs Debian's libonnx-testdata and an OpenCL device (PoCL)")
    model = tb.load(rnn)
    why = "no opencl kernel for RNN with inputs (f32, f32, f32); no other route reaches this device; ran on cpu:0"
    with pytest.raises(tb.UnsupportedError, match=r"^device_only: 1 of 1 nodes would fall back to the CPU from "
                                                  r"opencl:0: RNN \(#0\): " + re.escape(why)):
        model.prepare("opencl:0", device_only=True)
    _, result = model.prepare("opencl:0")
    assert result.placements == [{"node": "RNN (#0)", "device": "cpu:0", "reason": why}]
    assert result.metrics["fallback_ops"] == ["RNN (#0): " + why]
