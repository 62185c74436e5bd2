"""Whisper (base) encoder and decoder as ONNX graphs, built with onnx.helper from CTranslate2's
model.bin variables (see whisper_ct2.py). No torch. Opset 17, IR 8.

Encoder: "mel" float32 [1,80,3000] -> Conv1d(80->512, k3, pad 1) + GELU -> Conv1d(512->512, k3,
stride 2, pad 1) + GELU -> + stored positions [1500,512] -> 6 pre-LN blocks (self-attention with
fused QKV, FFN 512->2048->512 with GELU) -> LayerNorm = "encoder_out" [1,1500,512]; then each
decoder layer's cross-attention keys and values of it, one output per layer: "cross_k_0".."cross_k_5",
"cross_v_0".."cross_v_5" [1,8,1500,64].

Decoder: "tokens" int64 [1,n], "offset" int64 [1] (= P, tokens already in the cache),
"past_k"/"past_v" float32 [6,1,8,P,64], the 12 "cross_*" tensors -> "logits" [1,n,51865],
"present_k"/"present_v" [6,1,8,P+n,64]. Token embedding + position embedding[offset+i]; 6 pre-LN
blocks (causal self-attention over cache+new, cross-attention, FFN); LayerNorm; logits = x E^T
with E the token embedding (tied).

GELU is the exact one, 0.5 x (1 + erf(x / sqrt 2)) (ONNX Runtime fuses it). LayerNorm epsilon 1e-5.
The attention scale 1/sqrt(64) = 0.125 is a power of two, so it is folded into the query weights
and bias exactly. Whisper's key projection has no bias: CTranslate2 stores zeros there (checked:
they are all zero), which the graph keeps as they are.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
HEADS = 8
D = 512
HEAD_DIM = D // HEADS
LAYERS = 6
EPS = 1e-5
SCALE = HEAD_DIM ** -0.5  # 0.125


class _G:
    """A small graph builder: unique names, initializers, nodes."""

    def __init__(self, prefix: str):
        self.nodes, self.inits, self.n = [], [], 0
        self.prefix = prefix
        self._consts: dict = {}

    def name(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def init(self, name: str, arr: np.ndarray) -> str:
        # (np.ascontiguousarray would turn a scalar into shape [1])
        self.inits.append(numpy_helper.from_array(np.array(arr, copy=None, order="C"), name))
        return name

    def const_i64(self, values) -> str:
        key = ("i64", tuple(np.atleast_1d(values).tolist()), np.ndim(values))
        if key not in self._consts:
            self._consts[key] = self.init(self.name("c"), np.array(values, dtype=np.int64))
        return self._consts[key]

    def const_f32(self, value: float) -> str:
        key = ("f32", value)
        if key not in self._consts:
            self._consts[key] = self.init(self.name("cf"), np.array(value, dtype=np.float32))
        return self._consts[key]

    def op(self, op_type: str, inputs: list, hint: str | None = None, outputs: list | None = None,
           **attrs) -> str:
        outs = outputs or [self.name(hint or op_type.lower())]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=self.name("n_" + op_type), **attrs))
        return outs[0]

    # -- building blocks
    def linear(self, x: str, w: np.ndarray, b: np.ndarray | None, name: str) -> str:
        """x [..., in] @ w^T [in, out] + b (w stored as CTranslate2 does: [out, in])."""
        y = self.op("MatMul", [x, self.init(name + ".wT", w.T.astype(np.float32))], name + "_mm")
        if b is not None:
            y = self.op("Add", [y, self.init(name + ".b", b.astype(np.float32))], name)
        return y

    def gelu(self, x: str) -> str:
        t = self.op("Div", [x, self.const_f32(float(np.sqrt(2.0)))])
        t = self.op("Erf", [t])
        t = self.op("Add", [t, self.const_f32(1.0)])
        t = self.op("Mul", [x, t])
        return self.op("Mul", [t, self.const_f32(0.5)])

    def layer_norm(self, x: str, gamma: np.ndarray, beta: np.ndarray, name: str) -> str:
        return self.op("LayerNormalization", [x, self.init(name + ".gamma", gamma), self.init(name + ".beta", beta)],
                       name, axis=-1, epsilon=EPS)

    def heads(self, x: str) -> str:
        """[1, T, 512] -> [1, 8, T, 64]."""
        y = self.op("Reshape", [x, self.const_i64([1, -1, HEADS, HEAD_DIM])])
        return self.op("Transpose", [y], perm=[0, 2, 1, 3])

    def merge(self, x: str) -> str:
        """[1, 8, T, 64] -> [1, T, 512]."""
        y = self.op("Transpose", [x], perm=[0, 2, 1, 3])
        return self.op("Reshape", [y, self.const_i64([1, -1, D])])

    def attend_by_head(self, q: str, k: str, v: str) -> str:
        """attend() one head at a time (q, k, v [1,8,T,64] split into 8 [1,1,T,64]): the same
        numbers, but only one head's [T,T] scores and probabilities are alive at a time (the
        encoder's 8 x 1500 x 1500 float32 scores are 72 MB, and its probabilities as much again)."""
        parts = []
        for t in (q, k, v):
            outs = [self.name("h") for _ in range(HEADS)]
            self.op("Split", [t, self.const_i64([1] * HEADS)], outputs=outs, axis=1)
            parts.append(outs)
        ctx = [self.attend(parts[0][h], parts[1][h], parts[2][h]) for h in range(HEADS)]
        return self.op("Concat", ctx, "context", axis=1)

    def attend(self, q: str, k: str, v: str, mask: str | None = None) -> str:
        """softmax(q k^T (+ mask)) v; q is already scaled. q [1,8,n,64], k/v [1,8,T,64]."""
        kt = self.op("Transpose", [k], perm=[0, 1, 3, 2])
        s = self.op("MatMul", [q, kt], "scores")
        if mask is not None:
            s = self.op("Add", [s, mask])
        p = self.op("Softmax", [s], axis=-1)
        return self.op("MatMul", [p, v], "context")


