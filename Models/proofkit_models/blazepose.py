"""MediaPipe BlazePose (pose detector and full landmark model) from the pinned mediapipe 0.10.21
wheel's .tflite files to ONNX, with a converter of our own (tflite_reader.py + onnx.helper; no
TensorFlow, no tflite2onnx), checked against the TFLite interpreter of ai-edge-litert on photos.

Conversion (opset 17, IR 8, like the other converters here):
- DEQUANTIZE (fp16 -> fp32) and DENSIFY (sparse CSR weights -> dense) act on constants only, so
  they are folded at conversion time: the ONNX graphs hold fp32 weights and standard ops only.
- The graph input "image" is NHWC float32 like the .tflite's; it is transposed once to NCHW,
  and every convolution runs in NCHW. A tensor is transposed back to NHWC only where TFLite's
  layout matters: before a RESHAPE (the detector's anchor order is NHWC's row-major order) and at
  a 4-D graph output, so every output has the .tflite's shape and element order.
- CONV_2D -> Conv (OHWI -> OIHW weights), DEPTHWISE_CONV_2D -> Conv with group = channels
  ([1,H,W,C*M] -> [C*M,1,H,W]); TFLite's SAME padding as explicit pads (the extra pixel, when the
  total is odd, at the end, as TFLite does); fused RELU6 -> Clip(0, 6), RELU -> Relu.
- ADD -> Add; PAD -> Pad (constant 0, NHWC paddings reordered to NCHW); MAX_POOL_2D -> MaxPool;
  RESIZE_BILINEAR (half_pixel_centers) -> Resize linear, half_pixel; DEPTH_TO_SPACE -> DepthToSpace
  DCR (TFLite's NHWC order is DCR's); CONCATENATION -> Concat (axis mapped to the layout);
  RESHAPE -> Reshape; LOGISTIC -> Sigmoid.
"""
from __future__ import annotations

import io
import json
import os
import sys
import time
import zipfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from . import tflite_reader as tr

OPSET = 17
IR_VERSION = 8

# The .tflite files are the same bytes in every platform wheel of mediapipe 0.10.21 (they are
# architecture-independent data), so the pinned manylinux x86_64 cp311 wheel serves every machine.
DETECTOR_MEMBER = "mediapipe/modules/pose_detection/pose_detection.tflite"
LANDMARK_MEMBER = "mediapipe/modules/pose_landmark/pose_landmark_full.tflite"
DETECTOR = "pose_detection.onnx"
LANDMARK = "pose_landmark_full.onnx"
PIPELINE = "pose_pipeline.json"
REFERENCE = "pose_reference.json"

# Graph names: TFLite output tensor name -> ONNX output name (shapes as in the .tflite, NHWC).
DETECTOR_OUTPUTS = {"Identity": "regressors", "Identity_1": "scores"}
LANDMARK_OUTPUTS = {"Identity": "landmarks", "Identity_1": "presence", "Identity_2": "segmentation",
                    "Identity_3": "heatmap", "Identity_4": "world_landmarks"}

HANDLED = {"CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "PAD", "MAX_POOL_2D", "RESIZE_BILINEAR",
           "RESHAPE", "LOGISTIC", "DEQUANTIZE", "DENSIFY", "DEPTH_TO_SPACE", "CONCATENATION"}
NHWC_TO_NCHW = [0, 3, 1, 2]
NCHW_TO_NHWC = [0, 2, 3, 1]
AXIS_NHWC_TO_NCHW = {0: 0, 1: 2, 2: 3, 3: 1}


