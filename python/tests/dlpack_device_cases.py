"""The cases of test_dlpack_device.py, each run in a child process (``python dlpack_device_cases.py CASE``) whose
environment points the library at a recorded GPU machine and the fake CUDA or HIP runtime of the CI build
(tests/fakes). A producer written here stands in for PyTorch: ``__dlpack_device__`` and ``__dlpack__(stream=...)``
over device memory the fake runtime hands out, returned as a ``dltensor_versioned`` capsule built with ctypes,
with a deleter that counts its calls and frees the memory. The fake's device pointers are host addresses with a
tag in the top bits, so the bytes behind them can be read and written here as a kernel would."""
from __future__ import annotations

import ctypes
import os
import sys
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

import tensorbridge

TAG = 0xD1CE000000000000  # tests/fakes/fake_devmem.h
kDLCPU, kDLCUDA, kDLROCM, kDLCUDAManaged = 1, 2, 10, 13


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


CAPSULE_NAME = b"dltensor_versioned"
DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
api = ctypes.pythonapi
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, DESTRUCTOR]
api.PyCapsule_IsValid.restype = ctypes.c_int
api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
capsule_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_IsValid", api))
capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(("PyCapsule_GetPointer", api))


@DESTRUCTOR
def free_unconsumed(capsule: int) -> None:
    """A producer's capsule destructor: a capsule nobody consumed still owns its tensor."""
    if capsule_valid(capsule, CAPSULE_NAME):
        m = ctypes.cast(capsule_pointer(capsule, CAPSULE_NAME), ctypes.POINTER(DLManagedTensorVersioned))
        m.contents.deleter(ctypes.addressof(m.contents))


class Fake:
    """The fake runtime's test exports: allocate as another library would, free."""

    def __init__(self, vendor: str) -> None:
        self.lib = ctypes.CDLL(os.environ["TB_CUDA_LIB" if vendor == "cuda" else "TB_HIP_LIB"])
        self.alloc_on = getattr(self.lib, f"fake_{vendor}_alloc_on")
        self.alloc_on.restype = ctypes.c_ulonglong
        self.alloc_on.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
        self.free = getattr(self.lib, f"fake_{vendor}_free")
        self.free.argtypes = [ctypes.c_ulonglong]


def host_address(device_pointer: int) -> int:
    assert device_pointer & 0xFFFF000000000000 == TAG, hex(device_pointer)
    return device_pointer & ~TAG


class Producer:
    """A float32 tensor in device memory, exported the way PyTorch exports a CUDA tensor."""

    def __init__(self, fake: Fake, values: "np.ndarray[Any, Any]", device: Tuple[int, int], on: int,
                 managed: bool = False) -> None:
        self.fake, self.device = fake, device
        self.values = np.ascontiguousarray(values, dtype=np.float32)
        self.ptr = fake.alloc_on(on, self.values.nbytes, int(managed))
        assert self.ptr
        ctypes.memmove(host_address(self.ptr), self.values.ctypes.data, self.values.nbytes)
        self.streams: List[Any] = []
        self.deleted = 0
        self.keep: List[Any] = []

    def __dlpack_device__(self) -> Tuple[int, int]:
        return self.device

    def __dlpack__(self, stream: Any = None, max_version: Optional[Tuple[int, int]] = None,
                   dl_device: Any = None, copy: Optional[bool] = None) -> Any:
        self.streams.append(stream)
        shape = (ctypes.c_int64 * self.values.ndim)(*self.values.shape)

        def delete(_: int) -> None:
            self.deleted += 1
            self.fake.free(self.ptr)

        deleter = DELETER(delete)
        m = DLManagedTensorVersioned()
        m.version.major, m.version.minor = 1, 1
        m.deleter = deleter
        m.dl_tensor.data = self.ptr
        m.dl_tensor.device = DLDevice(*self.device)
        m.dl_tensor.ndim = self.values.ndim
        m.dl_tensor.dtype = DLDataType(2, 32, 1)
        m.dl_tensor.shape = shape
        self.keep += [shape, deleter, m]
        return api.PyCapsule_New(ctypes.addressof(m), CAPSULE_NAME, free_unconsumed)