def _qkv(m, prefix: str):
    """The fused QKV weight [1536,512] and bias of a self-attention, with q scaled by 0.125."""
    w = m[prefix + "/linear_0/weight"].astype(np.float32).copy()
    b = m[prefix + "/linear_0/bias"].astype(np.float32).copy()
    w[:D] *= SCALE
    b[:D] *= SCALE
    return w, b


def _self_attention_block(g: _G, m, x: str, p: str) -> tuple[str, str, str]:
    """Pre-LN self-attention's projections: returns q, k, v as [1,8,T,64] (q scaled)."""
    h = g.layer_norm(x, m[p + "/layer_norm/gamma"], m[p + "/layer_norm/beta"], p + "/ln")
    w, b = _qkv(m, p)
    qkv = g.linear(h, w, b, p + "/qkv")
    q, k, v = (g.name("q"), g.name("k"), g.name("v"))
    g.op("Split", [qkv, g.const_i64([D, D, D])], outputs=[q, k, v], axis=-1)
    return g.heads(q), g.heads(k), g.heads(v)


def _ffn(g: _G, m, x: str, p: str) -> str:
    h = g.layer_norm(x, m[p + "/layer_norm/gamma"], m[p + "/layer_norm/beta"], p + "/ln")
    h = g.linear(h, m[p + "/linear_0/weight"], m[p + "/linear_0/bias"], p + "/fc1")
    h = g.gelu(h)
    h = g.linear(h, m[p + "/linear_1/weight"], m[p + "/linear_1/bias"], p + "/fc2")
    return g.op("Add", [x, h], "residual")


def check_variables(m) -> None:
    """Fails with a message unless model.bin is the Whisper base layout this builder expects."""
    want = {
        "encoder/conv1/weight": (D, 80, 3), "encoder/conv2/weight": (D, D, 3),
        "encoder/position_encodings/encodings": (1500, D),
        "decoder/embeddings/weight": (51865, D), "decoder/position_encodings/encodings": (448, D),
    }
    for i in range(LAYERS):
        want[f"encoder/layer_{i}/self_attention/linear_0/weight"] = (3 * D, D)
        want[f"decoder/layer_{i}/self_attention/linear_0/weight"] = (3 * D, D)
        want[f"decoder/layer_{i}/attention/linear_1/weight"] = (2 * D, D)
        want[f"encoder/layer_{i}/ffn/linear_0/weight"] = (2048, D)
    for n, shape in want.items():
        if n not in m or tuple(m[n].shape) != shape:
            raise ValueError(f"model.bin: {n} is {m[n].shape if n in m else 'missing'}, expected {shape}")
    if f"encoder/layer_{LAYERS}/ffn/linear_0/weight" in m:
        raise ValueError("model.bin has more than 6 encoder layers: not Whisper base")
    for side in ("encoder", "decoder"):
        if int(m[f"{side}/num_heads"]) != HEADS:
            raise ValueError(f"model.bin: {side} has {int(m[side + '/num_heads'])} heads, expected 8")
    if int(m["decoder/pre_norm"]) != 1 or int(m["decoder/scale_embeddings"]) != 0:
        raise ValueError("model.bin: decoder is not pre-norm without embedding scaling")


