#!/usr/bin/env python3
"""Makes the phone-like JPEG the benchmark suite times, deterministically.

    .deps/venv/bin/python Benchmarks/python/make_phone_photo.py OUT.jpg [--size 1632x1224]

The default is a 2 MP photo (1632x1224, 4:2:0 chroma, quality 92, as a phone's 2 MP mode
writes), the same picture as Benchmarks/image_preprocess_bench.py uses: the shared photo
../shared/data/images/mat/mat_037.jpg resized with bicubic when ../shared/data is there (a real
prayer mat), else a synthetic textured picture from a seeded generator (a fresh clone). Decoding
speed depends on the size, subsampling and quality, not much on the content, so both give
comparable figures; the report says which one was used. Prints one JSON line:
{"path", "width", "height", "bytes", "source": "shared mat_037" | "synthetic"}.
"""
import argparse
import json
import os

import numpy as np
from PIL import Image, ImageOps

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "..", "shared", "data", "images", "mat", "mat_037.jpg")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--size", default="1632x1224", help="WIDTHxHEIGHT (default 1632x1224, 2 MP)")
    parser.add_argument("--synthetic", action="store_true", help="ignore ../shared/data")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    if os.path.exists(SHARED) and not args.synthetic:
        with Image.open(SHARED) as im:
            img = ImageOps.exif_transpose(im).convert("RGB").resize((width, height), Image.Resampling.BICUBIC)
        source = "shared mat_037"
    else:
        yy, xx = np.mgrid[0:height, 0:width]
        rng = np.random.default_rng(1)
        a = np.stack([128 + 100 * np.sin(xx / 23.0) * np.cos(yy / 17.0), (xx * 0.35 + yy * 0.2) % 256,
                      128 + 90 * np.sin((xx + 2 * yy) / 11.0)], -1) + rng.normal(0, 12, (height, width, 3))
        img = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))
        source = "synthetic"
    img.save(args.out, quality=92, subsampling=2)
    print(json.dumps({"path": args.out, "width": width, "height": height,
                      "bytes": os.path.getsize(args.out), "source": source}))


if __name__ == "__main__":
    main()
