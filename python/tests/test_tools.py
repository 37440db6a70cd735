"""validate, bench, amp_policy, ort_providers and safetensors: values and every error."""
import json
import subprocess

import numpy as np
import pytest

import onnx_build
import tensorbridge as tb


def test_validate_passes_and_reports(cnn_path):
    report = tb.validate(cnn_path, backends=["cpu"], levels=["O0", "O1", "O2", "O3"], precision="fp32", seed=3)
    assert (report.passed, report.total, report.ok) == (4, 4, True)
    assert [c["level"] for c in report.configurations] == ["O0", "O1", "O2", "O3"]
    assert report.to_dict()["seed"] == 3
    assert report.configurations[0]["outputs"][0]["name"] == "probs"


def test_validate_matches_cli(cnn_path, tb_cli):
    cli = json.loads(subprocess.run([str(tb_cli), "validate", str(cnn_path), "--backends", "cpu", "--levels",
                                     "O0,O2", "--json"], capture_output=True, text=True).stdout)
    ours = tb.validate(tb.load(cnn_path), backends=["cpu"], levels=["O0", "O2"]).to_dict()
    strip = lambda d: [{k: v for k, v in c.items() if k not in ("outputs",)} for c in d["configurations"]]  # noqa: E731
    assert strip(ours) == strip(cli) and ours["model_sha256"] == cli["model_sha256"]


def test_validate_with_given_inputs_and_tolerance():
    x = np.array([[-1, 2, -3, 4], [5, -6, 7, -8], [0, 0, 1, 1]], np.float32)
    report = tb.validate(onnx_build.relu((3, 4)), inputs={"x": x}, levels=["O2"], rtol=0.0, atol=0.0)
    assert report.ok and report.configurations[0]["tolerance"]["rtol"] == 0


def test_validate_errors(relu_path):
    with pytest.raises(tb.NotFoundError, match="O9"):
        tb.validate(relu_path, levels=["O9"])
    with pytest.raises(tb.InvalidArgumentError, match="rtol/atol: give both"):
        tb.validate(relu_path, rtol=0.1)
    with pytest.raises(tb.InvalidArgumentError, match="nosuch"):
        tb.validate(relu_path, inputs={"nosuch": np.zeros((3, 4), np.float32)})
    with pytest.raises(tb.InvalidArgumentError, match="backends: item 0 is a int"):
        tb.validate(relu_path, backends=[0])  # type: ignore[list-item]
    report = tb.validate(relu_path, backends=["nosuch"], levels=["O0"])
    assert report.passed == 0 and "'nosuch' is not a backend" in report.configurations[0]["error"]
    with pytest.raises(tb.TensorBridgeError, match="missing.safetensors"):
        tb.replay(relu_path.parent / "missing.safetensors")


def test_bench(relu_path):
    r = tb.bench(relu_path, "cpu", level="O1", warmup=2, iterations=7)
    assert r.device == "cpu:0" and r.level == "O1" and r.iterations == 7 and len(r.samples_ms) == 7
    s = sorted(r.samples_ms)
    assert r.min_ms == s[0] and r.median_ms == s[3] and r.p10_ms <= r.median_ms <= r.p90_ms <= s[-1]
    assert r.mean_ms == pytest.approx(sum(s) / 7) and r.inferences_per_s == pytest.approx(1000 / r.median_ms)
    assert r.prepare_ms > 0 and r.device_peak_reserved_bytes > 0 and r.to_dict()["iterations"] == 7
    with pytest.raises(tb.InvalidArgumentError, match="iterations 0 / warmup 3"):
        tb.bench(relu_path, "cpu", iterations=0)


def test_amp_policy():
    cpu = tb.select("cpu").device
    p = tb.amp_policy(cpu)
    assert p.device == "cpu:0" and p.reason
    assert p.dtype == ("bf16" if "avx512bf16" in cpu.features or "amx_bf16" in cpu.features else "f32")
    assert p.enabled == (p.dtype != "f32") and not p.use_grad_scaler
    with pytest.raises(tb.NotFoundError):
        tb.amp_policy("nosuch")


