"""A tiny CLIP-shaped stand-in image encoder with random fixed weights (seeded), its prompt
embeddings in the real file format, and numpy reference numbers for two test images.

It has MobileCLIP-S0's interface: input `image` [1,3,256,256] float32, RGB / 255 (no mean or
std: MobileCLIP's transform is Resize(256, bilinear) on the shorter side, CenterCrop(256),
ToTensor()), output `embedding` [1,512] float32, not normalised. It exists so the scorer can be
tested end to end through ONNX Runtime without the real model (which needs internet to export).
"""
from __future__ import annotations

import json

import numpy as np
from PIL import Image

from . import prompt_embeddings as pe

SIZE = 256
DIM = 512
SEED = 512_256
# (out channels, kernel = stride)
LAYERS = [(16, 4), (32, 4), (64, 2)]


def weights(seed: int = SEED):
    rng = np.random.default_rng(seed)
    ws, cin = [], 3
    for cout, k in LAYERS:
        w = rng.normal(0, np.sqrt(2.0 / (cin * k * k)), (cout, cin, k, k)).astype(np.float32)
        b = rng.normal(0, 0.05, cout).astype(np.float32)
        ws.append((w, b))
        cin = cout
    proj = rng.normal(0, np.sqrt(1.0 / cin), (DIM, cin)).astype(np.float32)
    bias = rng.normal(0, 0.05, DIM).astype(np.float32)
    # The stand-in is meant to separate images, so centre the pooled features (a fixed offset
    # learnt from nothing: the mean of 64 random-ish positive features is about constant).
    return ws, proj, bias


def numpy_forward(x: np.ndarray, seed: int = SEED) -> np.ndarray:
    ws, proj, bias = weights(seed)
    h = x.astype(np.float64)
    for w, b in ws:
        k = w.shape[-1]
        n, c, H, W = h.shape
        blocks = h.reshape(n, c, H // k, k, W // k, k)
        h = np.einsum("nchiwj,ocij->nohw", blocks, w.astype(np.float64), optimize=True)
        h = np.maximum(h + b.astype(np.float64)[None, :, None, None], 0)
    pooled = h.mean(axis=(2, 3))
    return pooled @ proj.astype(np.float64).T + bias.astype(np.float64)


def to_onnx(seed: int = SEED):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    ws, proj, bias = weights(seed)
    nodes, inits, h = [], [], "image"
    for i, (w, b) in enumerate(ws):
        k = w.shape[-1]
        inits += [numpy_helper.from_array(w, f"conv{i}.weight"), numpy_helper.from_array(b, f"conv{i}.bias")]
        nodes.append(helper.make_node("Conv", [h, f"conv{i}.weight", f"conv{i}.bias"], [f"conv{i}"],
                                      name=f"conv{i}", kernel_shape=[k, k], strides=[k, k], pads=[0, 0, 0, 0]))
        nodes.append(helper.make_node("Relu", [f"conv{i}"], [f"relu{i}"], name=f"relu{i}"))
        h = f"relu{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["pooled"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten", axis=1))
    inits += [numpy_helper.from_array(proj, "proj.weight"), numpy_helper.from_array(bias, "proj.bias")]
    nodes.append(helper.make_node("Gemm", ["flat", "proj.weight", "proj.bias"], ["embedding"],
                                  name="proj", transB=1))
    graph = helper.make_graph(
        nodes, "clip_standin",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, [1, DIM])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="proofkit Models/build.sh", producer_version="1",
                              doc_string="Random stand-in with MobileCLIP-S0's interface (seed %d). "
                                         "Not a real model." % seed)
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def test_images() -> dict[str, Image.Image]:
    """Two deterministic 256x256 test pictures: a rug-like pattern and a plain gradient."""
    from .calibration import _gradient, _rug
    rng = np.random.default_rng(7)
    rug = _rug(rng, 300).convert("RGB")
    rug = rug.crop(((rug.width - 256) // 2, (rug.height - 256) // 2,
                    (rug.width - 256) // 2 + 256, (rug.height - 256) // 2 + 256))
    return {"clip_standin_test_mat.png": rug, "clip_standin_test_other.png": _gradient(rng, 256)}


def image_tensor(img: Image.Image) -> np.ndarray:
    """MobileCLIP preprocessing for an image that is already 256x256: RGB / 255, NCHW."""
    assert img.size == (SIZE, SIZE)
    return (np.asarray(img.convert("RGB"), dtype=np.float32) / 255.0).transpose(2, 0, 1)[None].copy()


def prompt_file(encoder_sha256: str, images: dict[str, Image.Image], seed: int = SEED) -> str:
    """Stand-in prompt embeddings: random unit vectors, except that the first mat prompt leans
    towards the rug test image and the first other prompt towards the gradient, so the two
    test images land on opposite sides of the threshold."""
    rng = np.random.default_rng(seed + 1)
    emb = {k: pe.l2_normalize(numpy_forward(image_tensor(v))[0]) for k, v in images.items()}
    mean = pe.l2_normalize(sum(emb.values()))

    def random_unit():
        return pe.l2_normalize(rng.normal(0, 1, DIM))

    mat = [(p, random_unit()) for p in pe.MAT_PROMPTS]
    other = [(p, random_unit()) for p in pe.OTHER_PROMPTS]
    # Lean on what differs between the two images (their shared direction is large).
    mat[0] = (mat[0][0], pe.l2_normalize(emb["clip_standin_test_mat.png"] - mean + 0.02 * mat[0][1]))
    other[0] = (other[0][0], pe.l2_normalize(emb["clip_standin_test_other.png"] - mean + 0.02 * other[0][1]))
    return pe.dumps("clip_standin", encoder_sha256, mat, other)


def reference(prompts_path: str, images: dict[str, Image.Image]) -> dict:
    d = pe.load(prompts_path)
    out = {"model": "clip_standin.onnx", "prompts": "clip_standin_prompts.json",
           "preprocessing": "RGB / 255, NCHW float32, no resize (images are 256x256)",
           "tolerance": {"embedding": 1e-4, "cosine": 1e-5, "score": 1e-4}, "images": []}
    for name, img in images.items():
        e = numpy_forward(image_tensor(img))[0]
        s, cos = pe.score(e, d)
        out["images"].append({
            "file": name,
            "embedding": [float("%.7g" % v) for v in e],
            "cosine": [float("%.7g" % v) for v in cos],
            "score": float("%.7g" % s),
            "verdict": "pass" if s >= d["threshold"] else "fail",
        })
    return out
