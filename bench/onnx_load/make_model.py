"""Write a model with one large initializer (MiB given as argv[2]) for the load benchmark: y = x + w.
With a third argument "external", the weight goes to an external data file next to the model."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

path, mib = sys.argv[1], int(sys.argv[2])
n = mib * 1024 * 1024 // 4
w = numpy_helper.from_array(np.arange(n, dtype=np.float32), name="w")
graph = helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "load_bench",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
if len(sys.argv) > 3 and sys.argv[3] == "external":
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=path.rsplit("/", 1)[-1] + ".data", size_threshold=0)
else:
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
