#!/usr/bin/env python3
"""Rewrites the generated parts of docs/conformance.md (from "## Results" to the end) and README.md's
"## Conformance" section from a run of tb_conformance. Python 3 standard library only.

  python3 tests/conformance/update_docs.py build/tests/conformance/tb_conformance

Run it after an operator changes; then raise the floors in tests/conformance/expected_failures.txt to the
new pass counts it prints."""
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# The operators issue 4 names: CNNs, transformers, RNNs, control flow, quantisation.
ISSUE_OPS = """Conv ConvTranspose BatchNormalization MaxPool AveragePool GlobalAveragePool Resize Pad Concat Flatten
Clip Relu LeakyRelu PRelu Sigmoid HardSigmoid HardSwish Softmax MatMul Gemm Add Sub Mul Div Pow Sqrt Erf Tanh Exp
Log Neg Reciprocal LayerNormalization Gather Reshape Transpose Squeeze Unsqueeze Slice Split Where Equal Less Greater
Not And Expand Shape Size ConstantOfShape Constant Range ReduceMean ReduceSum ReduceMax Cast Identity Dropout Einsum
LSTM GRU If Loop QuantizeLinear DequantizeLinear""".split()


def run(runner, *args):
    out = subprocess.run([runner, *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"{runner} {' '.join(args)} exited {out.returncode}:\n{out.stderr}")
    return out.stdout


def cell(s):
    return s.replace("|", "/").replace("\n", " ")


def results_markdown(runner, node, node1, models):
    lines = ["## Results", "",
             "Made by `tests/conformance/update_docs.py` from `tb_conformance` runs on this machine (AMD EPYC",
             "Zen 5, Debian 12, libonnx-testdata 1.12), the CPU backend.", ""]
    n1 = node1["node"]
    lines += ["### Node tests at O1", "",
              f"Node tests at O1: **{n1['passed']} passed**, {n1['failed']} failed, {n1['skipped']} skipped of {n1['total']}.", ""]
    lines += ["### Model tests at O0", "", run(runner, "--suite", "models", "--markdown", "--expected", "/dev/null").rstrip(), ""]
    lines += ["### Node tests at O0, per operator", "",
              "`(multi-node)` counts the function-expanded tests (`*_expanded`) and the other node tests whose model",
              "has more than one node. A skipped test's reason is in `--verbose` and `--json`.", "",
              run(runner, "--suite", "node", "--markdown", "--expected", "/dev/null").rstrip(), ""]
    skipped = [t for t in node["tests"] if t["result"] == "skipped" and t["op"] in ISSUE_OPS]
    lines += ["### Skipped tests of issue 4's operators", "",
              "Every node test of the operators issue 4 names passes at O0 except the expected failures below and",
              "these skipped ones (the library's reason, or the runner's when the test data has no TensorBridge type):", "",
              "| test | operator | reason |", "| --- | --- | --- |"]
    for t in skipped:
        reason = t["reason"].replace(f"/usr/share/libonnx-testdata/data/node/{t['name']}/model.onnx: ", "")
        lines.append(f"| {t['name']} | {t['op']} | {cell(reason)} |")
    expected = run(runner, "--suite", "node", "--filter", "test_abs", "--markdown")
    table = expected[expected.index("| expected failure"):] if "| expected failure" in expected else "None.\n"
    lines += ["", "## Expected failures", "",
              "From `tests/conformance/expected_failures.txt` (a test without a reason there is refused). A listed",
              "test may fail at every level unless a level is shown.", "", table.rstrip(), ""]
    return "\n".join(lines) + "\n"


def readme_section(node, node1, models):
    ops = node["operators"]
    cells = []
    for op in ISSUE_OPS:
        c = ops.get(op)
        if not c:
            cells.append((op, "no tests"))
            continue
        text = f"{c['passed']}/{c['total']}"
        if c["failed"]:
            text += f" ({c['failed']} failed)"
        if c["skipped"]:
            text += f" ({c['skipped']} skipped)"
        cells.append((op, text))
    cols = 3
    rows = (len(cells) + cols - 1) // cols
    grid = ["| " + " | ".join(["operator", "passed / tests"] * cols) + " |",
            "| " + " | ".join(["---", "---:"] * cols) + " |"]
    for r in range(rows):
        row = []
        for c in range(cols):
            i = c * rows + r
            row += list(cells[i]) if i < len(cells) else ["", ""]
        grid.append("| " + " | ".join(row) + " |")
    n, n1, m = node["node"], node1["node"], models["models"]
    return f"""## Conformance

The ONNX backend tests of Debian's `libonnx-testdata` (ONNX 1.12), run by `tb_conformance` on the CPU
(docs/conformance.md: the command, the rules, the table for every operator, the skipped tests and the
expected failures with their reasons). An output passes when every element is within
1e-7 + 1e-3 * |expected| (ONNX's own runner's defaults), integers and bool exactly; a test is skipped when
load or prepare says `TB_ERR_UNSUPPORTED` (an operator or type not implemented).

| suite | level | passed | failed | skipped | tests |
| --- | --- | ---: | ---: | ---: | ---: |
| node (one operator each, {len(ops)} operators) | O0 | **{n['passed']}** | {n['failed']} | {n['skipped']} | {n['total']} |
| node | O1 | **{n1['passed']}** | {n1['failed']} | {n1['skipped']} | {n1['total']} |
| models (pytorch-converted, pytorch-operator, simple) | O0 | **{m['passed']}** | {m['failed']} | {m['skipped']} | {m['total']} |

Every failure is listed with its reason in tests/conformance/expected_failures.txt: the CTest entries
`conformance_node_O0`, `conformance_models_O0` and `conformance_node_O1` fail on any other failure, or when
fewer tests pass than the floor recorded there. The operators of issue 4's CNN, transformer, RNN, control
flow and quantisation lists, node tests at O0:

""" + "\n".join(grid) + """

The bundled demo models (models/) match ONNX Runtime within 1e-5 + 1e-4 * |reference| at O0 and O1
(tests/unit/test_models.c, and `tb run --compare-dir` in the demo).

"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    runner = sys.argv[1]
    node = json.loads(run(runner, "--suite", "node", "--json", "--expected", "/dev/null"))
    node1 = json.loads(run(runner, "--suite", "node", "--level", "O1", "--json", "--expected", "/dev/null"))
    models = json.loads(run(runner, "--suite", "models", "--json", "--expected", "/dev/null"))
    doc_path = os.path.join(ROOT, "docs", "conformance.md")
    doc = open(doc_path).read()
    doc = doc[:doc.index("## Results")] + results_markdown(runner, node, node1, models)
    open(doc_path, "w").write(doc)
    readme_path = os.path.join(ROOT, "README.md")
    readme = open(readme_path).read()
    a, b = readme.index("## Conformance"), readme.index("## Status")
    open(readme_path, "w").write(readme[:a] + readme_section(node, node1, models) + readme[b:])
    for name, d, key in (("node O0", node, "node"), ("models O0", models, "models"), ("node O1", node1, "node")):
        print(f"{name}: {d[key]['passed']} passed, {d[key]['failed']} failed, {d[key]['skipped']} skipped")


if __name__ == "__main__":
    main()
