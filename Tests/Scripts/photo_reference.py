#!/usr/bin/env python3
"""Independent references for the photo-proof tests (Pillow and numpy).

    python photo_reference.py resize OUTDIR IMAGE...
        For each IMAGE (index i): Pillow decode with EXIF orientation, RGB, shorter side to 256
        with Image.BICUBIC (the longer side round()ed), as the reference pipeline of
        images/REFERENCE.md does. Writes OUTDIR/i.rgb (raw RGB rows) and OUTDIR/resize.json:
        [{"width", "height", "brightness"}] (mean Rec.601 luma / 255 of the resized image).

    python photo_reference.py fivecrop OUTDIR IMAGE...
        For each IMAGE (index i): the five-crop views of the models study (centre crop of the
        256-resized image, then squares of side int(0.6 * min(w, h)) of the decoded image at the
        four corners, each resized to 224 with Image.BICUBIC), as float32 NCHW (x - 127) / 128,
        written to OUTDIR/i.five.f32 ([5, 3, 224, 224]).
"""
import json
import os
import sys

import numpy as np


def resize(out, paths):
    from PIL import Image, ImageOps
    rows = []
    for i, path in enumerate(paths):
        with Image.open(path) as img:
            img = ImageOps.exif_transpose(img).convert("RGB")
        w, h = img.size
        if w <= h:
            size = (256, max(1, round(h * 256 / w)))
        else:
            size = (max(1, round(w * 256 / h)), 256)
        small = img.resize(size, Image.Resampling.BICUBIC)
        a = np.asarray(small, dtype=np.uint8)
        a.tofile(os.path.join(out, f"{i}.rgb"))
        f = a.astype(np.float64)
        luma = (0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]).mean() / 255.0
        rows.append({"width": size[0], "height": size[1], "brightness": float(luma)})
    with open(os.path.join(out, "resize.json"), "w") as f:
        json.dump(rows, f)


def fivecrop(out, paths):
    from PIL import Image, ImageOps
    for i, path in enumerate(paths):
        with Image.open(path) as img:
            img = ImageOps.exif_transpose(img).convert("RGB")
        w, h = img.size
        size = (256, max(1, round(h * 256 / w))) if w <= h else (max(1, round(w * 256 / h)), 256)
        small = img.resize(size, Image.Resampling.BICUBIC)
        left, top = (size[0] - 224) // 2, (size[1] - 224) // 2
        views = [small.crop((left, top, left + 224, top + 224))]
        s = int(0.6 * min(w, h))
        for fx, fy in ((0, 0), (1, 0), (0, 1), (1, 1)):
            x, y = int((w - s) * fx), int((h - s) * fy)
            views.append(img.crop((x, y, x + s, y + s)).resize((224, 224), Image.Resampling.BICUBIC))
        batch = np.stack([((np.asarray(v, np.float32) - 127.0) / 128.0).transpose(2, 0, 1) for v in views])
        batch.astype(np.float32).tofile(os.path.join(out, f"{i}.five.f32"))


if __name__ == "__main__":
    if sys.argv[1] == "resize":
        resize(sys.argv[2], sys.argv[3:])
    elif sys.argv[1] == "fivecrop":
        fivecrop(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(f"unknown mode {sys.argv[1]}")
