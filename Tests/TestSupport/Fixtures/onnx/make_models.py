#!/usr/bin/env python3
"""Writes the tiny ONNX models that Tests/InferenceTests run (each well under 10 KB).

Run from the package root with the project's venv (needs the `onnx` package):

    .deps/venv/bin/python Tests/TestSupport/Fixtures/onnx/make_models.py

The output is deterministic (fixed weights, no randomness), so re-running it gives the same bytes.
Opset 13 and IR version 8 keep the models loadable by ONNX Runtime 1.15, the oldest release
proofkit accepts.
"""
import os
# onnxruntime writes a telemetry cache (~/.cache/Microsoft) on import unless this is set; every
# child process inherits it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 13)]


def save(graph, name):
    model = helper.make_model(graph, opset_imports=OPSET, producer_name="proofkit-tests")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(HERE, name)
    onnx.save(model, path)
    print(f"{name}: {os.path.getsize(path)} bytes")


def add_relu():
    """Two outputs: sum = a + b and relu = max(sum, 0); a and b are float32 [batch, 3]."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["batch", 3])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["batch", 3])
    total = helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["batch", 3])
    relu = helper.make_tensor_value_info("relu", TensorProto.FLOAT, ["batch", 3])
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"]),
        helper.make_node("Relu", ["sum"], ["relu"]),
    ]
    save(helper.make_graph(nodes, "add_relu", [a, b], [total, relu]), "add_relu.onnx")


# Fixed weights of the dense layer: y = relu(x @ W + bias), x float32 [batch, 4], W [4, 2].
DENSE_W = [0.5, -1.0,
           1.5, 2.0,
           -2.0, 0.25,
           1.0, -0.5]
DENSE_BIAS = [0.1, -0.2]


def dense_relu():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])
    weights = helper.make_tensor("W", TensorProto.FLOAT, [4, 2], DENSE_W)
    bias = helper.make_tensor("bias", TensorProto.FLOAT, [2], DENSE_BIAS)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"]),
        helper.make_node("Add", ["xw", "bias"], ["pre"]),
        helper.make_node("Relu", ["pre"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "dense_relu", [x], [y], initializer=[weights, bias])
    save(graph, "dense_relu.onnx")


def int64_affine():
    """ids int64 [n] -> scaled = ids * 3 + 1 (int64), half = float(ids) / 2 (float32)."""
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])
    scaled = helper.make_tensor_value_info("scaled", TensorProto.INT64, ["n"])
    half = helper.make_tensor_value_info("half", TensorProto.FLOAT, ["n"])
    three = helper.make_tensor("three", TensorProto.INT64, [], [3])
    one = helper.make_tensor("one", TensorProto.INT64, [], [1])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [
        helper.make_node("Mul", ["ids", "three"], ["tripled"]),
        helper.make_node("Add", ["tripled", "one"], ["scaled"]),
        helper.make_node("Cast", ["ids"], ["ids_float"], to=TensorProto.FLOAT),
        helper.make_node("Div", ["ids_float", "two"], ["half"]),
    ]
    graph = helper.make_graph(nodes, "int64_affine", [ids], [scaled, half], initializer=[three, one, two])
    save(graph, "int64_affine.onnx")


def small_types():
    """One input and output per small element type:
    u8 uint8 [n] -> u8_out = u8 (Identity); i8 int8 [n] -> i8_neg = -i8;
    i32 int32 [n] -> i32_double = i32 * 2; f64 float64 [n] -> f64_square = f64 * f64;
    flags bool [n] -> flags_not = not flags; and mixed = float(u8) + float(i8), float32 [n]."""
    def info(name, kind):
        return helper.make_tensor_value_info(name, kind, ["n"])

    inputs = [info("u8", TensorProto.UINT8), info("i8", TensorProto.INT8), info("i32", TensorProto.INT32),
              info("f64", TensorProto.DOUBLE), info("flags", TensorProto.BOOL)]
    outputs = [info("u8_out", TensorProto.UINT8), info("i8_neg", TensorProto.INT8),
               info("i32_double", TensorProto.INT32), info("f64_square", TensorProto.DOUBLE),
               info("flags_not", TensorProto.BOOL), info("mixed", TensorProto.FLOAT)]
    two = helper.make_tensor("two32", TensorProto.INT32, [], [2])
    nodes = [
        helper.make_node("Identity", ["u8"], ["u8_out"]),
        helper.make_node("Neg", ["i8"], ["i8_neg"]),
        helper.make_node("Mul", ["i32", "two32"], ["i32_double"]),
        helper.make_node("Mul", ["f64", "f64"], ["f64_square"]),
        helper.make_node("Not", ["flags"], ["flags_not"]),
        helper.make_node("Cast", ["u8"], ["u8f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["i8"], ["i8f"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["u8f", "i8f"], ["mixed"]),
    ]
    save(helper.make_graph(nodes, "small_types", inputs, outputs, initializer=[two]), "small_types.onnx")


def add_relu_ort_format():
    """add_relu.onnx saved by ONNX Runtime in its own format (add_relu.ort), at optimisation level
    "basic" (portable: no CPU-specific layouts). Needs the `onnxruntime` package."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.optimized_model_filepath = os.path.join(HERE, "add_relu.ort")
    opts.add_session_config_entry("session.save_model_format", "ORT")
    ort.InferenceSession(os.path.join(HERE, "add_relu.onnx"), opts, providers=["CPUExecutionProvider"])


if __name__ == "__main__":
    add_relu()
    add_relu_ort_format()
    dense_relu()
    int64_affine()
    small_types()
