"""The prompt-embeddings file that the CLIP scorer reads, shared by export_mobileclip.py (the real
MobileCLIP-S0 text embeddings) and the stand-in builder (random fixed embeddings).

Format (JSON, UTF-8, keys in this order):
{
  "format": "proofkit-prompt-embeddings",
  "version": 1,
  "model": "mobileclip_s0",              # which image encoder these texts pair with
  "image_encoder_sha256": "<hex>",       # sha256 of that encoder's .onnx file
  "dim": 512,                            # embedding length
  "image_size": 256,                     # encoder input: [1,3,size,size] RGB / 255
  "logit_scale": 100.0,                  # softmax temperature used by the scorer
  "threshold": 0.45,                     # default pass threshold on the mat share
  "mat":   [{"prompt": "a photo of a prayer rug", "embedding": [512 floats]}, ...],
  "other": [{"prompt": "a photo of a bed", "embedding": [...]}, ...]
}
Every embedding is L2-normalised (|e| = 1 within 1e-5). Floats are written with 8 significant
digits, so the file is byte-identical for identical inputs.

The scorer: e = image embedding / |e|; s_i = e . t_i for every prompt (mat and other);
z_i = logit_scale * (s_i - max_j s_j); p_i = exp(z_i) / sum_j exp(z_j);
score = sum of p_i over the mat prompts. Pass when score >= threshold.
"""
from __future__ import annotations

import json

import numpy as np

FORMAT = "proofkit-prompt-embeddings"
VERSION = 1
LOGIT_SCALE = 100.0
CLIP_THRESHOLD = 0.45

MAT_PROMPTS = [
    "a photo of a prayer rug",
    "a photo of a prayer mat on the floor",
    "a photo of feet standing on a prayer rug",
    "a photo of a folded prayer mat",
    "a close-up of a prayer mat's pattern",
    "a photo of a foam prayer mat",
    "a photo of a rolled-up prayer rug",
    "a photo of someone praying on a prayer mat",
]

OTHER_PROMPTS = [
    "a photo of a bed",
    "a photo of a wall",
    "a photo of a kitchen",
    "a photo of a carpet in a living room",
    "a photo of a doormat",
    "a photo of a bath mat",
    "a photo of a yoga mat",
    "a photo of a towel",
    "a photo of a blanket",
    "a photo of a pillow",
    "a photo of a floor",
    "a photo of a ceiling",
    "a photo of a desk",
    "a photo of a sofa",
    "a photo of a window",
    "a photo of a door",
    "a photo of a bathroom",
    "a photo of a phone screen",
    "a photo of a person's face",
    "a dark photo",
    "a blurry photo",
    "a photo of a cat",
]


def l2_normalize(v) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    if np.any(n == 0):
        raise ValueError("cannot normalise a zero embedding")
    return v / n


def _fmt(x: float) -> str:
    s = "%.8g" % x
    return "0" if s in ("-0", "0") else s


def dumps(model: str, image_encoder_sha256: str, mat: list[tuple[str, np.ndarray]],
          other: list[tuple[str, np.ndarray]], logit_scale: float = LOGIT_SCALE,
          threshold: float = CLIP_THRESHOLD, image_size: int = 256) -> str:
    """Serialise the file deterministically (embeddings are normalised here)."""
    dims = {len(e) for _, e in mat + other}
    if len(dims) != 1:
        raise ValueError(f"embeddings of different lengths: {sorted(dims)}")
    if not mat or not other:
        raise ValueError("need at least one mat and one other prompt")
    dim = dims.pop()

    def entries(items):
        rows = []
        for prompt, e in items:
            e = l2_normalize(e)
            rows.append('    {"prompt": %s, "embedding": [%s]}'
                        % (json.dumps(prompt, ensure_ascii=False), ", ".join(_fmt(float(x)) for x in e)))
        return "[\n" + ",\n".join(rows) + "\n  ]"

    head = [
        '  "format": %s' % json.dumps(FORMAT),
        '  "version": %d' % VERSION,
        '  "model": %s' % json.dumps(model),
        '  "image_encoder_sha256": %s' % json.dumps(image_encoder_sha256),
        '  "dim": %d' % dim,
        '  "image_size": %d' % image_size,
        '  "logit_scale": %s' % _fmt(logit_scale),
        '  "threshold": %s' % _fmt(threshold),
        '  "mat": ' + entries(mat),
        '  "other": ' + entries(other),
    ]
    return "{\n" + ",\n".join(head) + "\n}\n"


def load(path: str) -> dict:
    """Read and validate a prompt-embeddings file; embeddings come back as float64 arrays."""
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    if d.get("format") != FORMAT or d.get("version") != VERSION:
        raise ValueError(f"{path}: not a {FORMAT} v{VERSION} file")
    for group in ("mat", "other"):
        for item in d[group]:
            e = np.asarray(item["embedding"], dtype=np.float64)
            if e.shape != (d["dim"],) or abs(np.linalg.norm(e) - 1) > 1e-5:
                raise ValueError(f"{path}: bad embedding for {item['prompt']!r}")
            item["embedding"] = e
    return d


def score(image_embedding, d: dict) -> tuple[float, np.ndarray]:
    """The scorer (see the module doc): returns (mat share, cosine similarities mat+other)."""
    e = l2_normalize(image_embedding)
    t = np.stack([i["embedding"] for i in d["mat"]] + [i["embedding"] for i in d["other"]])
    s = t @ e
    z = d["logit_scale"] * (s - s.max())
    p = np.exp(z) / np.exp(z).sum()
    return float(p[: len(d["mat"])].sum()), s