def test_ort_providers():
    assert tb.ort_providers("cpu", []) == ["CPUExecutionProvider"]
    assert tb.ort_providers("auto", ["CUDAExecutionProvider", "CPUExecutionProvider"])[-1] == "CPUExecutionProvider"
    with pytest.raises(tb.UnavailableError, match="CUDAExecutionProvider"):
        tb.ort_providers("cuda", ["CPUExecutionProvider"])
    with pytest.raises(tb.UnsupportedError):
        tb.ort_providers("vulkan", [])
    with pytest.raises(tb.NotFoundError):
        tb.ort_providers("nosuch", [])
    with pytest.raises(tb.InvalidArgumentError, match="available\\[0\\]: expected a provider name"):
        tb.ort_providers("cpu", [1])  # type: ignore[list-item]
    ort = pytest.importorskip("onnxruntime")
    assert tb.ort_providers("cpu") == ["CPUExecutionProvider"]
    sess = ort.InferenceSession(onnx_build.relu((2,)), providers=tb.ort_providers("auto"))
    assert sess.run(None, {"x": np.array([-1, 1], np.float32)})[0].tolist() == [0, 1]


def test_safetensors_round_trip_every_numpy_dtype(tmp_path):
    arrays = {f"t_{np.dtype(d).name}": (np.arange(12) % 5).astype(d).reshape(3, 4)
              for d in (np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)}
    arrays["scalar"] = np.array(3.5, np.float32)
    arrays["strided"] = np.arange(20, dtype=np.float32).reshape(4, 5)[:, ::2]
    path = tmp_path / "a.safetensors"
    tb.save_safetensors(arrays, path, {"epoch": "3", "note": "é"})
    back = tb.load_safetensors(path)
    assert sorted(back) == sorted(arrays)
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
    assert tb.safetensors_metadata(path) == {"epoch": "3", "note": "é"}
    data = path.read_bytes()
    assert sorted(tb.load_safetensors(data)) == sorted(arrays)
    header_len = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + header_len])
    assert list(header)[0] == "__metadata__" and sorted(list(header)[1:]) == sorted(arrays)
    offsets = [header[k]["data_offsets"] for k in list(header)[1:]]
    assert offsets[0][0] == 0 and all(a[1] == b[0] for a, b in zip(offsets, offsets[1:]))  # packed in header order


def test_safetensors_bf16_stays_a_tensor(tmp_path):
    t = tb.Backend("cpu").random((4,), "bf16", seed=1)
    tb.save_safetensors({"w": t}, tmp_path / "b.safetensors")
    back = tb.load_safetensors(tmp_path / "b.safetensors")["w"]
    assert isinstance(back, tb.Tensor) and back.dtype == "bf16" and back.tobytes() == t.tobytes()


def test_safetensors_errors(tmp_path):
    with pytest.raises(tb.ModelError):
        tb.load_safetensors(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json}      ")
    with pytest.raises(tb.TensorBridgeError, match="missing.safetensors"):
        tb.load_safetensors(tmp_path / "missing.safetensors")
    with pytest.raises(tb.InvalidArgumentError, match="metadata: keys and values must be str"):
        tb.save_safetensors({"a": np.zeros(2)}, tmp_path / "x.safetensors", {"k": 1})  # type: ignore[dict-item]
    with pytest.raises(tb.InvalidArgumentError, match="tensor 'a': a str is neither"):
        tb.save_safetensors({"a": "text"}, tmp_path / "x.safetensors")
    with pytest.raises(tb.InvalidArgumentError):
        tb.save_safetensors({"": np.zeros(2)}, tmp_path / "x.safetensors")
    with pytest.raises(tb.TensorBridgeError):
        tb.save_safetensors({"a": np.zeros(2)}, tmp_path / "no" / "dir" / "x.safetensors")
    assert not (tmp_path / "x.safetensors").exists()
