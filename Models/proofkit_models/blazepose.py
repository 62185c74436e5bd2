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


# ---------------------------------------------------------------------------- the build step

DOC_DETECTOR = ("MediaPipe BlazePose detector (pose_detection.tflite, Apache-2.0) from PyPI mediapipe 0.10.21, "
                "converted without TensorFlow by proofkit_models.blazepose (fp16 and sparse weights folded to fp32). "
                "Input 'image' [1,224,224,3] NHWC RGB in [-1,1], letterboxed; outputs 'regressors' [1,2254,12] "
                "and 'scores' [1,2254,1] (logits), anchors and decoding in pose_pipeline.json.")
DOC_LANDMARK = ("MediaPipe BlazePose GHUM 3D landmark model, full (pose_landmark_full.tflite, Apache-2.0) from PyPI "
                "mediapipe 0.10.21, converted without TensorFlow by proofkit_models.blazepose (fp16 weights folded "
                "to fp32). Input 'image' [1,256,256,3] NHWC RGB in [0,1], the rotated ROI; outputs 'landmarks' "
                "[1,195] (39 x x,y,z,visibility,presence in 256-pixel units / logits), 'presence' [1,1] "
                "(probability), 'segmentation' [1,256,256,1] (logits), 'heatmap' [1,64,64,39] (logits), "
                "'world_landmarks' [1,117] (metres).")

# The check photos: (role, member in that wheel, short name, licence, shows a person)
PHOTOS = [
    ("skimage", "skimage/data/astronaut.png", "astronaut",
     "public domain (NASA; skimage/data/_fetchers.py: no known copyright restrictions)", True),
    ("skimage", "skimage/data/camera.png", "camera",
     "CC0 (Lav Varshney; skimage/data/_fetchers.py)", True),
    ("matplotlib", "matplotlib/mpl-data/sample_data/grace_hopper.jpg", "grace_hopper",
     "public domain (US Navy photograph; the file's comment names commons.wikimedia.org File:Grace_Hopper.jpg)", True),
    ("skimage", "skimage/data/coffee.png", "coffee", "CC0 (Rachel Michetti; skimage/data/_fetchers.py)", False),
    ("skimage", "skimage/data/chelsea.png", "chelsea", "CC0 (Stefan van der Walt; skimage/data/_fetchers.py)", False),
    ("skimage", "skimage/data/rocket.jpg", "rocket", "public domain (SpaceX; skimage/data/_fetchers.py)", False),
]
# Raw tensors kept per photo for the Swift pipeline's tests (little-endian float32, C order, shapes in
# pose_reference.json); outputs are the TFLite interpreter's (the reference), not the ONNX graphs'.
FIXTURE_TENSORS = ["detector_input", "regressors", "scores", "landmark_input", "landmarks", "presence",
                   "heatmap", "world_landmarks"]

# Tolerances (the build fails above them), per output: max |ONNX - TFLite| <= REL_TOL * max(1, max |TFLite|).
# Both sides compute in fp32 with the same fp32 weights (the fp16 values widened exactly), so they differ
# only by the order of the sums in each convolution: about 1e-7 relative per op, a few 1e-6 to 1e-5 of an
# output's range after ~100 layers (measured: see pose_reference.json). 1e-4 of the range leaves
# 10x room over that and is still far below anything the pipeline sees: 0.02 pixel of the 224-pixel
# detector tensor for a box or keypoint (|regressors| reach ~200), 0.02 pixel of the 256-pixel crop for
# a landmark, against the issue's bound of 2 % of the image diagonal. Scores and presence are checked
# the same way, and the decoded decisions must agree exactly (same detections above 0.5, presence on
# the same side of 0.5).
# The segmentation logits are the exception: they reach +-1700 and come out of a chain of five bilinear
# upsamplings and adds that cancel large terms, so reordered fp32 sums move them by up to ~1e-3 of
# their range. TFLite with its default XNNPACK delegate (what MediaPipe runs) differs from the ONNX
# graph there by up to 1.4 on the check photos (and by 4, 2.9e-3 of the range, on other crops of them
# tried while writing this), more than the builtin kernels do (pose_reference.json, *_xnnpack: XNNPACK
# vs ONNX, for information). So the raw
# logits get SEGMENTATION_REL_TOL = 5e-3, and the mask MediaPipe uses, sigmoid(logits), is checked
# absolutely: max |difference| <= MASK_TOL = 0.01 (proofkit does not use the mask today).
REL_TOL = 1e-4
SEGMENTATION_REL_TOL = 5e-3
MASK_TOL = 0.01


