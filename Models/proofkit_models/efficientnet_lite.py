"""EfficientNet-Lite0 from its PyTorch state dict to ONNX, with a numpy reference forward pass.

The architecture follows `efficientnet-lite-pytorch` 0.1.0 (utils.efficientnet_lite and
model.EfficientNet with width 1.0, depth 1.0, 224 px):
- stem: 3x3 conv stride 2, 3 -> 32 channels, batch norm, ReLU6;
- 16 MBConv blocks without squeeze-excitation (Lite drops SE), stages
  (repeats, kernel, stride, expand, in, out):
  (1,3,1,1,32,16) (2,3,2,6,16,24) (2,5,2,6,24,40) (3,3,2,6,40,80) (3,5,1,6,80,112)
  (4,5,2,6,112,192) (1,3,1,6,192,320); each block is [1x1 expand conv, BN, ReLU6] (when expand
  is not 1), depthwise kxk conv, BN, ReLU6, 1x1 project conv, BN, and an identity skip when the
  stride is 1 and in == out (true for every block after the first of its stage);
- head: 1x1 conv 320 -> 1280, BN, ReLU6, global average pool (the 1280-d embedding), then a
  fully connected layer to 1000 logits.
Convolutions pad like TensorFlow "SAME": total padding (out-1)*stride + k - in, with the smaller
half before. For 224 px input that is (0 before, 1 after) for every 3x3 stride-2 conv and (1, 2)
for every 5x5 stride-2 conv; stride-1 convs pad (k-1)/2 on both sides. Batch-norm epsilon 1e-3.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BN_EPSILON = 1e-3
IMAGE_SIZE = 224
STAGES = [  # repeats, kernel, stride, expand ratio, input filters, output filters
    (1, 3, 1, 1, 32, 16),
    (2, 3, 2, 6, 16, 24),
    (2, 5, 2, 6, 24, 40),
    (3, 3, 2, 6, 40, 80),
    (3, 5, 1, 6, 80, 112),
    (4, 5, 2, 6, 112, 192),
    (1, 3, 1, 6, 192, 320),
]


@dataclass
class ConvSpec:
    """One convolution with batch norm folded in: weight [O, I/groups, k, k], bias [O]."""
    name: str
    weight: np.ndarray
    bias: np.ndarray
    stride: int
    groups: int
    pads: tuple[int, int, int, int]  # top, left, bottom, right
    relu6: bool


@dataclass
class BlockSpec:
    expand: ConvSpec | None
    depthwise: ConvSpec
    project: ConvSpec
    skip: bool


@dataclass
class LiteModel:
    stem: ConvSpec
    blocks: list[BlockSpec]
    head: ConvSpec
    fc_weight: np.ndarray  # [1000, 1280]
    fc_bias: np.ndarray    # [1000]


def same_pads(size: int, kernel: int, stride: int) -> tuple[int, int, int]:
    """TensorFlow SAME padding for a square input: (before, after, output size)."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2, out


def _fold(sd, conv_key: str, bn_prefix: str, bias_key: str | None = None):
    w = sd[conv_key].astype(np.float64)
    gamma = sd[bn_prefix + ".weight"].astype(np.float64)
    beta = sd[bn_prefix + ".bias"].astype(np.float64)
    mean = sd[bn_prefix + ".running_mean"].astype(np.float64)
    var = sd[bn_prefix + ".running_var"].astype(np.float64)
    scale = gamma / np.sqrt(var + BN_EPSILON)
    b = sd[bias_key].astype(np.float64) if bias_key else np.zeros_like(mean)
    wf = (w * scale[:, None, None, None]).astype(np.float32)
    bf = ((b - mean) * scale + beta).astype(np.float32)
    return wf, bf


def _conv(sd, name, conv_key, bn_prefix, size, stride, groups, relu6):
    w, b = _fold(sd, conv_key, bn_prefix)
    k = w.shape[-1]
    before, after, out = same_pads(size, k, stride)
    return ConvSpec(name, w, b, stride, groups, (before, before, after, after), relu6), out


def from_state_dict(sd: dict[str, np.ndarray]) -> LiteModel:
    """Fold batch norms and lay out the network from the checkpoint's tensors."""
    size = IMAGE_SIZE
    stem, size = _conv(sd, "stem", "_conv_stem.weight", "_bn0", size, 2, 1, True)
    blocks = []
    index = 0
    for repeats, kernel, stride, expand, cin, cout in STAGES:
        for r in range(repeats):
            s = stride if r == 0 else 1
            inp = cin if r == 0 else cout
            p = f"_blocks.{index}."
            exp = None
            if expand != 1:
                exp, _ = _conv(sd, f"block{index}_expand", p + "_expand_conv.weight", p + "_bn0",
                               size, 1, 1, True)
            hidden = inp * expand
            dw, new_size = _conv(sd, f"block{index}_dw", p + "_depthwise_conv.weight", p + "_bn1",
                                 size, s, hidden, True)
            assert dw.weight.shape == (hidden, 1, kernel, kernel), (index, dw.weight.shape)
            pr, _ = _conv(sd, f"block{index}_project", p + "_project_conv.weight", p + "_bn2",
                          new_size, 1, 1, False)
            assert pr.weight.shape[0] == cout
            blocks.append(BlockSpec(exp, dw, pr, skip=(s == 1 and inp == cout)))
            size = new_size
            index += 1
    head, size = _conv(sd, "head", "_conv_head.weight", "_bn1", size, 1, 1, True)
    assert size == 7 and index == 16
    return LiteModel(stem, blocks, head, sd["_fc.weight"].astype(np.float32),
                     sd["_fc.bias"].astype(np.float32))


