"""ONNX models with YOLOv10's exact contract whose outputs the tests control, and the
letterbox arithmetic to place boxes in them (ultralytics' LetterBox / scale_boxes)."""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def constant_detector(path: Path, rows: list[list[float]], size: int = 640) -> Path:
    """A model taking `images` [1, 3, size, size] and giving `rows` (padded to 300) as [1, 300, 6]:
    the output is the constant plus 0 × the sum of the input, so the input stays connected."""
    table = np.zeros((1, 300, 6), dtype=np.float32)
    for index, row in enumerate(rows):
        table[0, index] = row
    graph = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["images"], ["total"], keepdims=0),
            helper.make_node("Mul", ["total", "zero"], ["nothing"]),
            helper.make_node("Add", ["rows", "nothing"], ["output0"]),
        ],
        "constant_yolov10",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 300, 6])],
        [numpy_helper.from_array(table, "rows"), numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path


def costly_detector(path: Path, rows: list[list[float]], size: int = 640, seed: int = 0) -> Path:
    """Like `constant_detector`, but the input first goes through a stack of convolutions costing
    about 7.7 GFLOPs at 640 (YOLOv10-n is 6-9), so inference costs what a real detector's does."""
    rng = np.random.default_rng(seed)
    layers = [(3, 32, 2), (32, 64, 2), (64, 64, 1), (64, 64, 1), (64, 128, 2), (128, 128, 1)]
    nodes, initializers, previous = [], [], "images"
    for index, (cin, cout, stride) in enumerate(layers):
        weight = numpy_helper.from_array((rng.standard_normal((cout, cin, 3, 3)) * 0.05).astype(np.float32), f"w{index}")
        initializers.append(weight)
        nodes.append(helper.make_node("Conv", [previous, f"w{index}"], [f"c{index}"], kernel_shape=[3, 3], strides=[stride, stride], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{index}"], [f"r{index}"]))
        previous = f"r{index}"
    table = np.zeros((1, 300, 6), dtype=np.float32)
    for index, row in enumerate(rows):
        table[0, index] = row
    nodes += [
        helper.make_node("ReduceSum", [previous], ["total"], keepdims=0),
        helper.make_node("Mul", ["total", "zero"], ["nothing"]),
        helper.make_node("Add", ["rows", "nothing"], ["output0"]),
    ]
    initializers += [numpy_helper.from_array(table, "rows"), numpy_helper.from_array(np.array(0.0, dtype=np.float32), "zero")]
    graph = helper.make_graph(
        nodes,
        "costly_yolov10",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 300, 6])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path


def wrong_shape_model(path: Path) -> Path:
    """A model whose output is [1, 100, 4]: not YOLOv10's contract."""
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["images"], ["total"], keepdims=0), helper.make_node("Expand", ["total", "shape"], ["output0"])],
        "wrong",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, 640, 640])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 100, 4])],
        [numpy_helper.from_array(np.array([1, 100, 4], dtype=np.int64), "shape")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    path.write_bytes(model.SerializeToString())
    return path


class Letterbox:
    """Where an image of width × height lands in a size × size input."""

    def __init__(self, width: int, height: int, size: int = 640):
        self.gain = min(size / height, size / width)
        inner_w, inner_h = round(width * self.gain), round(height * self.gain)
        self.pad_x = round((size - inner_w) / 2 - 0.1)
        self.pad_y = round((size - inner_h) / 2 - 0.1)

    def to_input(self, x0, y0, x1, y1) -> list[float]:
        g = self.gain
        return [x0 * g + self.pad_x, y0 * g + self.pad_y, x1 * g + self.pad_x, y1 * g + self.pad_y]