def _interpreter(data: bytes, xnnpack: bool):
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
    kind = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    it = Interpreter(model_content=data, num_threads=1, experimental_op_resolver_type=kind)
    it.allocate_tensors()
    return it


def _run_tflite(it, x: np.ndarray, names: dict[str, str]) -> dict[str, np.ndarray]:
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    return {names[d["name"]]: it.get_tensor(d["index"]).copy() for d in it.get_output_details()}


def _run_onnx(sess, x: np.ndarray) -> dict[str, np.ndarray]:
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, {"image": x})))


def _diffs(ref: dict, got: dict) -> dict:
    out = {}
    for k in ref:
        a, g = ref[k].astype(np.float64), got[k].astype(np.float64)
        d = np.abs(a - g)
        scale = max(1.0, float(np.abs(a).max()))
        rel = SEGMENTATION_REL_TOL if k == "segmentation" else REL_TOL
        out[k] = {"max_abs_diff": float(d.max()), "mean_abs_diff": float(d.mean()),
                  "max_abs_reference": float(np.abs(a).max()), "tolerance": rel * scale}
        if k == "segmentation":
            def sig(v):
                return 0.5 * (1.0 + np.tanh(0.5 * v))
            dm = np.abs(sig(a) - sig(g))
            out["segmentation_mask"] = {"max_abs_diff": float(dm.max()), "mean_abs_diff": float(dm.mean()),
                                        "max_abs_reference": 1.0, "tolerance": MASK_TOL}
    return out


def _round(x, n=6):
    if isinstance(x, float):
        return round(x, n)
    if isinstance(x, dict):
        return {k: _round(v, n) for k, v in x.items()}
    if isinstance(x, list):
        return [_round(v, n) for v in x]
    return x