def encoder(m, doc: str = "", by_head: bool = True) -> onnx.ModelProto:
    g = _G("enc")
    x = "mel"
    x = g.op("Conv", [x, g.init("conv1.w", m["encoder/conv1/weight"]), g.init("conv1.b", m["encoder/conv1/bias"])],
             "conv1", kernel_shape=[3], pads=[1, 1], strides=[1])
    x = g.gelu(x)
    x = g.op("Conv", [x, g.init("conv2.w", m["encoder/conv2/weight"]), g.init("conv2.b", m["encoder/conv2/bias"])],
             "conv2", kernel_shape=[3], pads=[1, 1], strides=[2])
    x = g.gelu(x)
    x = g.op("Transpose", [x], perm=[0, 2, 1])  # [1,1500,512]
    x = g.op("Add", [x, g.init("enc.pos", m["encoder/position_encodings/encodings"])], "pos")
    for i in range(LAYERS):
        p = f"encoder/layer_{i}"
        q, k, v = _self_attention_block(g, m, x, p + "/self_attention")
        a = g.merge(g.attend_by_head(q, k, v) if by_head else g.attend(q, k, v))
        a = g.linear(a, m[p + "/self_attention/linear_1/weight"], m[p + "/self_attention/linear_1/bias"], p + "/out")
        x = g.op("Add", [x, a], "residual")
        x = _ffn(g, m, x, p + "/ffn")
    g.layer_norm(x, m["encoder/layer_norm/gamma"], m["encoder/layer_norm/beta"], "encoder/ln")
    g.nodes[-1].output[0] = "encoder_out"
    # Each decoder layer's cross-attention keys and values as outputs of their own,
    # [1,1500,512] @ [512,512] + b -> [1,1500,8,64] -> [1,8,1500,64], which the decoder takes as
    # inputs as they are. (Stacked as one [6,1,8,1500,64] pair, the encoder's end held the stack
    # and its transposed copy, and every decoder step copied each layer out of it with a Gather:
    # 37 MB more at both peaks, the same numbers.)
    outputs = [f"cross_{kind}_{i}" for kind in "kv" for i in range(LAYERS)]
    for name in outputs:
        kind, i = name[6], int(name[8:])
        rows = slice(0, D) if kind == "k" else slice(D, 2 * D)
        w = m[f"decoder/layer_{i}/attention/linear_1/weight"][rows]
        b = m[f"decoder/layer_{i}/attention/linear_1/bias"][rows]
        y = g.linear("encoder_out", w, b, name + "_proj")
        y = g.op("Reshape", [y, g.const_i64([1, -1, HEADS, HEAD_DIM])])
        g.op("Transpose", [y], perm=[0, 2, 1, 3], outputs=[name])
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        g.nodes, "whisper_base_encoder",
        [helper.make_tensor_value_info("mel", f, [1, 80, 3000])],
        [helper.make_tensor_value_info(n, f, [1, HEADS, 1500, HEAD_DIM]) for n in outputs]
        + [helper.make_tensor_value_info("encoder_out", f, [1, 1500, D])],
        g.inits)
    return _model(graph, doc)