def exported(tensor: Any, **kwargs: Any) -> Tuple[Any, DLManagedTensorVersioned]:
    """A consumer: the capsule of tensor.__dlpack__ and the managed tensor in it (valid while the capsule lives)."""
    capsule = tensor.__dlpack__(max_version=(1, 1), **kwargs)
    m = ctypes.cast(api.PyCapsule_GetPointer(capsule, CAPSULE_NAME), ctypes.POINTER(DLManagedTensorVersioned))
    return capsule, m.contents


def read_device(m: DLManagedTensorVersioned) -> "np.ndarray[Any, Any]":
    dl = m.dl_tensor
    shape = tuple(dl.shape[i] for i in range(dl.ndim))
    n = int(np.prod(shape))
    out = np.empty(shape, np.float32)
    ctypes.memmove(out.ctypes.data, host_address(dl.data + dl.byte_offset), n * 4)
    return out


def relu_model() -> tensorbridge.Model:
    sys.path.insert(0, os.path.dirname(__file__))
    import onnx_build
    return tensorbridge.load(onnx_build.relu((3, 4)))


def expect(error: type, needle: str, fn: Callable[[], Any]) -> str:
    try:
        fn()
    except error as e:
        assert needle in str(e), f"expected {needle!r} in {str(e)!r}"
        return str(e)
    raise AssertionError(f"expected {error.__name__} with {needle!r}")


VALUES = np.arange(-6, 6, dtype=np.float32).reshape(3, 4) * 0.5


def run_in_place(vendor: str) -> None:
    """prepared.run on a device backend takes the producer's memory in place with the protocol's stream; the
    output exports as the device's DLPack type over device memory; the deleter runs once."""
    fake = Fake(vendor)
    dl_type, device, stream = (kDLCUDA, "cuda:1", 1) if vendor == "cuda" else (kDLROCM, "rocm:1", 0)
    backend = tensorbridge.Backend(device)
    prepared, _ = relu_model().prepare(backend)
    x = Producer(fake, VALUES, (dl_type, 1), on=1)
    out = prepared.run({"x": x}, as_numpy=False)["y"]
    assert x.streams == [stream], x.streams
    assert x.deleted == 1  # the run's view went with the run
    assert out.device == device and not out.is_host
    assert out.__dlpack_device__() == (dl_type, 1)
    capsule, m = exported(out, stream=stream)
    assert m.dl_tensor.device.device_type == dl_type and m.dl_tensor.device.device_id == 1
    np.testing.assert_array_equal(read_device(m), np.maximum(VALUES, 0))
    np.testing.assert_array_equal(out.numpy(), np.maximum(VALUES, 0))
    np.testing.assert_array_equal(prepared.run({"x": Producer(fake, VALUES, (dl_type, 1), on=1)})["y"],
                                  np.maximum(VALUES, 0))
    del capsule
    # no stream synchronization asked (-1), and the ones DLPack forbids
    exported(out, stream=-1)
    expect(tensorbridge.InvalidArgumentError, "DLPack does not allow that stream",
           lambda: out.__dlpack__(stream=0 if vendor == "cuda" else 1))
    expect(tensorbridge.UnsupportedError, "exported in place, never copied",
           lambda: out.__dlpack__(dl_device=(kDLCPU, 0)))
    print("ok")