def build(b) -> None:
    import onnxruntime as ort
    from PIL import Image

    from . import blazepose_pipeline as pp
    from .build import sha256_bytes, write_atomic

    t0 = time.time()
    tflite = {"detector": b.member("mediapipe", DETECTOR_MEMBER), "landmark": b.member("mediapipe", LANDMARK_MEMBER)}
    det_model = convert(tflite["detector"], DETECTOR_OUTPUTS, DOC_DETECTOR, "blazepose_detector").SerializeToString()
    lm_model = convert(tflite["landmark"], LANDMARK_OUTPUTS, DOC_LANDMARK, "blazepose_landmark_full").SerializeToString()
    print(f"    blazepose: converted in {time.time() - t0:.1f} s", file=sys.stderr)

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = {"detector": ort.InferenceSession(det_model, opts, providers=["CPUExecutionProvider"]),
            "landmark": ort.InferenceSession(lm_model, opts, providers=["CPUExecutionProvider"])}
    ref_it = {k: _interpreter(v, xnnpack=False) for k, v in tflite.items()}
    xnn_it = {k: _interpreter(v, xnnpack=True) for k, v in tflite.items()}
    names = {"detector": DETECTOR_OUTPUTS, "landmark": LANDMARK_OUTPUTS}

    import ai_edge_litert
    report = {
        "models": {DETECTOR: {"source": DETECTOR_MEMBER, "tflite_sha256": sha256_bytes(tflite["detector"]),
                              "onnx_sha256": sha256_bytes(det_model)},
                   LANDMARK: {"source": LANDMARK_MEMBER, "tflite_sha256": sha256_bytes(tflite["landmark"]),
                              "onnx_sha256": sha256_bytes(lm_model)}},
        "reference": f"ai-edge-litert {getattr(ai_edge_litert, '__version__', '2.3.0')} TFLite interpreter, builtin "
                     "fp32 kernels (BUILTIN_WITHOUT_DEFAULT_DELEGATES, 1 thread); 'xnnpack' figures (the default "
                     "delegate MediaPipe uses) are for information only",
        "onnxruntime": ort.__version__,
        "tolerance": f"max |ONNX - TFLite| <= {REL_TOL} * max(1, max |TFLite|) per output ({SEGMENTATION_REL_TOL} for the "
                     f"segmentation logits, {MASK_TOL} absolute for the mask sigmoid(segmentation)); the same "
                     "detections and the same presence decision",
        "landmark_input": "the rotated ROI of the TFLite detector's first detection (blazepose_pipeline); on a photo "
                          "with no detection, the letterboxed whole image at 256x256 (so the model is still checked)",
        "fixtures": "pose_ref_<photo>_<tensor>.f32: little-endian float32, C order, shapes below; outputs are TFLite's",
        "photos": {},
    }
    failures = []
    fixtures = {}
    for role, member, short, licence, person in PHOTOS:
        img = np.asarray(Image.open(io.BytesIO(b.member(role, member))).convert("RGB"))
        h, w = img.shape[:2]
        entry = {"source": f"{member} ({role} wheel)", "licence": licence, "size": [w, h], "shows_person": person}
        x_det, pad = pp.detector_input(img)
        r_det = _run_tflite(ref_it["detector"], x_det, names["detector"])
        o_det = _run_onnx(sess["detector"], x_det)
        x_det_xnn = _run_tflite(xnn_it["detector"], x_det, names["detector"])
        entry["detector"] = _diffs(r_det, o_det)
        entry["detector_xnnpack"] = {k: v["max_abs_diff"] for k, v in _diffs(x_det_xnn, o_det).items()}
        dets_ref = pp.weighted_nms(pp.decode(r_det["regressors"], r_det["scores"]))
        dets_onnx = pp.weighted_nms(pp.decode(o_det["regressors"], o_det["scores"]))
        if [d["anchor"] for d in dets_ref] != [d["anchor"] for d in dets_onnx]:
            failures.append(f"{short}: detections differ (TFLite {len(dets_ref)}, ONNX {len(dets_onnx)})")
        if dets_ref:
            det = pp.remove_letterbox(dets_ref[0], pad)
            roi = pp.detection_roi(det, w, h)
            entry["detection"] = {"count": len(dets_ref), "first": det, "roi_pixels": roi}
        else:
            side = max(w, h)
            roi = {"x_center": w / 2, "y_center": h / 2, "width": float(side), "height": float(side), "rotation": 0.0}
            entry["detection"] = {"count": 0, "roi_pixels": roi}
        if bool(dets_ref) != person:
            failures.append(f"{short}: the detector {'finds' if dets_ref else 'misses'} a person "
                            f"({'there is one' if person else 'there is none'})")
        x_lm = pp.landmark_input(img, roi)
        r_lm = _run_tflite(ref_it["landmark"], x_lm, names["landmark"])
        o_lm = _run_onnx(sess["landmark"], x_lm)
        x_lm_xnn = _run_tflite(xnn_it["landmark"], x_lm, names["landmark"])
        entry["landmark"] = _diffs(r_lm, o_lm)
        entry["landmark_xnnpack"] = {k: v["max_abs_diff"] for k, v in _diffs(x_lm_xnn, o_lm).items()}
        entry["presence"] = {"tflite": float(r_lm["presence"][0, 0]), "onnx": float(o_lm["presence"][0, 0])}
        if (r_lm["presence"][0, 0] > 0.5) != (o_lm["presence"][0, 0] > 0.5):
            failures.append(f"{short}: presence on different sides of 0.5")
        for part in ("detector", "landmark"):
            for k, v in entry[part].items():
                if v["max_abs_diff"] > v["tolerance"]:
                    failures.append(f"{short} {k}: max abs diff {v['max_abs_diff']:.3g} > {v['tolerance']:.3g}")
        tensors = {"detector_input": x_det, "landmark_input": x_lm, **r_det, **r_lm}
        entry["fixtures"] = {}
        for k in FIXTURE_TENSORS:
            name = f"pose_ref_{short}_{k}.f32"
            fixtures[name] = np.ascontiguousarray(tensors[k], dtype="<f4").tobytes()
            entry["fixtures"][k] = {"file": name, "shape": list(tensors[k].shape)}
        report["photos"][short] = _round(entry, 9)
    worst = {}
    for e in report["photos"].values():
        for part in ("detector", "landmark"):
            for k, v in e[part].items():
                worst[k] = max(worst.get(k, 0.0), v["max_abs_diff"] / v["tolerance"])
    report["worst_diff_over_tolerance"] = worst
    report["failures"] = failures
    if failures:
        write_atomic(b.path(REFERENCE + ".failed"), json.dumps(report, indent=1) + "\n")
        raise SystemExit("BlazePose ONNX vs TFLite check failed:\n  " + "\n  ".join(failures))
    write_atomic(b.path(DETECTOR), det_model)
    write_atomic(b.path(LANDMARK), lm_model)
    for name, data in fixtures.items():
        write_atomic(b.path(name), data)
    write_atomic(b.path(PIPELINE), json.dumps(pp.PIPELINE, indent=1) + "\n")
    write_atomic(b.path(REFERENCE), json.dumps(report, indent=1) + "\n")


def outputs() -> list[str]:
    """Every file the step writes (for its stamp)."""
    return [DETECTOR, LANDMARK, PIPELINE, REFERENCE] + [
        f"pose_ref_{p[2]}_{k}.f32" for p in PHOTOS for k in FIXTURE_TENSORS]