def decoder(m, doc: str = "", tied_gemm: bool = True) -> onnx.ModelProto:
    """tied_gemm: logits by Gemm(x, E, transB=1), sharing E with the embedding Gather (no copy of
    the 51865x512 matrix). Otherwise a MatMul with a transposed copy of E, which
    onnxruntime.quantization.quantize_dynamic can make int8."""
    g = _G("dec")
    emb = g.init("embeddings", m["decoder/embeddings/weight"])
    pos = g.init("positions", m["decoder/position_encodings/encodings"])
    zero = g.const_i64(0)
    one = g.const_i64(1)
    # n = tokens.shape[1], P = offset (the cache length), total = P + n
    n = g.op("Gather", [g.op("Shape", ["tokens"]), one], "n", axis=0)  # scalar
    p0 = g.op("Squeeze", ["offset", g.const_i64([0])], "P")  # scalar
    total = g.op("Add", [p0, n], "total")
    idx = g.op("Range", [p0, total, one], "pos_idx")  # [n]
    x = g.op("Gather", [emb, "tokens"], "tok_emb", axis=0)  # [1,n,512]
    x = g.op("Add", [x, g.op("Gather", [pos, idx], "pos_emb", axis=0)], "x0")
    # causal mask [n, P+n]: -inf where key j > P + i
    cols = g.op("Range", [zero, total, one], "cols")
    rows = g.op("Unsqueeze", [idx, g.const_i64([1])], "rows")
    later = g.op("Less", [rows, cols], "later")
    mask = g.op("Where", [later, g.const_f32(float("-inf")), g.const_f32(0.0)], "mask")
    presents_k, presents_v = [], []
    for i in range(LAYERS):
        p = f"decoder/layer_{i}"
        li = g.const_i64(i)
        q, k, v = _self_attention_block(g, m, x, p + "/self_attention")
        k = g.op("Concat", [g.op("Gather", ["past_k", li], axis=0), k], "k_all", axis=2)
        v = g.op("Concat", [g.op("Gather", ["past_v", li], axis=0), v], "v_all", axis=2)
        presents_k.append(g.op("Unsqueeze", [k, g.const_i64([0])]))
        presents_v.append(g.op("Unsqueeze", [v, g.const_i64([0])]))
        a = g.merge(g.attend(q, k, v, mask))
        a = g.linear(a, m[p + "/self_attention/linear_1/weight"], m[p + "/self_attention/linear_1/bias"], p + "/self_out")
        x = g.op("Add", [x, a], "residual")
        # cross-attention
        c = p + "/attention"
        h = g.layer_norm(x, m[c + "/layer_norm/gamma"], m[c + "/layer_norm/beta"], c + "/ln")
        cq = g.heads(g.linear(h, m[c + "/linear_0/weight"] * SCALE, m[c + "/linear_0/bias"] * SCALE, c + "/q"))
        a = g.merge(g.attend(cq, f"cross_k_{i}", f"cross_v_{i}"))
        a = g.linear(a, m[c + "/linear_2/weight"], m[c + "/linear_2/bias"], c + "/out")
        x = g.op("Add", [x, a], "residual")
        x = _ffn(g, m, x, p + "/ffn")
    g.op("Concat", presents_k, outputs=["present_k"], axis=0)
    g.op("Concat", presents_v, outputs=["present_v"], axis=0)
    x = g.layer_norm(x, m["decoder/layer_norm/gamma"], m["decoder/layer_norm/beta"], "decoder/ln")
    if tied_gemm:
        x2 = g.op("Reshape", [x, g.const_i64([-1, D])])
        lg = g.op("Gemm", [x2, emb], "logits2d", transB=1)
        g.op("Unsqueeze", [lg, g.const_i64([0])], outputs=["logits"])
    else:
        g.op("MatMul", [x, g.init("embeddings_T", np.ascontiguousarray(m["decoder/embeddings/weight"].T))],
             outputs=["logits"])
    f = TensorProto.FLOAT
    cache = [LAYERS, 1, HEADS, "P", HEAD_DIM]
    graph = helper.make_graph(
        g.nodes, "whisper_base_decoder",
        [helper.make_tensor_value_info("tokens", TensorProto.INT64, [1, "n"]),
         helper.make_tensor_value_info("offset", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("past_k", f, cache),
         helper.make_tensor_value_info("past_v", f, cache)]
        + [helper.make_tensor_value_info(f"cross_{kind}_{i}", f, [1, HEADS, 1500, HEAD_DIM])
           for kind in "kv" for i in range(LAYERS)],
        [helper.make_tensor_value_info("logits", f, [1, "n", 51865]),
         helper.make_tensor_value_info("present_k", f, [LAYERS, 1, HEADS, "P_plus_n", HEAD_DIM]),
         helper.make_tensor_value_info("present_v", f, [LAYERS, 1, HEADS, "P_plus_n", HEAD_DIM])],
        g.inits)
    return _model(graph, doc)


def _model(graph, doc: str) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="proofkit_models.whisper_onnx", doc_string=doc)
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=False)
    return model
