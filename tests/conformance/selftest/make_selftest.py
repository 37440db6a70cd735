#!/usr/bin/env python3
"""Writes the runner's self-test data (tests/conformance/selftest/): tiny tests in libonnx-testdata's layout
whose expected outcome is known, so the CTest entry conformance_selftest can check that tb_conformance
tells a pass from a wrong value, a wrong shape, an integer off by one, NaN from NaN, and an unsupported op.
Run once from this folder with onnx and numpy (made with onnx 1.23.2, numpy 2.4.6); the files are committed."""
import os
import shutil

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))


def write(suite, name, nodes, inputs, outputs, feeds, expected, domain_opsets=()):
    d = os.path.join(HERE, suite, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    graph = helper.make_graph(nodes, name, inputs, outputs)
    opsets = [helper.make_opsetid("", 13)] + [helper.make_opsetid(dom, v) for dom, v in domain_opsets]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="tb-selftest")
    model.ir_version = 8
    save(model, os.path.join(d, "model.onnx"))
    for i, a in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())
    for i, a in enumerate(expected):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
b = np.full((2, 3), 0.5, dtype=np.float32)
add = [helper.make_node("Add", ["a", "b"], ["y"])]
io = ([f32("a", [2, 3]), f32("b", [2, 3])], [f32("y", [2, 3])])

write("node", "test_selftest_add_pass", add, *io, [a, b], [a + b])
wrong = a + b
wrong[1, 2] += 0.01
write("node", "test_selftest_add_wrong", add, *io, [a, b], [wrong])
close = (a + b) * np.float32(1 + 5e-4)  # within rtol 1e-3
write("node", "test_selftest_add_within_tolerance", add, *io, [a, b], [close])
write("node", "test_selftest_add_wrong_shape", add, *io, [a, b], [(a + b).reshape(3, 2)])

z = np.array([0.0, 1.0, 0.0], dtype=np.float32)
write("node", "test_selftest_div_nan", [helper.make_node("Div", ["a", "b"], ["y"])],
      [f32("a", [3]), f32("b", [3])], [f32("y", [3])], [z, z], [np.array([np.nan, 1.0, np.nan], np.float32)])

ia = np.array([1, 2, 3], dtype=np.int64)
write("node", "test_selftest_int_off_by_one", [helper.make_node("Add", ["a", "b"], ["y"])],
      [helper.make_tensor_value_info("a", TensorProto.INT64, [3]), helper.make_tensor_value_info("b", TensorProto.INT64, [3])],
      [helper.make_tensor_value_info("y", TensorProto.INT64, [3])], [ia, ia], [np.array([2, 4, 7], np.int64)])

write("node", "test_selftest_unsupported_op", [helper.make_node("NoSuchOp", ["a"], ["y"], domain="com.example")],
      [f32("a", [3])], [f32("y", [3])], [z], [z], domain_opsets=[("com.example", 1)])

two = [helper.make_node("Relu", ["a"], ["r"]), helper.make_node("Mul", ["r", "r"], ["y"])]
x = np.array([-1.0, 2.0, -3.0, 4.0], dtype=np.float32)
write("pytorch-converted", "test_selftest_model", two, [f32("a", [4])], [f32("y", [4])], [x],
      [np.maximum(x, 0) ** 2])
