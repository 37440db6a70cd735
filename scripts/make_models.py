#!/usr/bin/env python3
"""Builds the bundled demo models and their reference data (models/README.md says what is there).

  models/cnn_small.onnx      a small CNN: three Conv+BatchNormalization+Relu blocks (MaxPool after the
                             first two), GlobalAveragePool, Flatten, Gemm, Softmax; input [1, 3, 32, 32]
  models/encoder_small.onnx  a small transformer encoder layer as PyTorch exports one (post-norm):
                             MatMul+Add projections, 4-head attention with Softmax, LayerNorm as the
                             ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add pattern, GELU with Erf,
                             residual Adds; input [batch, 16, 64] with a symbolic batch dimension
  models/<name>/inputs/<input>.npy    fixed inputs (seeded)
  models/<name>/outputs/<output>.npy  what ONNX Runtime (CPU, graph optimizations off) computes for them

Run it to regenerate everything (the files are committed; nothing in CI runs this):

  python3 -m venv /tmp/tbvenv && /tmp/tbvenv/bin/pip install onnx onnxruntime numpy
  /tmp/tbvenv/bin/python scripts/make_models.py

Last run with Python 3.11.7, onnx 1.23.2, onnxruntime 1.31.1, numpy 2.4.6. The weights come from a seeded
generator, so a rerun with the same versions writes the same bytes."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # ReduceMean still takes axes as an attribute; LayerNormalization is left to the pattern
IR_VERSION = 8
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")


class Builder:
    """Nodes and initializers, named the way PyTorch's exporter names them."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []

    def weight(self, name, shape, scale):
        data = (self.rng.standard_normal(shape) * scale).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, name, **attrs):
        out = name + "_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out