# ---------------------------------------------------------------------------- numpy reference

def _np_conv(x: np.ndarray, c: ConvSpec) -> np.ndarray:
    """x [N, C, H, W] float64 -> conv with explicit pads, groups 1 or depthwise."""
    top, left, bottom, right = c.pads
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    w = c.weight.astype(np.float64)
    k, s = w.shape[-1], c.stride
    if k == 1 and c.groups == 1:
        y = np.einsum("nchw,oc->nohw", x[:, :, ::s, ::s], w[:, :, 0, 0], optimize=True)
    else:
        win = np.lib.stride_tricks.sliding_window_view(x, (k, k), axis=(2, 3))[:, :, ::s, ::s]
        if c.groups == 1:
            y = np.einsum("nchwij,ocij->nohw", win, w, optimize=True)
        else:
            y = np.einsum("nchwij,cij->nchw", win, w[:, 0], optimize=True)
    y = y + c.bias.astype(np.float64)[None, :, None, None]
    return np.clip(y, 0.0, 6.0) if c.relu6 else y


def numpy_forward(m: LiteModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference forward pass in float64: returns (logits [N,1000], embedding [N,1280])."""
    h = _np_conv(x.astype(np.float64), m.stem)
    for b in m.blocks:
        y = _np_conv(h, b.expand) if b.expand else h
        y = _np_conv(y, b.depthwise)
        y = _np_conv(y, b.project)
        h = y + h if b.skip else y
    h = _np_conv(h, m.head)
    emb = h.mean(axis=(2, 3))
    logits = emb @ m.fc_weight.astype(np.float64).T + m.fc_bias.astype(np.float64)
    return logits, emb


# ---------------------------------------------------------------------------- ONNX graph

OPSET = 17
IR_VERSION = 8  # the IR version that goes with opset 17; older ORT builds on ARM boards read it


def to_onnx(m: LiteModel, doc: str = ""):
    """Build the ONNX model: input `input` [N,3,224,224] float32, outputs `logits` [N,1000]
    and `embedding` [N,1280] (pooled features before the classifier)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits = [], []
    zero = numpy_helper.from_array(np.array(0.0, np.float32), "relu6_min")
    six = numpy_helper.from_array(np.array(6.0, np.float32), "relu6_max")
    inits += [zero, six]

    def conv(inp: str, c: ConvSpec) -> str:
        inits.append(numpy_helper.from_array(c.weight, c.name + ".weight"))
        inits.append(numpy_helper.from_array(c.bias, c.name + ".bias"))
        k = c.weight.shape[-1]
        out = c.name + ".conv"
        nodes.append(helper.make_node(
            "Conv", [inp, c.name + ".weight", c.name + ".bias"], [out], name=c.name,
            kernel_shape=[k, k], strides=[c.stride, c.stride], pads=list(c.pads),
            group=c.groups, dilations=[1, 1]))
        if c.relu6:
            nodes.append(helper.make_node("Clip", [out, "relu6_min", "relu6_max"],
                                          [c.name + ".relu6"], name=c.name + "_relu6"))
            out = c.name + ".relu6"
        return out

    h = conv("input", m.stem)
    for i, b in enumerate(m.blocks):
        y = conv(h, b.expand) if b.expand else h
        y = conv(y, b.depthwise)
        y = conv(y, b.project)
        if b.skip:
            nodes.append(helper.make_node("Add", [y, h], [f"block{i}.add"], name=f"block{i}_add"))
            y = f"block{i}.add"
        h = y
    h = conv(h, m.head)
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["pooled"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["embedding"], name="flatten", axis=1))
    inits.append(numpy_helper.from_array(m.fc_weight, "fc.weight"))
    inits.append(numpy_helper.from_array(m.fc_bias, "fc.bias"))
    nodes.append(helper.make_node("Gemm", ["embedding", "fc.weight", "fc.bias"], ["logits"],
                                  name="fc", transB=1))
    graph = helper.make_graph(
        nodes, "efficientnet_lite0",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 3, IMAGE_SIZE, IMAGE_SIZE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 1000]),
         helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["N", 1280])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="proofkit Models/build.sh", producer_version="1",
                              doc_string=doc)
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    return model
