#!/usr/bin/env python3
"""The Python peer for proofkit's photo-proof benchmarks: onnxruntime + PIL + numpy.

    .deps/venv/bin/python Benchmarks/python/photo_peer.py PHOTO.jpg [options]

It does what `proofkit mat PHOTO` does with the Lite0 model, the way a Python user would:
decode (PIL, EXIF orientation applied, RGB), resize the shorter side to 256 (bicubic), centre
crop 224, (RGB - 127) / 128, run EfficientNet-Lite0 with onnxruntime, softmax, score = p[741],
verdict = score >= 0.3. It prints ONE JSON object on stdout (schema below); nothing else goes to
stdout.

Modes:
  --mode once    (default) the whole job once, as a process: time it from outside (wall time of
                 the process) and read the per-stage times from the JSON;
  --mode stages  repeat each stage: decode+preprocess --runs times, inference --runs times
                 (after --warmup runs), and report min/p50/p90/max per stage.

JSON: {"peer": "python-onnxruntime", "mode", "photo", "model", "threads", "spinning",
 "graph_optimization": "all"|"disabled", "five_crop": bool, "draft": bool,
 "crop_policy": "batch"|"first-pass"|"centre", "crops_run": crops scored,
 "import_ms": time to import numpy, PIL and onnxruntime,
 "session_ms": InferenceSession creation (model load included),
 "decode_preprocess_ms": {"min","p50","p90","max","runs"} (once: runs = 1),
 "inference_ms": {"min","p50","p90","max","runs"},
 "score": p741 (or the five-crop max), "verdict": "pass"|"fail", "top1": class index,
 "peak_rss_kib": peak resident set size of this process (getrusage ru_maxrss),
 "versions": {"python", "onnxruntime", "numpy", "pillow"}}
"""
from __future__ import annotations

import os

# ONNX Runtime's Python package writes a telemetry cache unless this is set (before import).
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
import argparse
import json
import os
import resource
import sys
import time

T0 = time.perf_counter()
import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
import PIL  # noqa: E402
from PIL import Image, ImageOps  # noqa: E402

IMPORT_MS = (time.perf_counter() - T0) * 1000
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MODEL = os.path.join(HERE, "..", "..", "Models", "generated", "efficientnet_lite0_fp32.onnx")
MAT_CLASS, THRESHOLD = 741, 0.3


def decode(path: str, draft: bool) -> Image.Image:
    img = Image.open(path)
    if draft and img.format == "JPEG":
        # PIL's counterpart of libjpeg-turbo DCT scaling: the smallest 1/2, 1/4, 1/8 scale whose
        # shorter side stays >= 256.
        w, h = img.size
        scale = min(w, h) / 256
        img.draft("RGB", (int(w / scale) + 1, int(h / scale) + 1))
    img = ImageOps.exif_transpose(img)
    return img.convert("RGB")


def resize_shorter(img: Image.Image, shorter: int = 256) -> Image.Image:
    w, h = img.size
    if w <= h:
        size = (shorter, max(1, round(h * shorter / w)))
    else:
        size = (max(1, round(w * shorter / h)), shorter)
    return img.resize(size, Image.Resampling.BICUBIC)


def to_tensor(img: Image.Image) -> np.ndarray:
    a = np.asarray(img, dtype=np.float32)
    return ((a - 127.0) / 128.0).transpose(2, 0, 1)[None]


def corner_views(img: Image.Image) -> list:
    """The four zoomed corner squares of the five-crop rule (Models/proofkit_models/mat_scorer.py)."""
    w, h = img.size
    s = int(0.6 * min(w, h))
    views = []
    for fx, fy in ((0, 0), (1, 0), (0, 1), (1, 1)):
        x, y = int((w - s) * fx), int((h - s) * fy)
        views.append(img.crop((x, y, x + s, y + s)).resize((224, 224), Image.Resampling.BICUBIC))
    return views


def preprocess(img: Image.Image, five_crop: bool) -> np.ndarray:
    r = resize_shorter(img)
    left, top = (r.width - 224) // 2, (r.height - 224) // 2
    views = [r.crop((left, top, left + 224, top + 224))]
    if five_crop:
        views += corner_views(img)
    return np.ascontiguousarray(np.concatenate([to_tensor(v) for v in views]))