def cnn_small():
    b = Builder(seed=1)
    x = "input"
    channels = [3, 16, 32, 64]
    for i in range(3):
        cin, cout = channels[i], channels[i + 1]
        w = b.weight(f"conv{i}.weight", (cout, cin, 3, 3), (2.0 / (cin * 9)) ** 0.5)
        bias = b.weight(f"conv{i}.bias", (cout,), 0.1)
        x = b.node("Conv", [x, w, bias], f"/block{i}/conv/Conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                   strides=[1, 1])
        gamma = b.const(f"bn{i}.weight", (1.0 + 0.1 * b.rng.standard_normal(cout)).astype(np.float32))
        beta = b.weight(f"bn{i}.bias", (cout,), 0.1)
        mean = b.weight(f"bn{i}.running_mean", (cout,), 0.1)
        var = b.const(f"bn{i}.running_var", (0.5 + b.rng.random(cout)).astype(np.float32))
        x = b.node("BatchNormalization", [x, gamma, beta, mean, var], f"/block{i}/bn/BatchNormalization",
                   epsilon=1e-5, momentum=0.9)
        x = b.node("Relu", [x], f"/block{i}/relu/Relu")
        if i < 2:
            x = b.node("MaxPool", [x], f"/block{i}/pool/MaxPool", kernel_shape=[2, 2], strides=[2, 2])
    x = b.node("GlobalAveragePool", [x], "/pool/GlobalAveragePool")
    x = b.node("Flatten", [x], "/flatten/Flatten", axis=1)
    w = b.weight("fc.weight", (10, 64), (1.0 / 64) ** 0.5)
    bias = b.weight("fc.bias", (10,), 0.1)
    x = b.node("Gemm", [x, w, bias], "/fc/Gemm", alpha=1.0, beta=1.0, transB=1)
    b.nodes.append(helper.make_node("Softmax", [x], ["probs"], name="/softmax/Softmax", axis=1))
    graph = helper.make_graph(
        b.nodes, "cnn_small",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [1, 10])], b.inits)
    inputs = {"input": np.random.default_rng(11).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    return graph, inputs


def layer_norm(b, x, prefix, dim):
    """LayerNorm over the last axis the way torch.onnx exports it before opset 17's fused op."""
    mean = b.node("ReduceMean", [x], f"{prefix}/ReduceMean", axes=[-1], keepdims=1)
    centered = b.node("Sub", [x, mean], f"{prefix}/Sub")
    two = b.const(f"{prefix}.two", np.array(2.0, dtype=np.float32))
    squared = b.node("Pow", [centered, two], f"{prefix}/Pow")
    var = b.node("ReduceMean", [squared], f"{prefix}/ReduceMean_1", axes=[-1], keepdims=1)
    eps = b.const(f"{prefix}.eps", np.array(1e-5, dtype=np.float32))
    var_eps = b.node("Add", [var, eps], f"{prefix}/Add")
    std = b.node("Sqrt", [var_eps], f"{prefix}/Sqrt")
    normed = b.node("Div", [centered, std], f"{prefix}/Div")
    gamma = b.const(f"{prefix}.weight", (1.0 + 0.1 * b.rng.standard_normal(dim)).astype(np.float32))
    beta = b.weight(f"{prefix}.bias", (dim,), 0.1)
    scaled = b.node("Mul", [normed, gamma], f"{prefix}/Mul")
    return b.node("Add", [scaled, beta], f"{prefix}/Add_1")


def linear(b, x, prefix, din, dout):
    w = b.weight(f"{prefix}.weight", (din, dout), (1.0 / din) ** 0.5)
    bias = b.weight(f"{prefix}.bias", (dout,), 0.05)
    y = b.node("MatMul", [x, w], f"{prefix}/MatMul")
    return b.node("Add", [y, bias], f"{prefix}/Add")


def encoder_small():
    b = Builder(seed=2)
    seq, dim, heads, ffn = 16, 64, 4, 128
    hd = dim // heads
    x = "x"
    split_heads = b.const("shape_heads", np.array([0, 0, heads, hd], dtype=np.int64))
    merge_heads = b.const("shape_model", np.array([0, 0, dim], dtype=np.int64))
    q = linear(b, x, "/attn/q_proj", dim, dim)
    k = linear(b, x, "/attn/k_proj", dim, dim)
    v = linear(b, x, "/attn/v_proj", dim, dim)
    q = b.node("Reshape", [q, split_heads], "/attn/Reshape")
    k = b.node("Reshape", [k, split_heads], "/attn/Reshape_1")
    v = b.node("Reshape", [v, split_heads], "/attn/Reshape_2")
    q = b.node("Transpose", [q], "/attn/Transpose", perm=[0, 2, 1, 3])    # [B, H, S, hd]
    kt = b.node("Transpose", [k], "/attn/Transpose_1", perm=[0, 2, 3, 1])  # [B, H, hd, S]
    v = b.node("Transpose", [v], "/attn/Transpose_2", perm=[0, 2, 1, 3])
    scores = b.node("MatMul", [q, kt], "/attn/MatMul")
    scale = b.const("attn.scale", np.array(float(hd) ** 0.5, dtype=np.float32))
    scores = b.node("Div", [scores, scale], "/attn/Div")
    probs = b.node("Softmax", [scores], "/attn/Softmax", axis=-1)
    ctx = b.node("MatMul", [probs, v], "/attn/MatMul_1")
    ctx = b.node("Transpose", [ctx], "/attn/Transpose_3", perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, merge_heads], "/attn/Reshape_3")
    attn = linear(b, ctx, "/attn/out_proj", dim, dim)
    h = b.node("Add", [x, attn], "/Add")
    h = layer_norm(b, h, "/norm1", dim)
    f = linear(b, h, "/ffn/linear1", dim, ffn)
    sqrt2 = b.const("gelu.sqrt2", np.array(2.0 ** 0.5, dtype=np.float32))
    g = b.node("Div", [f, sqrt2], "/ffn/gelu/Div")
    g = b.node("Erf", [g], "/ffn/gelu/Erf")
    one = b.const("gelu.one", np.array(1.0, dtype=np.float32))
    g = b.node("Add", [g, one], "/ffn/gelu/Add")
    g = b.node("Mul", [f, g], "/ffn/gelu/Mul")
    half = b.const("gelu.half", np.array(0.5, dtype=np.float32))
    g = b.node("Mul", [g, half], "/ffn/gelu/Mul_1")
    f = linear(b, g, "/ffn/linear2", ffn, dim)
    h2 = b.node("Add", [h, f], "/Add_1")
    y = layer_norm(b, h2, "/norm2", dim)
    b.nodes.append(helper.make_node("Identity", [y], ["y"], name="/output/Identity"))
    graph = helper.make_graph(
        b.nodes, "encoder_small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", seq, dim])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", seq, dim])], b.inits)
    inputs = {"x": np.random.default_rng(12).standard_normal((2, seq, dim)).astype(np.float32)}
    return graph, inputs


def write(name, graph, inputs):
    import onnxruntime as ort

    model = helper.make_model(graph, producer_name="tensorbridge-make_models",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(ROOT, name + ".onnx")
    onnx.save(model, path)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    outputs = session.run(None, inputs)
    for sub in ("inputs", "outputs"):
        os.makedirs(os.path.join(ROOT, name, sub), exist_ok=True)
    for key, value in inputs.items():
        np.save(os.path.join(ROOT, name, "inputs", key + ".npy"), value)
    for out, value in zip(session.get_outputs(), outputs):
        np.save(os.path.join(ROOT, name, "outputs", out.name + ".npy"), value)
    print(f"{path}: {os.path.getsize(path)} bytes, {len(graph.node)} nodes; outputs "
          + ", ".join(f"{o.name} {list(v.shape)} sum {float(v.sum()):.6f}" for o, v in zip(session.get_outputs(), outputs)))


def main():
    os.makedirs(ROOT, exist_ok=True)
    print(f"onnx {onnx.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}")
    write("cnn_small", *cnn_small())
    write("encoder_small", *encoder_small())


if __name__ == "__main__":
    main()
