#!/usr/bin/env python3
"""Photo decode + preprocess: proofkit against Pillow + numpy, side by side in one run.

The peer is the reference pipeline of the photo proof in Python (what the Python ONNX Runtime
script does before inference): Pillow decode with EXIF orientation, RGB, shorter side to 256 with
Image.BICUBIC, centre crop 224, (x - 127) / 128 as float32 NCHW with numpy, plus the brightness.
proofkit's figure is `proofkit-bench`'s `image.decode_preprocess.fast` (DCT-scaled decode), with
the full-size decode and the parts shown too.

The inputs (made here): a 2 MP phone-like JPEG (a smooth synthetic scene with sensor-like noise,
1632x1224, 4:2:0, q92, about 1.8 bits per pixel); when ../shared/data is there, also a detailed
2 MP JPEG (the finely patterned rug of mat/mat_037.jpg resized to 1632x1224, q92, about 4.5 bits
per pixel) and that real progressive file as shared. libjpeg-turbo's entropy decoding, which DCT
scaling cannot shorten, grows with the file's bits per pixel, so the ratio does too.

Usage: .deps/venv/bin/python Benchmarks/image_preprocess_bench.py [--binary .build/release/proofkit-bench]
       [--runs 30] [--rounds 5]
Prints JSON lines: each peer's median and each proofkit benchmark with its ratio to both peers
(the median over rounds that alternate them, and the range). Two peers: Pillow decoding every
pixel (the default row), and Pillow with draft() (DCT-scaled decoding at the smallest scale that
keeps the shorter side >= 256, like proofkit's fast path: the like-for-like row).
Target: image.decode_preprocess.fast at most 0.3x Pillow's median on a 2 MP phone JPEG (against
the full-size peer); the draft() row is reported beside it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageOps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_photos(folder):
    """The benchmark photos: [(name, path, description)]."""
    photos = []
    # 1. Phone-like: a smooth synthetic scene with sensor-like noise, 1632x1224 (2.0 MP),
    #    baseline 4:2:0 quality 92, about 1.8 bits per pixel (phone JPEGs are 1.5 to 3).
    yy, xx = np.mgrid[0:1224, 0:1632]
    rng = np.random.default_rng(1)
    a = np.stack([128 + 100 * np.sin(xx / 23.0) * np.cos(yy / 17.0), (xx * 0.35 + yy * 0.2) % 256,
                  128 + 90 * np.sin((xx + 2 * yy) / 11.0)], -1) + rng.normal(0, 3, (1224, 1632, 3))
    path = os.path.join(folder, "phone_like_2mp.jpg")
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(path, quality=92, subsampling=2)
    photos.append(("phone_like_2mp", path, "synthetic 1632x1224 baseline 4:2:0 q92"))
    shared = os.path.join(ROOT, "..", "shared", "data", "images", "mat", "mat_037.jpg")
    if os.path.exists(shared):
        # 2. Detailed: the shared mat photo (a finely patterned rug) resized to 1632x1224,
        #    baseline 4:2:0 q92, about 4.5 bits per pixel: entropy decoding dominates.
        with Image.open(shared) as im:
            img = ImageOps.exif_transpose(im).convert("RGB").resize((1632, 1224), Image.Resampling.BICUBIC)
        path = os.path.join(folder, "detailed_2mp.jpg")
        img.save(path, quality=92, subsampling=2)
        photos.append(("detailed_2mp", path, "shared mat_037 resized to 1632x1224, baseline 4:2:0 q92"))
        # 3. The real file as shared: progressive 4:4:4, 1588x1191 (1.9 MP).
        photos.append(("real_mat_037", shared, "shared mat_037.jpg as is: progressive 4:4:4 1588x1191"))
    else:
        print("note: ../shared/data is missing: only the synthetic photo is measured", file=sys.stderr)
    return photos


def pillow_pipeline(path):
    with Image.open(path) as im:
        img = ImageOps.exif_transpose(im).convert("RGB")
    w, h = img.size
    size = (256, max(1, round(h * 256 / w))) if w <= h else (max(1, round(w * 256 / h)), 256)
    small = img.resize(size, Image.Resampling.BICUBIC)
    a = np.asarray(small, dtype=np.float64)
    brightness = float((0.299 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2]).mean() / 255.0)
    left, top = (size[0] - 224) // 2, (size[1] - 224) // 2
    crop = np.asarray(small.crop((left, top, left + 224, top + 224)), dtype=np.float32)
    x = ((crop - 127.0) / 128.0).transpose(2, 0, 1)[None].copy()
    return x, brightness


def pillow_draft_pipeline(path):
    """The same pipeline as a careful Python user writes it: Pillow's draft() first, so libjpeg
    decodes at the smallest DCT scale (1/2, 1/4, 1/8) that keeps the shorter side at least 256,
    as proofkit's fast path does; then the same resize, crop and normalisation."""
    with Image.open(path) as im:
        w, h = im.size
        shorter = min(w, h)
        im.draft("RGB", (-(-256 * w // shorter), -(-256 * h // shorter)))
        img = ImageOps.exif_transpose(im).convert("RGB")
    w, h = img.size
    size = (256, max(1, round(h * 256 / w))) if w <= h else (max(1, round(w * 256 / h)), 256)
    small = img.resize(size, Image.Resampling.BICUBIC)
    a = np.asarray(small, dtype=np.float64)
    brightness = float((0.299 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2]).mean() / 255.0)
    left, top = (size[0] - 224) // 2, (size[1] - 224) // 2
    crop = np.asarray(small.crop((left, top, left + 224, top + 224)), dtype=np.float32)
    x = ((crop - 127.0) / 128.0).transpose(2, 0, 1)[None].copy()
    return x, brightness


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "proofkit-bench"))
    parser.add_argument("--runs", type=int, default=30, help="peer runs per round")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"{args.binary} is missing: swift build -c release --product proofkit-bench")
    with tempfile.TemporaryDirectory() as folder:
        for name, photo, description in make_photos(folder):
            for _ in range(3):
                pillow_pipeline(photo)
                pillow_draft_pipeline(photo)
            # Rounds alternate the peers and proofkit, so all see the same machine load (this
            # machine is shared); the reported ratio is the median of the per-round ratios.
            peer_medians, draft_medians, rows = [], [], {}

            def timed(pipeline):
                times = []
                for _ in range(args.runs):
                    start = time.perf_counter()
                    pipeline(photo)
                    times.append(time.perf_counter() - start)
                return statistics.median(times)

            for _ in range(args.rounds):
                peer = timed(pillow_pipeline)
                draft = timed(pillow_draft_pipeline)
                peer_medians.append(peer)
                draft_medians.append(draft)
                out = subprocess.run([args.binary, "--filter", "image.", "--image", photo],
                                     capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    row = json.loads(line)
                    rows.setdefault(row["name"], []).append((row["median_s"], row["median_s"] / peer,
                                                             row["median_s"] / draft))
            print(json.dumps({"photo": name, "description": description, "bytes": os.path.getsize(photo),
                              "name": "peer.pillow_numpy.decode_preprocess",
                              "median_s": round(statistics.median(peer_medians), 6),
                              "rounds": args.rounds, "runs_per_round": args.runs}))
            print(json.dumps({"photo": name, "name": "peer.pillow_draft_numpy.decode_preprocess",
                              "median_s": round(statistics.median(draft_medians), 6),
                              "rounds": args.rounds, "runs_per_round": args.runs}))
            for bench, values in rows.items():
                print(json.dumps({"photo": name, "name": bench,
                                  "median_s": round(statistics.median(v[0] for v in values), 6),
                                  "ratio_to_pillow": round(statistics.median(v[1] for v in values), 4),
                                  "ratio_range": [round(min(v[1] for v in values), 4),
                                                  round(max(v[1] for v in values), 4)],
                                  "ratio_to_pillow_draft": round(statistics.median(v[2] for v in values), 4),
                                  "ratio_draft_range": [round(min(v[2] for v in values), 4),
                                                        round(max(v[2] for v in values), 4)]}))

if __name__ == "__main__":
    main()