def stats(ms: list[float]) -> dict:
    a = np.sort(np.asarray(ms))
    return {"min": round(float(a[0]), 3), "p50": round(float(np.percentile(a, 50)), 3),
            "p90": round(float(np.percentile(a, 90)), 3), "max": round(float(a[-1]), 3), "runs": len(ms)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("photo")
    ap.add_argument("--model", default=DEFAULT_MODEL, help="ONNX model (default: the fp32 Lite0)")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    ap.add_argument("--spinning", choices=["on", "off"], default="off",
                    help="ORT thread-pool spinning (default off, like proofkit)")
    ap.add_argument("--mode", choices=["once", "stages"], default="once")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--five-crop", action="store_true", help="score with the five-crop rule")
    ap.add_argument("--draft", action="store_true", help="JPEG DCT-scaled decode (PIL draft mode)")
    ap.add_argument("--crop-policy", choices=["batch", "first-pass"], default="batch",
                    help="with --five-crop: all five in one batch (default), or proofkit's policy: the "
                         "crops one at a time (centre, then the corners), stopping at the first that passes")
    ap.add_argument("--graph-optimization", choices=["all", "disabled"], default="all",
                    help="ORT graph optimisation at session creation (default all; proofkit loads the "
                         "pre-optimised .ort with it disabled)")
    a = ap.parse_args()
    for path, what in ((a.photo, "photo"), (a.model, "model")):
        if not os.path.isfile(path):
            print(f"photo_peer.py: {path}: {what} not found", file=sys.stderr)
            return 66

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if a.graph_optimization == "all"
                                     else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
    opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if a.spinning == "on" else "0")
    t = time.perf_counter()
    sess = ort.InferenceSession(a.model, opts, providers=["CPUExecutionProvider"])
    session_ms = (time.perf_counter() - t) * 1000

    first_pass = a.five_crop and a.crop_policy == "first-pass"

    def stage_pre():
        t = time.perf_counter()
        img = decode(a.photo, a.draft)
        # First-pass: only the centre crop now; the corners are made only if it fails.
        x = (img, preprocess(img, False)) if first_pass else preprocess(img, a.five_crop)
        return x, (time.perf_counter() - t) * 1000

    def stage_infer(x):
        t = time.perf_counter()
        if first_pass:
            # One crop at a time (centre, then the corners), stopping at the first that passes.
            img, centre = x
            rows, corners = [], None
            for index in range(5):
                if index == 0:
                    view = centre
                else:
                    corners = corners or corner_views(img)
                    view = np.ascontiguousarray(to_tensor(corners[index - 1]))
                row = sess.run(["logits"], {"input": view})[0]
                rows.append(row)
                z = row.astype(np.float64)[0]
                p = np.exp(z - z.max())
                if p[MAT_CLASS] / p.sum() >= THRESHOLD:
                    break
            logits = np.concatenate(rows)
        else:
            logits = sess.run(["logits"], {"input": x})[0]
        return logits, (time.perf_counter() - t) * 1000

    try:
        x, pre_ms = stage_pre()
    except (OSError, ValueError) as e:
        print(f"photo_peer.py: {a.photo}: cannot decode: {e}", file=sys.stderr)
        return 65
    logits, inf_ms = stage_infer(x)
    pre, inf = [pre_ms], [inf_ms]
    if a.mode == "stages":
        for _ in range(a.warmup):
            stage_pre()
            stage_infer(x)
        pre = [stage_pre()[1] for _ in range(a.runs)]
        inf = [stage_infer(x)[1] for _ in range(a.runs)]

    z = logits.astype(np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    score = float(p[:, MAT_CLASS].max())
    out = {
        "peer": "python-onnxruntime", "mode": a.mode, "photo": a.photo,
        "model": os.path.basename(a.model), "threads": a.threads, "spinning": a.spinning,
        "graph_optimization": a.graph_optimization, "five_crop": a.five_crop, "draft": a.draft,
        "crop_policy": a.crop_policy if a.five_crop else "centre", "crops_run": int(logits.shape[0]),
        "import_ms": round(IMPORT_MS, 3), "session_ms": round(session_ms, 3),
        "decode_preprocess_ms": stats(pre), "inference_ms": stats(inf),
        "score": round(score, 6), "verdict": "pass" if score >= THRESHOLD else "fail",
        "top1": int(p[0].argmax()),
        "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "versions": {"python": sys.version.split()[0], "onnxruntime": ort.__version__,
                     "numpy": np.__version__, "pillow": PIL.__version__},
    }
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
