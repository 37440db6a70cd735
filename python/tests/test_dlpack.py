"""NumPy and DLPack in and out: zero-copy where the memory is the host's, copies where it must be, every error."""
import ctypes

import numpy as np
import pytest

import onnx_build
import tensorbridge as tb

_name = ctypes.pythonapi.PyCapsule_GetName
_name.restype = ctypes.c_char_p
_name.argtypes = [ctypes.py_object]


def test_numpy_in_is_shared_not_copied():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tb.from_dlpack(x)
    x[1, 2] = 42.0
    assert t.numpy()[1, 2] == 42.0 and t.shape == (2, 3) and t.strides == (3, 1)


def test_tensor_out_to_numpy_is_shared():
    x = np.arange(4, dtype=np.float32)
    t = tb.from_dlpack(x)
    view = np.from_dlpack(t)
    x[0] = 7.0
    assert view[0] == 7.0 and view.dtype == np.float32
    mv = memoryview(t)
    assert mv.format == "f" and mv.shape == (4,) and not mv.readonly


def test_versioned_and_legacy_capsules():  # our export: both versions, whatever NumPy is installed
    t = tb.from_dlpack(np.ones(3, np.int64))
    assert _name(t.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"
    assert _name(t.__dlpack__()) == b"dltensor"
    assert t.__dlpack_device__() == (1, 0)
    with pytest.raises(tb.UnsupportedError, match="copy=True"):
        t.__dlpack__(copy=True)


class _LegacyProducer:
    """A DLPack producer from before 1.0: __dlpack__ takes no max_version."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class _VersionedProducer(_LegacyProducer):
    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.a.__dlpack__(max_version=max_version)


def _numpy_exports_versioned() -> bool:
    """NumPy 2.1+ writes DLPack 1.x capsules (and read-only arrays); older NumPy only the legacy ones."""
    try:
        np.zeros(1).__dlpack__(max_version=(1, 0))
        return True
    except TypeError:
        return False


VERSIONED = _numpy_exports_versioned()


def test_dlpack_objects_in():
    p, _ = tb.load(onnx_build.relu((2, 3))).prepare("cpu")
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    for producer in (_LegacyProducer(x), _VersionedProducer(x)) if VERSIONED else (_LegacyProducer(x),):
        np.testing.assert_array_equal(p.run({"x": producer})["y"], np.maximum(x, 0))
        t = tb.from_dlpack(producer)
        x[0, 0] = -9.0
        assert t.numpy()[0, 0] == -9.0  # shared
        x[0, 0] = -1.0


def test_read_only_and_strided_inputs():
    p, _ = tb.load(onnx_build.relu((2, 3))).prepare("cpu")
    base = np.arange(-6, 6, dtype=np.float32).reshape(2, 6)
    strided = base[:, ::2]
    np.testing.assert_array_equal(p.run({"x": strided})["y"], np.maximum(strided, 0))
    reversed_ = base[::-1, :3]
    np.testing.assert_array_equal(p.run({"x": reversed_})["y"], np.maximum(reversed_, 0))
    ro = np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), np.float32).reshape(2, 3)
    assert not ro.flags.writeable
    np.testing.assert_array_equal(p.run({"x": ro})["y"], ro)
    if VERSIONED:
        np.testing.assert_array_equal(p.run({"x": _VersionedProducer(ro)})["y"], ro)  # read-only DLPack: copied


def test_tensor_in_and_outputs_as_tensors_feed_the_next_run():
    p, _ = tb.load(onnx_build.relu((4,))).prepare("cpu")
    y = p.run({"x": np.array([-1, 1, -2, 2], np.float32)}, as_numpy=False)["y"]
    again = p.run({"x": y})["y"]
    np.testing.assert_array_equal(again, [0, 1, 0, 2])


def test_import_errors():
    with pytest.raises(tb.InvalidArgumentError, match="value: a dict is neither"):
        tb.from_dlpack({})
    with pytest.raises(tb.UnsupportedError, match="element format '>f'"):
        tb.from_dlpack(np.zeros(2, ">f4"))
    with pytest.raises(tb.UnsupportedError, match="format 'H'"):
        tb.from_dlpack(np.zeros(2, np.uint16))

    class OnVulkan(_VersionedProducer):
        def __dlpack_device__(self):
            return (7, 0)
    with pytest.raises(tb.UnsupportedError, match="device type 7, id 0; TensorBridge imports host memory \\(DLPack "
                       "device 1\\) and CUDA \\(2, 13\\) or ROCm \\(10\\) device memory"):
        tb.from_dlpack(OnVulkan(np.zeros(2, np.float32)))

    # CUDA memory goes on a backend of its device, opened for it: here one that no machine has
    # (test_dlpack_device.py imports device memory over the fake CUDA runtime).
    class OnGpu99(_VersionedProducer):
        def __dlpack_device__(self):
            return (2, 99)
    with pytest.raises(tb.TensorBridgeError, match="value: a DLPack tensor on cuda:99 needs the backend cuda:99: "):
        tb.from_dlpack(OnGpu99(np.zeros(2, np.float32)))

    class NotACapsule(_VersionedProducer):
        def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
            return 5
    with pytest.raises(tb.InvalidArgumentError, match="__dlpack__\\(\\) returned a int, not a DLPack capsule"):
        tb.from_dlpack(NotACapsule(np.zeros(2, np.float32)))


def test_bf16_has_no_numpy_type():
    t = tb.Backend("cpu").empty((2,), "bf16")
    with pytest.raises(tb.UnsupportedError, match="dtype bf16: the buffer protocol"):
        memoryview(t)
    assert _name(t.__dlpack__(max_version=(1, 0))) == b"dltensor_versioned"


def test_torch_round_trip():
    torch = pytest.importorskip("torch", reason="torch is in build/venv-torch only (Debian's python3-torch; "
                                                 "scripts/test_python.sh runs this file there too)")
    p, _ = tb.load(onnx_build.relu((2, 3))).prepare("cpu")
    x = torch.tensor([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]])
    out = p.run({"x": x}, as_numpy=False)["y"]
    y = torch.from_dlpack(out)
    assert torch.equal(y, torch.relu(x))
    t = tb.from_dlpack(x)
    x[0, 0] = 11.0
    assert t.numpy()[0, 0] == 11.0  # shared with torch
    bf = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    back = torch.from_dlpack(tb.from_dlpack(bf))
    assert back.dtype == torch.bfloat16 and torch.equal(back, bf)