def _same_pads(size: int, k: int, stride: int, dilation: int) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class _Converter:
    def __init__(self, g: tr.Graph, output_names: dict[str, str]):
        self.g = g
        self.output_names = output_names
        self.nodes, self.inits = [], []
        self.consts: dict[int, np.ndarray] = {}   # tensor index -> folded constant
        self.values: dict[int, tuple[str, str]] = {}  # tensor index -> (onnx name, "nchw"|"nhwc"|"plain")
        self.cache: dict[tuple[str, str], str] = {}  # (name, target layout) -> transposed name
        self.n = 0
        self.shared: dict = {}

    # -------------------------------------------------------------- helpers
    def fresh(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def init(self, hint: str, arr: np.ndarray) -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def scalar(self, value: float) -> str:
        key = ("f32", value)
        if key not in self.shared:
            self.shared[key] = self.init("c", np.array(value, dtype=np.float32))
        return self.shared[key]

    def ints(self, values: list[int]) -> str:
        key = ("i64", tuple(values))
        if key not in self.shared:
            self.shared[key] = self.init("c", np.array(values, dtype=np.int64))
        return self.shared[key]

    def node(self, op: str, inputs: list[str], hint: str, **attrs) -> str:
        out = self.fresh(hint)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def const(self, i: int) -> np.ndarray:
        if i in self.consts:
            return self.consts[i]
        t = self.g.tensors[i]
        if t.data is None or t.sparsity is not None:
            raise ValueError(f"tensor {t.name!r} is not a dense constant")
        return t.data

    def value(self, i: int, layout: str) -> str:
        """Tensor i as an ONNX value in the wanted layout (nchw/nhwc for 4-D)."""
        name, have = self.values[i]
        if layout == "plain":  # TFLite's own element order: NHWC for a 4-D tensor
            layout = "nhwc" if have == "nchw" else have
        if have == "plain" or have == layout:
            return name
        key = (name, layout)
        if key not in self.cache:
            perm = NHWC_TO_NCHW if layout == "nchw" else NCHW_TO_NHWC
            self.cache[key] = self.node("Transpose", [name], "tr", perm=perm)
        return self.cache[key]

    def set(self, i: int, name: str, layout: str) -> None:
        self.values[i] = (name, layout)

    def activation(self, x: str, act: str | None) -> str:
        if act is None:
            return x
        if act == "RELU6":
            return self.node("Clip", [x, self.scalar(0.0), self.scalar(6.0)], "relu6")
        if act == "RELU":
            return self.node("Relu", [x], "relu")
        if act == "RELU_N1_TO_1":
            return self.node("Clip", [x, self.scalar(-1.0), self.scalar(1.0)], "relu1")
        if act == "TANH":
            return self.node("Tanh", [x], "tanh")
        raise ValueError(f"activation {act}")

    def conv_pads(self, op: tr.Operator, kh: int, kw: int) -> list[int]:
        if op.options["padding"] == "VALID":
            return [0, 0, 0, 0]
        _, h, w, _ = self.g.tensors[op.inputs[0]].shape
        (sh, sw), (dh, dw) = op.options["stride"], op.options.get("dilation", (1, 1))
        top, bottom = _same_pads(h, kh, sh, dh)
        left, right = _same_pads(w, kw, sw, dw)
        return [top, left, bottom, right]

    # -------------------------------------------------------------- ops
    def convert(self, op: tr.Operator) -> None:
        g, k = self.g, op.op
        out = op.outputs[0]
        if k == "DEQUANTIZE":
            src = g.tensors[op.inputs[0]]
            if op.inputs[0] not in self.consts and src.data is None:
                raise ValueError(f"DEQUANTIZE of a non-constant ({src.name!r})")
            if src.dtype != np.float16:
                raise ValueError(f"DEQUANTIZE of {src.dtype} ({src.name!r}): only fp16 weights are handled")
            a = tr.densify(src) if src.sparsity is not None and op.inputs[0] not in self.consts else self.const(op.inputs[0])
            self.consts[out] = a.astype(np.float32)  # exact: every fp16 value is an fp32 value
            return
        if k == "DENSIFY":
            src = g.tensors[op.inputs[0]]
            if src.data is None or src.sparsity is None:
                raise ValueError(f"DENSIFY of {src.name!r}: not a sparse constant")
            self.consts[out] = tr.densify(src)
            return
        if k in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            w = self.const(op.inputs[1]).astype(np.float32)
            _, kh, kw, _ = w.shape
            x = self.value(op.inputs[0], "nchw")
            if k == "CONV_2D":
                wt = w.transpose(0, 3, 1, 2)  # OHWI -> OIHW
                group = 1
            else:
                cin = g.tensors[op.inputs[0]].shape[3]
                wt = w.transpose(3, 0, 1, 2)  # [1,H,W,C*M] -> [C*M,1,H,W]
                group = cin
                if w.shape[3] != cin * op.options["depth_multiplier"]:
                    raise ValueError("depthwise channels")
            ins = [x, self.init("w", wt)]
            if len(op.inputs) > 2 and op.inputs[2] >= 0:
                ins.append(self.init("b", self.const(op.inputs[2]).astype(np.float32)))
            y = self.node("Conv", ins, "conv", kernel_shape=[kh, kw], strides=list(op.options["stride"]),
                          dilations=list(op.options["dilation"]), pads=self.conv_pads(op, kh, kw), group=group)
            self.set(out, self.activation(y, op.options["activation"]), "nchw")
            return
        if k == "ADD":
            a, b = op.inputs
            if a in self.values and b in self.values:
                layout = self.values[a][1] if self.values[a][1] != "plain" else self.values[b][1]
                xa, xb = self.value(a, layout), self.value(b, layout)
            else:
                raise ValueError("ADD with a constant operand is not handled")
            y = self.node("Add", [xa, xb], "add")
            self.set(out, self.activation(y, op.options["activation"]), layout)
            return
        if k == "PAD":
            p = self.const(op.inputs[1]).astype(np.int64)  # [4,2] NHWC
            begin, end = p[:, 0][NHWC_TO_NCHW], p[:, 1][NHWC_TO_NCHW]
            x = self.value(op.inputs[0], "nchw")
            y = self.node("Pad", [x, self.ints(begin.tolist() + end.tolist())], "pad", mode="constant")
            self.set(out, y, "nchw")
            return
        if k == "MAX_POOL_2D":
            fh, fw = op.options["filter"]
            x = self.value(op.inputs[0], "nchw")
            y = self.node("MaxPool", [x], "pool", kernel_shape=[fh, fw], strides=list(op.options["stride"]),
                          pads=self.conv_pads(op, fh, fw))
            self.set(out, self.activation(y, op.options["activation"]), "nchw")
            return
        if k == "RESIZE_BILINEAR":
            o = op.options
            mode = "align_corners" if o["align_corners"] else ("half_pixel" if o["half_pixel_centers"] else "asymmetric")
            h, w = (int(v) for v in self.const(op.inputs[1]))
            n, _, _, c = g.tensors[op.inputs[0]].shape
            x = self.value(op.inputs[0], "nchw")
            y = self.node("Resize", [x, "", "", self.ints([n, c, h, w])], "resize", mode="linear",
                          coordinate_transformation_mode=mode)
            self.set(out, y, "nchw")
            return
        if k == "DEPTH_TO_SPACE":
            x = self.value(op.inputs[0], "nchw")
            y = self.node("DepthToSpace", [x], "d2s", blocksize=op.options["block_size"], mode="DCR")
            self.set(out, y, "nchw")
            return
        if k == "CONCATENATION":
            rank = len(g.tensors[out].shape)
            axis = op.options["axis"] % rank
            layouts = {self.values[i][1] for i in op.inputs}
            layout = "nchw" if rank == 4 and "nchw" in layouts else ("nhwc" if rank == 4 else "plain")
            if layout == "nchw":
                axis = AXIS_NHWC_TO_NCHW[axis]
            y = self.node("Concat", [self.value(i, layout) for i in op.inputs], "concat", axis=axis)
            self.set(out, self.activation(y, op.options["activation"]), layout)
            return
        if k == "RESHAPE":
            shape = g.tensors[out].shape
            x = self.value(op.inputs[0], "plain")  # NHWC element order, as TFLite reshapes
            y = self.node("Reshape", [x, self.ints(shape)], "reshape")
            self.set(out, y, "nhwc" if len(shape) == 4 else "plain")
            return
        if k == "LOGISTIC":
            name, layout = self.values[op.inputs[0]]
            self.set(out, self.node("Sigmoid", [name], "sigmoid"), layout)
            return
        raise ValueError(f"operator {k} is not handled")

    def run(self, doc: str, graph_name: str):
        g = self.g
        found = {op.op for op in g.operators} - HANDLED
        if found:
            raise ValueError(f"operators not handled: {sorted(found)}")
        if len(g.inputs) != 1:
            raise ValueError("expected one input")
        inp = g.tensors[g.inputs[0]]
        self.set(inp.index, "image", "nhwc" if len(inp.shape) == 4 else "plain")
        for op in g.operators:
            self.convert(op)
        outputs = []
        for i in g.outputs:
            t = g.tensors[i]
            want = self.output_names[t.name]
            x = self.value(i, "nhwc" if len(t.shape) == 4 else "plain")
            self.nodes.append(helper.make_node("Identity", [x], [want], name=want))
            outputs.append(helper.make_tensor_value_info(want, TensorProto.FLOAT, t.shape))
        graph = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info("image", TensorProto.FLOAT, inp.shape)], outputs,
            initializer=self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="proofkit_models.blazepose", doc_string=doc)
        model.ir_version = IR_VERSION
        import onnx
        onnx.checker.check_model(model, full_check=True)
        return model


def convert(tflite_bytes: bytes, output_names: dict[str, str], doc: str, graph_name: str):
    """The ONNX ModelProto of a float BlazePose .tflite."""
    return _Converter(tr.read(tflite_bytes), output_names).run(doc, graph_name)