def from_dlpack_shares(vendor: str) -> None:
    """from_dlpack: the tensor's data pointer is the producer's, on the given backend or one opened for the
    device; the producer's deleter runs when the last of the tensor and its exports goes."""
    fake = Fake(vendor)
    dl_type, device = (kDLCUDA, "cuda:1") if vendor == "cuda" else (kDLROCM, "rocm:1")
    backend = tensorbridge.Backend(device)
    for given in (backend, None):
        x = Producer(fake, VALUES, (dl_type, 1), on=1)
        t = tensorbridge.from_dlpack(x, given)
        assert t.device == device and t.shape == (3, 4) and t.dtype == "f32"
        capsule, m = exported(t)
        assert m.dl_tensor.data + m.dl_tensor.byte_offset == x.ptr  # data_ptr equality: no copy
        np.testing.assert_array_equal(t.numpy(), VALUES)
        del capsule
        assert x.deleted == 0
        del t
        assert x.deleted == 1
    # Backend.tensor, a copy: read in place on its own device, or from a backend opened for the object's
    x = Producer(fake, VALUES, (dl_type, 1), on=1)
    copy = backend.tensor(x)
    assert x.deleted == 1 and copy.device == device
    np.testing.assert_array_equal(copy.numpy(), VALUES)
    x = Producer(fake, VALUES, (dl_type, 2), on=2)
    host = tensorbridge.Backend("cpu").tensor(x)
    assert x.deleted == 1 and host.is_host and x.streams == [1 if vendor == "cuda" else 0]
    np.testing.assert_array_equal(host.numpy(), VALUES)
    print("ok")


def wrong_devices(vendor: str) -> None:
    """Each mismatch raises the library's sentence with the right class; the producer's tensor is freed once
    (by its capsule, which nobody consumed)."""
    fake = Fake(vendor)
    dl_type, device, name = (kDLCUDA, "cuda:1", "kDLCUDA") if vendor == "cuda" else (kDLROCM, "rocm:1", "kDLROCM")
    prepared, _ = relu_model().prepare(tensorbridge.Backend(device))
    cases = [((dl_type, 2), 2, tensorbridge.InvalidArgumentError,
              f"dl_tensor.device is {name}:2 but the backend is {device} (device 1)"),
             ((dl_type, 1), 3, tensorbridge.InvalidArgumentError,
              f"is memory of {'CUDA' if vendor == 'cuda' else 'HIP'} device 3, not of this backend's device 1")]
    for dev, on, error, needle in cases:
        x = Producer(fake, VALUES, dev, on=on)
        expect(error, needle, lambda: prepared.run({"x": x}))
        assert x.deleted == 1, x.deleted
    other, other_name = (kDLROCM, "kDLROCM") if vendor == "cuda" else (kDLCUDA, "kDLCUDA")
    x = Producer(fake, VALUES, (other, 1), on=1)  # the other vendor's type: asked with the producer's default stream
    expect(tensorbridge.InvalidArgumentError, f"device_type is {other} ({other_name}) but the backend is {device}",
           lambda: prepared.run({"x": x}))
    assert x.streams == [None] and x.deleted == 1
    cpu_prepared, _ = relu_model().prepare(tensorbridge.Backend("cpu"))
    x = Producer(fake, VALUES, (dl_type, 1), on=1)
    expect(tensorbridge.UnsupportedError, "memory the CPU backend cannot address", lambda: cpu_prepared.run({"x": x}))
    assert x.streams == [None] and x.deleted == 1
    x = Producer(fake, VALUES, (7, 0), on=1)  # kDLVulkan
    expect(tensorbridge.UnsupportedError, "a DLPack tensor on device type 7, id 0", lambda: prepared.run({"x": x}))
    assert x.streams == []
    fake.free(x.ptr)
    print("ok")


def managed(vendor: str) -> None:
    """kDLCUDAManaged memory (allocated on another device: it migrates) runs in place on cuda:1."""
    fake = Fake(vendor)
    prepared, _ = relu_model().prepare(tensorbridge.Backend("cuda:1"))
    x = Producer(fake, VALUES, (kDLCUDAManaged, 1), on=4, managed=True)
    np.testing.assert_array_equal(prepared.run({"x": x})["y"], np.maximum(VALUES, 0))
    assert x.streams == [1] and x.deleted == 1
    x = Producer(fake, VALUES, (kDLCUDAManaged, 1), on=1)
    expect(tensorbridge.InvalidArgumentError, "is not managed memory", lambda: prepared.run({"x": x}))
    print("ok")


if __name__ == "__main__":
    globals()[sys.argv[1]](sys.argv[2])
