"""Block-wise int8 weights for the Whisper graphs (whisper_onnx.py), without onnxruntime.quantization
(its MatMulNBits quantizer needs onnx_ir, which the set-up does not install).

Every MatMul whose second input is a 2-D weight W [K, N] becomes ONNX Runtime's
com.microsoft.MatMulNBits (bits 8): W^T [N, K] is cut along K into blocks of BLOCK values, each
stored as uint8 q = round(w / s) + 128 with its own float32 scale s = max|w| / 127 (symmetric; the
operator's default zero point for 8 bits is 128). A block of 32 follows the weights far more closely
than one scale per output channel (onnxruntime.quantization.quantize_dynamic), which changed the
transcripts of many recordings (see MODELS.md).

In the decoder, the token embedding E [51865, 512] is stored once, as the logits MatMulNBits's
blocks; the embedding lookup gathers the same uint8 rows and their scales and dequantises them
((q - 128) * s), so the 106 MB float32 table is not kept at all.

accuracy_level (the operator's attribute): 4 lets ONNX Runtime quantise the activations to int8
per block too and multiply in integers (fastest on x86-64 and ARM64); 0 multiplies in float32 with
the weights dequantised.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BLOCK = 32
MS = "com.microsoft"
MS_MATMUL = "MatMulNBits"


def quantize_blocks(w_t: np.ndarray, block: int = BLOCK) -> tuple[np.ndarray, np.ndarray]:
    """w_t [N, K] float -> (q uint8 [N, K/block, block], scales float32 [N, K/block])."""
    n, k = w_t.shape
    if k % block:
        raise ValueError(f"K={k} is not a multiple of the block {block}")
    b = w_t.astype(np.float32).reshape(n, k // block, block)
    scale = np.abs(b).max(axis=2) / 127.0
    scale = np.where(scale == 0, 1.0, scale).astype(np.float32)
    q = np.clip(np.rint(b / scale[..., None]), -127, 127).astype(np.int16) + 128
    return q.astype(np.uint8), scale


def dequantize_blocks(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    return ((q.astype(np.float32) - 128.0) * scale[..., None]).reshape(q.shape[0], -1)


def quantize(model: onnx.ModelProto, accuracy_level: int = 4, block: int = BLOCK,
             embedding: str | None = None, keep: tuple[str, ...] = (), doc_suffix: str = "") -> onnx.ModelProto:
    """A copy of model with its weight MatMuls as MatMulNBits (8 bits, blocks of `block`).
    embedding: the name of a [V, D] initializer that a MatMul uses transposed (logits) and a Gather
    uses as is (the lookup): both then read one uint8 copy. keep: initializer names whose MatMuls stay
    float32."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.doc_string += doc_suffix
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes = []
    replaced: set[str] = set()
    emb_q = None
    for node in g.node:
        w = inits.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if w is None or len(w.dims) != 2 or w.name in keep:
            nodes.append(node)
            continue
        arr = numpy_helper.to_array(w)  # [K, N]
        k, n = arr.shape
        q, s = quantize_blocks(np.ascontiguousarray(arr.T), block)
        qname, sname = w.name + ".q8", w.name + ".scales"
        g.initializer.extend([numpy_helper.from_array(q, qname), numpy_helper.from_array(s, sname)])
        if embedding is not None and w.name == embedding + "_T":
            emb_q = (qname, sname, k)
        replaced.add(w.name)
        nodes.append(helper.make_node(MS_MATMUL, [node.input[0], qname, sname], list(node.output), name=node.name,
                                      domain=MS, K=k, N=n, bits=8, block_size=block,
                                      accuracy_level=accuracy_level))
    if embedding is not None:
        if emb_q is None:
            raise ValueError(f"no MatMul uses {embedding}_T")
        nodes = _quantized_lookup(nodes, embedding, *emb_q)
        replaced.add(embedding)
    keep_inits = [i for i in g.initializer if i.name not in replaced]
    del g.initializer[:]
    g.initializer.extend(keep_inits)
    del g.node[:]
    g.node.extend(nodes)
    if not any(o.domain == MS for o in m.opset_import):
        m.opset_import.append(helper.make_opsetid(MS, 1))
    onnx.checker.check_model(m, full_check=False)
    return m


def _quantized_lookup(nodes: list, embedding: str, qname: str, sname: str, dim: int) -> list:
    """Replaces Gather(embedding, ids) by the dequantised rows of the uint8 blocks qname [V, D/b, b]
    and scales sname [V, D/b]: (Cast(Gather(q)) - 128) * Unsqueeze(Gather(s)), reshaped [.., D]."""
    out = []
    for node in nodes:
        if node.op_type != "Gather" or node.input[0] != embedding:
            out.append(node)
            continue
        ids, y, tag = node.input[1], node.output[0], node.name
        q = helper.make_tensor(tag + ".c128", TensorProto.FLOAT, [], [128.0])
        axes = helper.make_tensor(tag + ".axis", TensorProto.INT64, [1], [-1])
        shape = helper.make_tensor(tag + ".shape", TensorProto.INT64, [3], [1, -1, dim])
        out += [
            helper.make_node("Constant", [], [tag + "_c128"], value=q),
            helper.make_node("Constant", [], [tag + "_axis"], value=axes),
            helper.make_node("Constant", [], [tag + "_shape"], value=shape),
            helper.make_node("Gather", [qname, ids], [tag + "_q"], axis=0, name=tag + "_gq"),  # [1,n,D/b,b]
            helper.make_node("Cast", [tag + "_q"], [tag + "_qf"], to=TensorProto.FLOAT, name=tag + "_cast"),
            helper.make_node("Sub", [tag + "_qf", tag + "_c128"], [tag + "_centred"], name=tag + "_sub"),
            helper.make_node("Gather", [sname, ids], [tag + "_s"], axis=0, name=tag + "_gs"),  # [1,n,D/b]
            helper.make_node("Unsqueeze", [tag + "_s", tag + "_axis"], [tag + "_s1"], name=tag + "_uns"),
            helper.make_node("Mul", [tag + "_centred", tag + "_s1"], [tag + "_rows"], name=tag + "_mul"),
            helper.make_node("Reshape", [tag + "_rows", tag + "_shape"], [y], name=tag + "_reshape"),
        ]
    return out
