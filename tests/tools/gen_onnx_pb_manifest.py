#!/usr/bin/python3
"""Write tests/fixtures/onnx_testdata/pb_manifest.txt: for every test_data_set .pb file of Debian's
libonnx-testdata (node, pytorch-converted, pytorch-operator, simple), what numpy gives for it:
    <path relative to data/> <kind> <onnx elem_type> <dim,dim,...|scalar>
kind is "tensor" for a TensorProto, or "sequence"/"optional"/"map" when the model's matching input or
output is not a tensor (those files hold other messages and are not read as tensors).
Needs python3-onnx (Debian's 1.12 is fine). Run once; the output is committed."""
import glob
import os
import sys

import onnx
from onnx import numpy_helper

ROOT = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def kind_of(type_proto):
    which = type_proto.WhichOneof("value")
    return {"tensor_type": "tensor", "sequence_type": "sequence", "optional_type": "optional",
            "map_type": "map"}.get(which, "other")


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/onnx_testdata/pb_manifest.txt"
    lines = []
    for suite in SUITES:
        for test in sorted(glob.glob(os.path.join(ROOT, suite, "*"))):
            model_path = os.path.join(test, "model.onnx")
            if not os.path.exists(model_path):
                continue
            model = onnx.load(model_path, load_external_data=False)
            inits = {i.name for i in model.graph.initializer}
            inputs = [i for i in model.graph.input if i.name not in inits]
            outputs = list(model.graph.output)
            for pb in sorted(glob.glob(os.path.join(test, "test_data_set_*", "*.pb"))):
                base = os.path.basename(pb)
                which, index = base[:-3].split("_")
                decl = (inputs if which == "input" else outputs)
                index = int(index)
                kind = kind_of(decl[index].type) if index < len(decl) else "tensor"
                rel = os.path.relpath(pb, ROOT)
                if kind != "tensor":
                    lines.append(f"{rel} {kind} 0 -")
                    continue
                t = onnx.TensorProto()
                with open(pb, "rb") as f:
                    t.ParseFromString(f.read())
                dims = ",".join(str(d) for d in numpy_helper.to_array(t).shape) or "scalar"
                lines.append(f"{rel} tensor {t.data_type} {dims}")
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} files -> {out_path}")


if __name__ == "__main__":
    main()
