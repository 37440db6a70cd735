#!/usr/bin/env python3
"""Writes the benchmark model set (docs/benchmarking.md, "Model set") with seeded random weights:

  mlp       784-1024-1024-10, batch 64: Gemm(transB=1)+Relu, Gemm+Relu, Gemm (nn.Linear as PyTorch exports it)
  resnet18  ResNet-18 shape at 1x3x224x224: 7x7/2 Conv+BatchNormalization+Relu, 3x3/2 MaxPool, 4 stages of two
            basic blocks (64, 128, 256, 512 channels; Conv+BN+Relu, Conv+BN, residual Add, Relu; a 1x1/2
            Conv+BN on the shortcut where the shape changes), GlobalAveragePool, Flatten, Gemm to 1000
  bert      BERT-base-shaped encoder at batch 1, sequence 128: 12 post-norm layers, hidden 768, 12 heads,
            FFN 3072; MatMul+Add projections, Reshape/Transpose heads, MatMul, Div by sqrt(64), Softmax,
            LayerNormalization (opset 17, as PyTorch exports nn.LayerNorm), GELU as x*0.5*(1+Erf(x/sqrt 2)),
            residual Adds; input is the embedding output [1, 128, 768] (no token embedding, no mask)
  lstm      two LSTM layers (ONNX LSTM op each, Squeeze of the direction axis between), sequence 64, batch 8,
            input 128, hidden 256

--quick writes smaller versions of the same four (seconds to run, for checking the pipeline).
Each model goes to OUT/<name>.onnx with its input as OUT/<name>/inputs/<input>.npy; OUT/manifest.json lists
them. The same seed and package versions write the same bytes.

Usage: make_models.py OUT [--quick]"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Graph:
    """Nodes and seeded initializers, named as PyTorch's exporter names them."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def weight(self, name, shape, std):
        return self.const(name, self.rng.standard_normal(shape, dtype=np.float32) * np.float32(std))

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, name, **attrs):
        out = name + "_output_0"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def model(self, name, inputs, output, out_shape):
        self.nodes[-1].output[0] = output
        graph = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
                                                     for n, s in inputs],
                                  [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_shape)],
                                  self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="tensorbridge-bench")
        m.ir_version = 8
        onnx.checker.check_model(m)
        return m


def linear(g, x, name, n_in, n_out, gemm=True):
    """nn.Linear: Gemm(transB=1) for 2-D input, MatMul by the transposed weight + Add for 3-D input."""
    if gemm:
        w = g.weight(f"{name}.weight", (n_out, n_in), (2.0 / n_in) ** 0.5)
        b = g.weight(f"{name}.bias", (n_out,), 0.1)
        return g.node("Gemm", [x, w, b], f"/{name}/Gemm", alpha=1.0, beta=1.0, transB=1)
    w = g.weight(f"onnx::MatMul_{name}", (n_in, n_out), n_in ** -0.5)
    b = g.weight(f"{name}.bias", (n_out,), 0.02)
    return g.node("Add", [g.node("MatMul", [x, w], f"/{name}/MatMul"), b], f"/{name}/Add")


def mlp(sizes, batch):
    g = Graph(seed=1)
    x = "x"
    for i in range(len(sizes) - 1):
        x = linear(g, x, f"fc{i}", sizes[i], sizes[i + 1])
        if i < len(sizes) - 2:
            x = g.node("Relu", [x], f"/relu{i}/Relu")
    return g.model("mlp", [("x", [batch, sizes[0]])], "logits", [batch, sizes[-1]]), \
        {"x": g.rng.random((batch, sizes[0]), dtype=np.float32)}


