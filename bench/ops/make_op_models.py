#!/usr/bin/env python3
"""Writes the operator benchmark set (docs/benchmarking.md, "Operator set"): one-node ONNX models (opset 17,
seeded random weights) of the operators whose level-2 kernels the model set does not time, at the shapes of
the models that use them, each with its input, and a manifest.json that bench/models/compare.py reads:

  convt_64_2x2s2     ConvTranspose 64 -> 64, 2x2 stride 2, bias, 1x64x80x80 -> 160x160 (an OCR detection
                     head's first upsampling, DBNet-style)
  convt_64to1_2x2s2  ConvTranspose 64 -> 1, 2x2 stride 2, bias, 1x64x160x160 -> 320x320 (its second)
  convt_128_4x4s2    ConvTranspose 128 -> 64, 4x4 stride 2 pads 1, bias, 1x128x32x32 -> 64x64 (U-Net / GAN)
  conv_aspp_d12      Conv 960 -> 256, 3x3 dilation 12 pads 12, bias, 1x960x32x32 (DeepLabV3-MobileNetV3's ASPP at
  conv_aspp_d24      a 512x512 input; dilations 24 and 36 the same shape: at 36 only the centre tap reads the
  conv_aspp_d36      map)
  conv_stem_3to16_s2 Conv 3 -> 16, 3x3 stride 2 pads 1, bias, 1x3x512x512 (the same model's stem)
  conv_pw_160to960_7 Conv 1x1 160 -> 960, bias, 1x160x7x7 (MobileNetV3's pointwise convolutions at small sizes:
  conv_pw_960to160_7 49 to 784 pixels)
  conv_pw_112to672_14 Conv 1x1 112 -> 672, bias, 1x112x14x14
  conv_pw_40to120_28 Conv 1x1 40 -> 120, bias, 1x40x28x28
  conv_pw_*_14, _7   more 1x1 convolutions of MobileNetV3-Large and EfficientNet-B0 at 14x14 and 7x7 (672 -> 112,
                     80 -> 184, 480 -> 80, 80 -> 480, 192 -> 1152, 1152 -> 192, 1152 -> 320)
  resize_nearest_2x  Resize nearest (asymmetric, floor: PyTorch's nearest upsampling), scales 2, 1x256x40x40
                     (a feature pyramid's top-down path)
  resize_linear_2x   Resize linear (pytorch_half_pixel: bilinear, align_corners=False), sizes 160x160 from
                     1x64x80x80
  resize_linear_half Resize linear (half_pixel), scales 0.5, 1x64x160x160
  resize_cubic_2x    Resize cubic (a = -0.75, pytorch_half_pixel: bicubic), sizes 128x128 from 1x32x64x64
  dw_*               depthwise Conv (group = channels) + bias at the shapes of MobileNetV3-Large and
                     EfficientNet-B0 (every depthwise layer's shape of both: 3x3 and 5x5, strides 1 and 2,
                     112x112 down to 7x7),
                     ConvNeXt-T (7x7 pad 3 at 56x56 and 14x14) and DeepLabV3-MobileNetV3's dilated backbone
                     (5x5 dilation 2 at 32x32: a 512x512 image at output stride 16)
  grp_*              grouped Conv (1 < group < channels) + bias at the shapes of ResNeXt-50 32x4d (3x3, 32 groups of
                     4 to 32 channels, 56x56 down to 7x7, one stride 2), RegNetX-400MF (3x3, groups of 16 channels)
                     and ShuffleNet v1 g3 (1x1 in 3 groups)
  sigmoid, tanh,     the activations on 1x96x112x112 (EfficientNet's first SiLU-sized tensor, 1.2 M values),
  hardsigmoid,       each one node; silu is Sigmoid then Mul of the same input (how torch exports SiLU at
  hardswish, gelu,   opset 17: TensorBridge fuses it at O1, ONNX Runtime's optimizer does too) and gelu the
  silu               erf form as torch exports it (Div, Erf, Add, Mul, Mul: our O1 makes it tb::Gelu)
  transpose_nchw_nhwc  Transpose perm 0,2,3,1 of 1x96x56x56 (ConvNeXt's layout change around its LayerNorm)
  transpose_nhwc_nchw  Transpose perm 0,3,1,2 of 1x56x56x96 (back)
  transpose_heads    Transpose perm 0,2,1,3 of 1x197x12x64 (ViT's attention heads)

--quick writes the same at a quarter of the spatial size; --only NAME,... writes only the models whose names
start with one of those (e.g. --only dw_ for the depthwise ones). Usage: make_op_models.py OUT [--quick]
[--only NAME,...]"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def model(name, node, inits, x_shape, y_shape):
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tensorbridge-bench")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def graph_model(name, nodes, x_shape, y_shape, inits=None):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                              [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tensorbridge-bench")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def activation(name, seed, shape):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape, dtype=np.float32) * np.float32(3)).astype(np.float32)
    if name == "silu":
        nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="/silu/Sigmoid"),
                 helper.make_node("Mul", ["x", "s"], ["y"], name="/silu/Mul")]
        return graph_model(name, nodes, list(shape), list(shape)), x
    if name == "gelu":
        inits = {"sqrt2": np.array(1.4142135381698608, np.float32), "one": np.array(1.0, np.float32),
                 "half": np.array(0.5, np.float32)}
        nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"], name="/gelu/Div"),
                 helper.make_node("Erf", ["d"], ["e"], name="/gelu/Erf"),
                 helper.make_node("Add", ["e", "one"], ["a"], name="/gelu/Add"),
                 helper.make_node("Mul", ["x", "a"], ["m"], name="/gelu/Mul"),
                 helper.make_node("Mul", ["m", "half"], ["y"], name="/gelu/Mul_1")]
        return graph_model(name, nodes, list(shape), list(shape), inits), x
    op = {"sigmoid": "Sigmoid", "tanh": "Tanh", "hardsigmoid": "HardSigmoid", "hardswish": "HardSwish"}[name]
    attrs = {"alpha": 1.0 / 6.0, "beta": 0.5} if op == "HardSigmoid" else {}
    node = helper.make_node(op, ["x"], ["y"], name=f"/{name}/{op}", **attrs)
    return graph_model(name, [node], list(shape), list(shape)), x


def transpose(name, seed, shape, perm):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape, dtype=np.float32)
    node = helper.make_node("Transpose", ["x"], ["y"], name=f"/{name}/Transpose", perm=list(perm))
    return graph_model(name, [node], list(shape), [shape[p] for p in perm]), x


def conv_transpose(name, seed, c, m, hw, k, s, pad):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((c, m, k, k), dtype=np.float32) * np.float32((c * k * k / (s * s)) ** -0.5))
    b = rng.standard_normal(m, dtype=np.float32) * np.float32(0.1)
    out = (hw - 1) * s + k - 2 * pad
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name=f"/{name}/ConvTranspose",
                            kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4)
    x = rng.standard_normal((1, c, hw, hw), dtype=np.float32)
    return model(name, node, {"w": w, "b": b}, [1, c, hw, hw], [1, m, out, out]), x


def conv(name, seed, c, m, hw, k, s, pad, dil):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((m, c, k, k), dtype=np.float32) * np.float32((c * k * k) ** -0.5)
    b = rng.standard_normal(m, dtype=np.float32) * np.float32(0.1)
    out = (hw + 2 * pad - dil * (k - 1) - 1) // s + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name=f"/{name}/Conv", kernel_shape=[k, k], strides=[s, s],
                            pads=[pad] * 4, dilations=[dil, dil])
    x = rng.standard_normal((1, c, hw, hw), dtype=np.float32)
    return model(name, node, {"w": w, "b": b}, [1, c, hw, hw], [1, m, out, out]), x


def resize(name, seed, c, hw, out, mode, coord, by_sizes, **attrs):
    rng = np.random.default_rng(seed)
    inits = {"roi": np.zeros(0, np.float32)}
    if by_sizes:
        inits.update(scales=np.zeros(0, np.float32), sizes=np.array([1, c, out, out], np.int64))
    else:
        inits["scales"] = np.array([1, 1, out / hw, out / hw], np.float32)
    node = helper.make_node("Resize", ["x", "roi", "scales"] + (["sizes"] if by_sizes else []), ["y"],
                            name=f"/{name}/Resize", mode=mode, coordinate_transformation_mode=coord, **attrs)
    x = rng.standard_normal((1, c, hw, hw), dtype=np.float32)
    return model(name, node, inits, [1, c, hw, hw], [1, c, out, out]), x


def depthwise(name, seed, c, hw, k, s, dil=1):
    rng = np.random.default_rng(seed)
    pad = dil * (k - 1) // 2
    w = rng.standard_normal((c, 1, k, k), dtype=np.float32) * np.float32(1.0 / k)
    b = rng.standard_normal(c, dtype=np.float32) * np.float32(0.1)
    out = (hw + 2 * pad - dil * (k - 1) - 1) // s + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name=f"/{name}/Conv", group=c, kernel_shape=[k, k],
                            strides=[s, s], pads=[pad] * 4, dilations=[dil, dil])
    x = rng.standard_normal((1, c, hw, hw), dtype=np.float32)
    return model(name, node, {"w": w, "b": b}, [1, c, hw, hw], [1, c, out, out]), x


def depthwise_models(q):
    """The depthwise shapes: name -> (channels, spatial size, kernel, stride, dilation, source)."""
    shapes = {
        "dw_mbv3_3x3s1_112": (16, 112, 3, 1, 1, "MobileNetV3-L block 1"),
        "dw_mbv3_3x3s2_112": (64, 112, 3, 2, 1, "MobileNetV3-L block 2"),
        "dw_mbv3_5x5s2_56": (72, 56, 5, 2, 1, "MobileNetV3-L block 4"),
        "dw_mbv3_3x3s1_14": (480, 14, 3, 1, 1, "MobileNetV3-L block 11"),
        "dw_mbv3_5x5s1_7": (960, 7, 5, 1, 1, "MobileNetV3-L block 15"),
        "dw_effb0_3x3s1_112": (32, 112, 3, 1, 1, "EfficientNet-B0 stage 1"),
        "dw_effb0_5x5s1_28": (240, 28, 5, 1, 1, "EfficientNet-B0 stage 4"),
        "dw_convnext_7x7_56": (96, 56, 7, 1, 1, "ConvNeXt-T stage 1"),
        "dw_convnext_7x7_14": (384, 14, 7, 1, 1, "ConvNeXt-T stage 3"),
        "dw_deeplab_5x5d2_32": (960, 32, 5, 1, 2, "DeepLabV3-MobileNetV3 dilated block"),
        "dw_mbv3_3x3s1_56": (72, 56, 3, 1, 1, "MobileNetV3-L block 3"),
        "dw_mbv3_5x5s1_28": (120, 28, 5, 1, 1, "MobileNetV3-L blocks 5-6"),
        "dw_mbv3_3x3s2_28": (240, 28, 3, 2, 1, "MobileNetV3-L block 7, EfficientNet-B0 stage 4"),
        "dw_mbv3_3x3s1_14_200": (200, 14, 3, 1, 1, "MobileNetV3-L block 8"),
        "dw_mbv3_3x3s1_14_184": (184, 14, 3, 1, 1, "MobileNetV3-L blocks 9-10"),
        "dw_mbv3_3x3s1_14_672": (672, 14, 3, 1, 1, "MobileNetV3-L block 12"),
        "dw_mbv3_5x5s2_14": (672, 14, 5, 2, 1, "MobileNetV3-L block 13, EfficientNet-B0 stage 6"),
        "dw_effb0_3x3s2_112": (96, 112, 3, 2, 1, "EfficientNet-B0 stage 2"),
        "dw_effb0_3x3s1_56": (144, 56, 3, 1, 1, "EfficientNet-B0 stage 2"),
        "dw_effb0_5x5s2_56": (144, 56, 5, 2, 1, "EfficientNet-B0 stage 3"),
        "dw_effb0_5x5s1_14_480": (480, 14, 5, 1, 1, "EfficientNet-B0 stage 5"),
        "dw_effb0_5x5s1_14": (672, 14, 5, 1, 1, "EfficientNet-B0 stage 5"),
        "dw_effb0_5x5s1_7": (1152, 7, 5, 1, 1, "EfficientNet-B0 stage 6"),
        "dw_effb0_3x3s1_7": (1152, 7, 3, 1, 1, "EfficientNet-B0 stage 7"),
    }
    out = {}
    for i, (name, (c, hw, k, s, dil, src)) in enumerate(shapes.items()):
        size = max(hw // q, 7)
        out[name] = ((lambda name=name, c=c, size=size, k=k, s=s, dil=dil, i=i: depthwise(name, 20 + i, c, size, k, s, dil)),
                     f"depthwise {k}x{k}/{s}{f' dilation {dil}' if dil > 1 else ''} + bias, 1x{c}x{size}x{size} ({src})")
    return out


def pointwise_models():
    """More 1x1 convolutions at 14x14 and 7x7 from MobileNetV3-Large and EfficientNet-B0, and their shallow ones
    at 112x112 and 56x56 (the direct pointwise kernel's shapes) (name -> c, m, size)."""
    shapes = {"conv_pw_16to16_112": (16, 16, 112), "conv_pw_16to64_112": (16, 64, 112),
              "conv_pw_32to16_112": (32, 16, 112), "conv_pw_16to96_112": (16, 96, 112),
              "conv_pw_24to72_56": (24, 72, 56), "conv_pw_24to144_56": (24, 144, 56),
              "conv_pw_672to112_14": (672, 112, 14), "conv_pw_80to184_14": (80, 184, 14),
              "conv_pw_480to80_14": (480, 80, 14), "conv_pw_80to480_14": (80, 480, 14),
              "conv_pw_192to1152_7": (192, 1152, 7), "conv_pw_1152to192_7": (1152, 192, 7),
              "conv_pw_1152to320_7": (1152, 320, 7)}
    return {name: ((lambda name=name, c=c, m=m, hw=hw, i=i: conv(name, 60 + i, c, m, hw, 1, 1, 0, 1)),
                   f"Conv 1x1 {c}->{m} + bias, 1x{c}x{hw}x{hw}")
            for i, (name, (c, m, hw)) in enumerate(shapes.items())}


def grouped(name, seed, c, m, hw, k, s, group):
    rng = np.random.default_rng(seed)
    pad = (k - 1) // 2
    w = rng.standard_normal((m, c // group, k, k), dtype=np.float32) * np.float32((c // group * k * k) ** -0.5)
    b = rng.standard_normal(m, dtype=np.float32) * np.float32(0.1)
    out = (hw + 2 * pad - k) // s + 1
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name=f"/{name}/Conv", group=group, kernel_shape=[k, k],
                            strides=[s, s], pads=[pad] * 4)
    x = rng.standard_normal((1, c, hw, hw), dtype=np.float32)
    return model(name, node, {"w": w, "b": b}, [1, c, hw, hw], [1, m, out, out]), x


def grouped_models(q):
    """The grouped (not depthwise) shapes: name -> (channels in, out, spatial size, kernel, stride, group, source)."""
    shapes = {
        "grp_resnext_128_56": (128, 128, 56, 3, 1, 32, "ResNeXt-50 32x4d stage 1"),
        "grp_resnext_256s2_56": (256, 256, 56, 3, 2, 32, "ResNeXt-50 32x4d stage 2, first block"),
        "grp_resnext_256_28": (256, 256, 28, 3, 1, 32, "ResNeXt-50 32x4d stage 2"),
        "grp_resnext_512_14": (512, 512, 14, 3, 1, 32, "ResNeXt-50 32x4d stage 3"),
        "grp_resnext_1024_7": (1024, 1024, 7, 3, 1, 32, "ResNeXt-50 32x4d stage 4"),
        "grp_regnetx_64_28": (64, 64, 28, 3, 1, 4, "RegNetX-400MF stage 2"),
        "grp_regnetx_160_14": (160, 160, 14, 3, 1, 10, "RegNetX-400MF stage 3"),
        "grp_shufflev1_1x1_240to60_28": (240, 60, 28, 1, 1, 3, "ShuffleNet v1 g3 stage 2"),
    }
    out = {}
    for i, (name, (c, m, hw, k, s, group, src)) in enumerate(shapes.items()):
        size = max(hw // q, 7)
        out[name] = ((lambda name=name, c=c, m=m, size=size, k=k, s=s, group=group, i=i:
                      grouped(name, 40 + i, c, m, size, k, s, group)),
                     f"grouped {k}x{k}/{s} {c}->{m} in {group} groups + bias, 1x{c}x{size}x{size} ({src})")
    return out


def models(q):
    """name -> (builder, description); q divides the spatial sizes."""
    out = {
        "convt_64_2x2s2": (lambda: conv_transpose("convt_64_2x2s2", 1, 64, 64, 80 // q, 2, 2, 0),
                           f"ConvTranspose 64->64 2x2/2 + bias, 1x64x{80 // q}x{80 // q}"),
        "convt_64to1_2x2s2": (lambda: conv_transpose("convt_64to1_2x2s2", 2, 64, 1, 160 // q, 2, 2, 0),
                              f"ConvTranspose 64->1 2x2/2 + bias, 1x64x{160 // q}x{160 // q}"),
        "convt_128_4x4s2": (lambda: conv_transpose("convt_128_4x4s2", 3, 128, 64, 32 // q, 4, 2, 1),
                            f"ConvTranspose 128->64 4x4/2 pads 1 + bias, 1x128x{32 // q}x{32 // q}"),
        "conv_aspp_d12": (lambda: conv("conv_aspp_d12", 8, 960, 256, 32 // q, 3, 1, 12, 12),
                          f"Conv 960->256 3x3 dilation 12 + bias, 1x960x{32 // q}x{32 // q}"),
        "conv_aspp_d24": (lambda: conv("conv_aspp_d24", 9, 960, 256, 32 // q, 3, 1, 24, 24),
                          f"Conv 960->256 3x3 dilation 24 + bias, 1x960x{32 // q}x{32 // q}"),
        "conv_aspp_d36": (lambda: conv("conv_aspp_d36", 10, 960, 256, 32 // q, 3, 1, 36, 36),
                          f"Conv 960->256 3x3 dilation 36 + bias, 1x960x{32 // q}x{32 // q}"),
        "conv_stem_3to16_s2": (lambda: conv("conv_stem_3to16_s2", 11, 3, 16, 512 // q, 3, 2, 1, 1),
                               f"Conv 3->16 3x3/2 + bias, 1x3x{512 // q}x{512 // q}"),
        "conv_pw_160to960_7": (lambda: conv("conv_pw_160to960_7", 12, 160, 960, 7, 1, 1, 0, 1),
                               "Conv 1x1 160->960 + bias, 1x160x7x7"),
        "conv_pw_960to160_7": (lambda: conv("conv_pw_960to160_7", 13, 960, 160, 7, 1, 1, 0, 1),
                               "Conv 1x1 960->160 + bias, 1x960x7x7"),
        "conv_pw_112to672_14": (lambda: conv("conv_pw_112to672_14", 14, 112, 672, 14, 1, 1, 0, 1),
                                "Conv 1x1 112->672 + bias, 1x112x14x14"),
        "conv_pw_40to120_28": (lambda: conv("conv_pw_40to120_28", 15, 40, 120, 28, 1, 1, 0, 1),
                               "Conv 1x1 40->120 + bias, 1x40x28x28"),
        **pointwise_models(),
        "resize_nearest_2x": (lambda: resize("resize_nearest_2x", 4, 256, 40 // q, 80 // q, "nearest", "asymmetric",
                                             False, nearest_mode="floor"),
                              f"Resize nearest asymmetric floor x2, 1x256x{40 // q}x{40 // q}"),
        "resize_linear_2x": (lambda: resize("resize_linear_2x", 5, 64, 80 // q, 160 // q, "linear",
                                            "pytorch_half_pixel", True),
                             f"Resize linear pytorch_half_pixel x2 (sizes), 1x64x{80 // q}x{80 // q}"),
        "resize_linear_half": (lambda: resize("resize_linear_half", 6, 64, 160 // q, 80 // q, "linear", "half_pixel",
                                              False),
                               f"Resize linear half_pixel x0.5, 1x64x{160 // q}x{160 // q}"),
        "resize_cubic_2x": (lambda: resize("resize_cubic_2x", 7, 32, 64 // q, 128 // q, "cubic", "pytorch_half_pixel",
                                           True, cubic_coeff_a=-0.75),
                            f"Resize cubic a=-0.75 pytorch_half_pixel x2 (sizes), 1x32x{64 // q}x{64 // q}"),
        **depthwise_models(q),
        **grouped_models(q),
    }
    act_shape = (1, 96, 112 // q, 112 // q)
    for i, act in enumerate(["sigmoid", "tanh", "hardsigmoid", "hardswish", "gelu", "silu"]):
        out[act] = ((lambda a=act, seed=20 + i: activation(a, seed, act_shape)),
                    f"{act} of 1x96x{112 // q}x{112 // q}")
    for name, shape, perm, seed in [("transpose_nchw_nhwc", (1, 96, 56 // q, 56 // q), (0, 2, 3, 1), 30),
                                    ("transpose_nhwc_nchw", (1, 56 // q, 56 // q, 96), (0, 3, 1, 2), 31),
                                    ("transpose_heads", (1, 197 // q, 12, 64), (0, 2, 1, 3), 32)]:
        out[name] = ((lambda n=name, sh=shape, pm=perm, sd=seed: transpose(n, sd, sh, pm)),
                     f"Transpose perm {','.join(map(str, perm))} of {'x'.join(map(str, shape))}")
    return out


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(__doc__)
    out, quick = os.path.abspath(argv[1]), "--quick" in argv[2:]
    only = []
    if "--only" in argv[2:]:
        at = argv.index("--only")
        if at + 1 >= len(argv) or not argv[at + 1].strip(","):
            sys.exit("make_op_models.py: --only wants a comma-separated list of model names or name prefixes (e.g. dw_)")
        only = [p for p in argv[at + 1].split(",") if p]
    chosen = {k: v for k, v in models(4 if quick else 1).items() if not only or any(k.startswith(p) for p in only)}
    if not chosen:
        sys.exit(f"make_op_models.py: --only {','.join(only)} matches no model; the models are "
                 f"{', '.join(models(1))}")
    manifest = []
    for name, (build, what) in chosen.items():
        m, x = build()
        path = os.path.join(out, name + ".onnx")
        os.makedirs(os.path.join(out, name, "inputs"), exist_ok=True)
        onnx.save(m, path)
        np.save(os.path.join(out, name, "inputs", "x.npy"), x)
        params = sum(int(np.prod(t.dims)) for t in m.graph.initializer)
        manifest.append({"name": name, "what": what, "path": path, "inputs": os.path.join(out, name, "inputs"),
                         "nodes": 1, "parameters": params})
        print(f"make_op_models: {path} ({what})")
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"quick": quick, "title": "Operator set", "models": manifest}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv)
