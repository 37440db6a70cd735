"""Small ONNX models written byte by byte (protobuf wire format), so the tests need no onnx package."""
from __future__ import annotations

from typing import List, Sequence, Tuple, Union

ELEM = {"f32": 1, "u8": 2, "i8": 3, "i16": 5, "i32": 6, "i64": 7, "bool": 9, "f16": 10, "f64": 11, "bf16": 16}
Dim = Union[int, str]


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int(field: int, v: int) -> bytes:
    return _key(field, 0) + _varint(v)


def _bytes(field: int, v: Union[bytes, str]) -> bytes:
    data = v.encode() if isinstance(v, str) else v
    return _key(field, 2) + _varint(len(data)) + data


def _value_info(name: str, dtype: str, shape: Sequence[Dim]) -> bytes:
    dims = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in shape)
    tensor_type = _int(1, ELEM[dtype]) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def model(nodes: List[Tuple[str, List[str], List[str]]], inputs: List[Tuple[str, str, Sequence[Dim]]],
          outputs: List[Tuple[str, str, Sequence[Dim]]], opset: int = 17) -> bytes:
    """A model of nodes (op_type, inputs, outputs) with typed graph inputs and outputs."""
    graph = b"".join(_bytes(1, b"".join([*(_bytes(1, i) for i in ins), *(_bytes(2, o) for o in outs),
                                         _bytes(3, f"n{k}"), _bytes(4, op)]))
                     for k, (op, ins, outs) in enumerate(nodes))
    graph += _bytes(2, "g")
    graph += b"".join(_bytes(11, _value_info(*i)) for i in inputs)
    graph += b"".join(_bytes(12, _value_info(*o)) for o in outputs)
    return _int(1, 8) + _bytes(2, "tensorbridge-tests") + _bytes(7, graph) + _bytes(8, _bytes(1, "") + _int(2, opset))


def relu(shape: Sequence[Dim] = (3, 4), dtype: str = "f32") -> bytes:
    """y = Relu(x)."""
    return model([("Relu", ["x"], ["y"])], [("x", dtype, shape)], [("y", dtype, shape)])


def add(shape: Sequence[Dim] = (2, 3), dtype: str = "f32") -> bytes:
    """z = x + y."""
    return model([("Add", ["x", "y"], ["z"])], [("x", dtype, shape), ("y", dtype, shape)], [("z", dtype, shape)])


def two_outputs(shape: Sequence[Dim] = (4,)) -> bytes:
    """r = Relu(x), n = Neg(x)."""
    return model([("Relu", ["x"], ["r"]), ("Neg", ["x"], ["n"])], [("x", "f32", shape)],
                 [("r", "f32", shape), ("n", "f32", shape)])
