#!/usr/bin/env python3
"""The GEMM rate of cuda:0 (scripts/gpu_check.sh's GEMM step; docs/cuda.md, "Checking on a GPU").

For each square size N it writes an ONNX model of LAYERS chained MatMuls x [N, N] @ W_i [N, N] (so the
host copies of the input and the output are small next to the products), times it with
`tb bench --backends cuda:0 --levels O2 --json` twice, once with cuBLASLt (TB_CUDA_GEMM=auto) and once on
the backend's own tiled kernel (TB_CUDA_GEMM=own), and, where PyTorch with CUDA is installed, times the
same chain of torch.matmul in fp32 (TF32 off, as our O2) with CUDA events. It prints one line per size:

    N=2048 tb cuBLASLt 41234.5 GFLOP/s | tb own kernel 9876.5 GFLOP/s | torch 43210.0 GFLOP/s

With --precision bf16 the same at O3 (tb: the weights converted to bf16 once, the products on the tensor cores
with fp32 accumulation and fp32 outputs, the activation converted per product; the own kernel reads bf16 too)
against torch.matmul on bf16 tensors (bf16 outputs: PyTorch's usual autocast-free bf16 chain).

Usage: gpu_gemm_rate.py TB [--precision fp32|bf16] [SIZES...]   (default fp32, sizes 512 1024 2048 4096)
Needs numpy and onnx; exits 77 (skipped) without them. Exit 1 when a tb bench run fails.
"""
import json
import os
import subprocess
import sys
import tempfile

LAYERS = 16


def write_model(path, n):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(n)
    weights, nodes = [], []
    prev = "x"
    for i in range(LAYERS):
        w = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
        weights.append(numpy_helper.from_array(w, name=f"W{i}"))
        out = "y" if i == LAYERS - 1 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, f"W{i}"], [out], name=f"mm{i}"))
        prev = out
    graph = helper.make_graph(nodes, f"gemm_chain_{n}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what the reader knows (3 to 11), whatever onnx writes by default
    onnx.save(model, path)


def tb_rate(tb, path, n, mode, precision):
    env = dict(os.environ, TB_CUDA_GEMM=mode)
    level = "O3" if precision == "bf16" else "O2"
    r = subprocess.run([tb, "bench", path, "--backends", "cuda:0", "--levels", level, "--precision", precision, "--warmup", "3",
                        "--iters", "10", "--json"], env=env, capture_output=True, text=True, timeout=600)
    try:
        res = json.loads(r.stdout)["results"][0]
    except (ValueError, KeyError, IndexError):
        return None, f"tb bench exit {r.returncode}: {(r.stderr or r.stdout).strip()[:200]}"
    if not res.get("ok"):
        return None, res.get("error", "failed")
    # auto without a working cuBLASLt warns once that the own kernel runs the products: say so
    note = "cuBLASLt did not start: own kernel" if mode == "auto" and "own GEMM kernel" in r.stderr else None
    return 2.0 * n ** 3 * LAYERS / (res["median_ms"] * 1e-3) / 1e9, note


def torch_rate(n, precision):
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    x = torch.randn(n, n, device="cuda", dtype=dtype)
    ws = [(torch.randn(n, n, device="cuda") / n ** 0.5).to(dtype) for _ in range(LAYERS)]

    def chain():
        h = x
        for w in ws:
            h = h @ w
        return h

    for _ in range(3):
        chain()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(10):
        start.record()
        chain()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return 2.0 * n ** 3 * LAYERS / (times[len(times) // 2] * 1e-3) / 1e9


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    tb = sys.argv[1]
    args = sys.argv[2:]
    precision = "fp32"
    if args[:1] == ["--precision"] and len(args) >= 2:
        precision, args = args[1], args[2:]
    if precision not in ("fp32", "bf16"):
        print(f"--precision takes fp32 or bf16, not '{precision}'")
        return 2
    sizes = [int(s) for s in args] or [512, 1024, 2048, 4096]
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e} (pip install numpy onnx)")
        return 77
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = os.path.join(tmp, f"gemm_chain_{n}.onnx")
            write_model(path, n)
            parts = []
            for label, mode in (("tb cuBLASLt", "auto"), ("tb own kernel", "own")):
                rate, err = tb_rate(tb, path, n, mode, precision)
                if rate:
                    parts.append(f"{label} {rate:.1f} GFLOP/s" + (f" ({err})" if err else ""))
                else:
                    parts.append(f"{label} FAILED ({err})")
                failed = failed or rate is None
            t = torch_rate(n, precision)
            parts.append(f"torch {precision} {t:.1f} GFLOP/s" if t else "torch not installed (or no CUDA)")
            print(f"N={n} {precision} " + " | ".join(parts), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