def conv_bn(g, x, name, cin, cout, k, stride, relu):
    w = g.weight(f"{name}.conv.weight", (cout, cin, k, k), (2.0 / (cin * k * k)) ** 0.5)
    x = g.node("Conv", [x, w], f"/{name}/conv/Conv", kernel_shape=[k, k], strides=[stride, stride],
               pads=[k // 2] * 4)
    bn = [g.const(f"{name}.bn.weight", (1.0 + 0.1 * g.rng.standard_normal(cout)).astype(np.float32)),
          g.weight(f"{name}.bn.bias", (cout,), 0.1), g.weight(f"{name}.bn.running_mean", (cout,), 0.1),
          g.const(f"{name}.bn.running_var", (0.5 + g.rng.random(cout)).astype(np.float32))]
    x = g.node("BatchNormalization", [x] + bn, f"/{name}/bn/BatchNormalization", epsilon=1e-5, momentum=0.9)
    return g.node("Relu", [x], f"/{name}/relu/Relu") if relu else x


def resnet18(size, widths, classes):
    g = Graph(seed=2)
    x = conv_bn(g, "input", "stem", 3, widths[0], 7, 2, True)
    x = g.node("MaxPool", [x], "/maxpool/MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = widths[0]
    for s, cout in enumerate(widths):
        for blk in range(2):
            stride = 2 if s > 0 and blk == 0 else 1
            name = f"layer{s + 1}.{blk}"
            y = conv_bn(g, x, f"{name}.a", cin, cout, 3, stride, True)
            y = conv_bn(g, y, f"{name}.b", cout, cout, 3, 1, False)
            short = conv_bn(g, x, f"{name}.downsample", cin, cout, 1, stride, False) if stride != 1 or cin != cout \
                else x
            x = g.node("Relu", [g.node("Add", [y, short], f"/{name}/Add")], f"/{name}/relu/Relu")
            cin = cout
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "/avgpool/GlobalAveragePool")], "/Flatten", axis=1)
    x = linear(g, x, "fc", cin, classes)
    return g.model("resnet18", [("input", [1, 3, size, size])], "logits", [1, classes]), \
        {"input": g.rng.standard_normal((1, 3, size, size), dtype=np.float32)}


def bert(layers, seq, hidden, heads, ffn):
    g = Graph(seed=3)
    d = hidden // heads
    split = g.const("split_heads_shape", np.array([1, seq, heads, d], np.int64))
    merge = g.const("merge_heads_shape", np.array([1, seq, hidden], np.int64))
    scale, one, half, sqrt2 = (g.const(n, np.array(v, np.float32)) for n, v in
                               [("scale", d ** 0.5), ("one", 1.0), ("half", 0.5), ("sqrt2", 2 ** 0.5)])

    def layer_norm(x, name):
        gamma = g.const(f"{name}.weight", (1.0 + 0.1 * g.rng.standard_normal(hidden)).astype(np.float32))
        beta = g.weight(f"{name}.bias", (hidden,), 0.1)
        return g.node("LayerNormalization", [x, gamma, beta], f"/{name}/LayerNormalization", axis=-1,
                      epsilon=1e-12)

    def heads_of(x, name, perm):
        x = g.node("Reshape", [x, split], f"/{name}/Reshape")
        return g.node("Transpose", [x], f"/{name}/Transpose", perm=perm)

    x = "x"
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = heads_of(linear(g, x, f"{p}.attention.query", hidden, hidden, False), f"{p}/q", [0, 2, 1, 3])
        k = heads_of(linear(g, x, f"{p}.attention.key", hidden, hidden, False), f"{p}/k", [0, 2, 3, 1])
        v = heads_of(linear(g, x, f"{p}.attention.value", hidden, hidden, False), f"{p}/v", [0, 2, 1, 3])
        s = g.node("Div", [g.node("MatMul", [q, k], f"/{p}/scores/MatMul"), scale], f"/{p}/scores/Div")
        s = g.node("Softmax", [s], f"/{p}/Softmax", axis=-1)
        c = g.node("Transpose", [g.node("MatMul", [s, v], f"/{p}/context/MatMul")], f"/{p}/context/Transpose",
                   perm=[0, 2, 1, 3])
        c = g.node("Reshape", [c, merge], f"/{p}/context/Reshape")
        a = linear(g, c, f"{p}.attention.output", hidden, hidden, False)
        x = layer_norm(g.node("Add", [a, x], f"/{p}/attention/residual/Add"), f"{p}.attention.LayerNorm")
        h = linear(g, x, f"{p}.intermediate", hidden, ffn, False)
        e = g.node("Erf", [g.node("Div", [h, sqrt2], f"/{p}/gelu/Div")], f"/{p}/gelu/Erf")
        e = g.node("Add", [e, one], f"/{p}/gelu/Add")
        h = g.node("Mul", [g.node("Mul", [h, e], f"/{p}/gelu/Mul"), half], f"/{p}/gelu/Mul_1")
        o = linear(g, h, f"{p}.output", ffn, hidden, False)
        x = layer_norm(g.node("Add", [o, x], f"/{p}/output/residual/Add"), f"{p}.output.LayerNorm")
    return g.model("bert", [("x", [1, seq, hidden])], "y", [1, seq, hidden]), \
        {"x": g.rng.standard_normal((1, seq, hidden), dtype=np.float32)}


def lstm(layers, seq, batch, n_in, hidden):
    g = Graph(seed=4)
    axis = g.const("direction_axis", np.array([1], np.int64))
    x, width, std = "x", n_in, hidden ** -0.5
    for i in range(layers):
        w = g.weight(f"onnx::LSTM_W{i}", (1, 4 * hidden, width), std)
        r = g.weight(f"onnx::LSTM_R{i}", (1, 4 * hidden, hidden), std)
        b = g.weight(f"onnx::LSTM_B{i}", (1, 8 * hidden), std)
        x = g.node("Squeeze", [g.node("LSTM", [x, w, r, b], f"/lstm/LSTM_{i}", hidden_size=hidden), axis],
                   f"/lstm/Squeeze_{i}")
        width = hidden
    return g.model("lstm", [("x", [seq, batch, n_in])], "y", [seq, batch, hidden]), \
        {"x": g.rng.standard_normal((seq, batch, n_in), dtype=np.float32)}


FULL = {
    "mlp": (lambda: mlp([784, 1024, 1024, 10], 64), "MLP 784-1024-1024-10, batch 64"),
    "resnet18": (lambda: resnet18(224, [64, 128, 256, 512], 1000), "ResNet-18 shape, 1x3x224x224"),
    "bert": (lambda: bert(12, 128, 768, 12, 3072), "BERT-base shape: 12 layers, seq 128, hidden 768, 12 heads"),
    "lstm": (lambda: lstm(2, 64, 8, 128, 256), "LSTM 2 layers, seq 64, batch 8, input 128, hidden 256"),
}
QUICK = {
    "mlp": (lambda: mlp([784, 256, 256, 10], 8), "MLP 784-256-256-10, batch 8 (quick)"),
    "resnet18": (lambda: resnet18(64, [16, 32, 64, 128], 100), "ResNet-18 shape at 1/4 width, 1x3x64x64 (quick)"),
    "bert": (lambda: bert(2, 32, 256, 4, 1024), "BERT shape: 2 layers, seq 32, hidden 256, 4 heads (quick)"),
    "lstm": (lambda: lstm(2, 16, 2, 32, 64), "LSTM 2 layers, seq 16, batch 2, input 32, hidden 64 (quick)"),
}


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    out, quick = os.path.abspath(argv[1]), "--quick" in argv[2:]
    manifest = []
    for name, (build, what) in (QUICK if quick else FULL).items():
        model, inputs = build()
        path = os.path.join(out, name + ".onnx")
        os.makedirs(os.path.join(out, name, "inputs"), exist_ok=True)
        onnx.save(model, path)
        for input_name, value in inputs.items():
            np.save(os.path.join(out, name, "inputs", input_name + ".npy"), value)
        params = sum(int(np.prod(t.dims)) for t in model.graph.initializer)
        manifest.append({"name": name, "what": what, "path": path, "inputs": os.path.join(out, name, "inputs"),
                         "nodes": len(model.graph.node), "parameters": params})
        print(f"make_models: {path}: {len(model.graph.node)} nodes, {params / 1e6:.1f} M parameters ({what})")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"quick": quick, "models": manifest}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
