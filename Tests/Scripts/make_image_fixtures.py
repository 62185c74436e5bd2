#!/usr/bin/env python3
"""Makes the small image fixtures of ImageIOTests and ImageProofTests, with Pillow's own decode
of each as the expected pixels.

Run from the package root with the project's venv:
    .deps/venv/bin/python Tests/Scripts/make_image_fixtures.py [OUTDIR]
OUTDIR defaults to Tests/TestSupport/Fixtures/images. The output is deterministic for a given
Pillow/numpy (the committed files were made with Pillow 13.0.0, numpy 2.4.6), so the tests can
also re-run this script into a temporary folder and compare.

Writes, per fixture NAME: NAME.jpg/.png (the input) and NAME.rgb (Pillow's decode: EXIF
orientation applied, converted to RGB, raw 8-bit RGB rows), plus expected.json with each
fixture's upright size and notes; resample_source.rgb and resample_*.rgb (Pillow's resize of a
synthetic image); numbers.json (numpy softmax, CLIP scorer and logistic head values).
"""
import json
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image, ImageOps

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join("Tests", "TestSupport", "Fixtures", "images")
os.makedirs(OUT, exist_ok=True)
expected = {}

# Quadrant colours of the upright orientation pattern (top-left, top-right, bottom-left,
# bottom-right). The tests check them without Pillow, from the EXIF specification alone.
QUADRANTS = [(220, 30, 30), (30, 200, 40), (40, 50, 210), (230, 220, 40)]
# PIL transpose method that exif_transpose applies for each EXIF orientation value.
METHOD = {2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180,
          4: Image.Transpose.FLIP_TOP_BOTTOM, 5: Image.Transpose.TRANSPOSE,
          6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
          8: Image.Transpose.ROTATE_90}
INVERSE = {Image.Transpose.ROTATE_270: Image.Transpose.ROTATE_90,
           Image.Transpose.ROTATE_90: Image.Transpose.ROTATE_270}


def pattern(width=48, height=32):
    a = np.zeros((height, width, 3), np.uint8)
    h2, w2 = height // 2, width // 2
    a[:h2, :w2], a[:h2, w2:], a[h2:, :w2], a[h2:, w2:] = QUADRANTS
    return a


def record(name, path, **notes):
    """Decodes `path` the way the reference pipeline does and stores the expected pixels."""
    with Image.open(path) as im:
        im = ImageOps.exif_transpose(im)
        rgb = im.convert("RGB")
    np.asarray(rgb, np.uint8).tofile(os.path.join(OUT, name + ".rgb"))
    expected[name] = {"file": os.path.basename(path), "width": rgb.width, "height": rgb.height, **notes}


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def write_png(path, array, bit_depth, color_type, extra_chunks=()):
    """A minimal PNG writer (filter 0), so 16-bit files and eXIf chunks can be made exactly."""
    height, width = array.shape[:2]
    dtype = ">u2" if bit_depth == 16 else "u1"
    rows = array.astype(dtype).reshape(height, -1)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr))
        for kind, data in extra_chunks:
            f.write(png_chunk(kind, data))
        f.write(png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b""))


def exif_orientation(value, big_endian=False):
    """A TIFF structure holding only IFD0 with the Orientation tag."""
    if big_endian:
        return b"MM\x00\x2a" + struct.pack(">IH", 8, 1) + struct.pack(">HHIHH", 0x0112, 3, 1, value, 0) + b"\0\0\0\0"
    return b"II\x2a\x00" + struct.pack("<IH", 8, 1) + struct.pack("<HHIHH", 0x0112, 3, 1, value, 0) + b"\0\0\0\0"


# 1. EXIF orientation 1..8 on JPEG: the stored pixels are the upright pattern turned by the
#    inverse of what the tag says, so every file decodes to the same upright pattern.
upright = Image.fromarray(pattern())
for value in range(1, 9):
    stored = upright if value == 1 else upright.transpose(INVERSE.get(METHOD[value], METHOD[value]))
    exif = Image.Exif()
    exif[0x0112] = value
    path = os.path.join(OUT, f"orientation_{value}.jpg")
    stored.save(path, quality=95, subsampling=0, exif=exif.tobytes())
    record(f"orientation_{value}", path, orientation=value, quadrants=QUADRANTS)

# 2. Orientation 6 in a PNG eXIf chunk (big-endian TIFF this time).
stored = upright.transpose(Image.Transpose.ROTATE_90)
path = os.path.join(OUT, "orientation_6_exif.png")
write_png(path, np.asarray(stored), 8, 2, [(b"eXIf", exif_orientation(6, big_endian=True))])
record("orientation_6_exif", path, orientation=6, quadrants=QUADRANTS)

# A smooth, detailed test picture for the colour-model fixtures.
yy, xx = np.mgrid[0:40, 0:56]
photo = np.stack([(xx * 4.5) % 256, (yy * 6 + xx * 2) % 256, 255 - (yy * 5) % 256], -1).astype(np.uint8)

# 3. Grayscale JPEG, progressive JPEG, CMYK JPEG (Pillow writes Adobe-inverted CMYK).
path = os.path.join(OUT, "gray.jpg")
Image.fromarray(photo).convert("L").save(path, quality=92)
record("gray", path, color_model="gray")
path = os.path.join(OUT, "progressive.jpg")
Image.fromarray(photo).save(path, quality=90, progressive=True)
record("progressive", path, color_model="ycbcr")
path = os.path.join(OUT, "cmyk.jpg")
Image.fromarray(photo).convert("CMYK").save(path, quality=95)
record("cmyk", path, color_model="cmyk", adobe=True)

# 4. PNGs: 8-bit RGB, 16-bit RGB, 16-bit gray, palette, RGBA (alpha dropped).
path = os.path.join(OUT, "rgb8.png")
write_png(path, photo, 8, 2)
record("rgb8", path, bit_depth=8)
wide = photo.astype(np.uint16) * 257 + (np.arange(photo.size).reshape(photo.shape) % 200).astype(np.uint16)
path = os.path.join(OUT, "rgb16.png")
write_png(path, wide, 16, 2)
record("rgb16", path, bit_depth=16)
gray16 = wide[..., 1]
path = os.path.join(OUT, "gray16.png")
write_png(path, gray16, 16, 0)
# Pillow opens 16-bit gray as mode I;16 and clips it to 0..255 when converting; the expected
# 8-bit value is the high byte, computed with numpy instead.
np.repeat((gray16 >> 8).astype(np.uint8)[..., None], 3, -1).tofile(os.path.join(OUT, "gray16.rgb"))
expected["gray16"] = {"file": "gray16.png", "width": 56, "height": 40, "bit_depth": 16, "color_model": "gray"}
path = os.path.join(OUT, "palette.png")
Image.fromarray(photo).quantize(16).save(path)
record("palette", path, color_model="palette")
path = os.path.join(OUT, "rgba.png")
rgba = np.dstack([photo, ((xx + yy) * 3 % 256).astype(np.uint8)])
Image.fromarray(rgba, "RGBA").save(path)
record("rgba", path, color_model="rgb+alpha")

# 4b. A larger JPEG for DCT-scaled decoding, with Pillow's draft-mode (DCT-scaled) decode at
#     scale 1/2 as the expected pixels (Pillow's draft picks 1/2 for a 200x200 request, and so
#     does ImageDecoder with minimumShorterSide 200: 3/8 would give 150 rows).
yy, xx = np.mgrid[0:400, 0:640]
texture = np.stack([128 + 100 * np.sin(xx / 23.0) * np.cos(yy / 17.0), (xx * 0.35 + yy * 0.2) % 256,
                    128 + 90 * np.sin((xx + 2 * yy) / 11.0)], -1).astype(np.uint8)
path = os.path.join(OUT, "large.jpg")
Image.fromarray(texture).save(path, quality=85)
with Image.open(path) as im:
    im.draft("RGB", (200, 200))
    scaled = im.convert("RGB")
np.asarray(scaled, np.uint8).tofile(os.path.join(OUT, "large_half.rgb"))
expected["large_half"] = {"file": "large.jpg", "width": scaled.width, "height": scaled.height,
                          "scale": [1, 2], "minimum_shorter_side": 200}

# 5. Bad input: a PNG whose header claims 30000x30000 (a decompression bomb: the IDAT is a few
#    bytes), a JPEG whose SOF claims 30000x30000, and a JPEG cut short.
write_png(os.path.join(OUT, "bomb_30000.png"), np.zeros((1, 1, 3), np.uint8), 8, 2)
with open(os.path.join(OUT, "bomb_30000.png"), "r+b") as f:
    data = bytearray(f.read())
    data[16:24] = struct.pack(">II", 30000, 30000)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])) & 0xFFFFFFFF)
    f.seek(0)
    f.write(data)
with open(os.path.join(OUT, "progressive.jpg"), "rb") as f:
    jpeg = bytearray(f.read())
sof = jpeg.find(b"\xff\xc2")
jpeg[sof + 5:sof + 9] = struct.pack(">HH", 30000, 30000)
with open(os.path.join(OUT, "bomb_30000.jpg"), "wb") as f:
    f.write(jpeg)
big = np.asarray(Image.fromarray(photo).resize((224, 160), Image.Resampling.BICUBIC))
Image.fromarray(big).save(os.path.join(OUT, "whole.jpg"), quality=90)
with open(os.path.join(OUT, "whole.jpg"), "rb") as f:
    whole = f.read()
with open(os.path.join(OUT, "truncated.jpg"), "wb") as f:
    f.write(whole[: len(whole) * 6 // 10])
os.remove(os.path.join(OUT, "whole.jpg"))

# 6. Resampling: a synthetic 123x77 image (the same formula is in the Swift tests) resized by
#    Pillow to several sizes with both filters.
yy, xx = np.mgrid[0:77, 0:123]
source = np.stack([(xx * 7 + yy * 3) % 256, (xx * xx + yy * 11) % 256, ((xx ^ yy) * 5) % 256], -1).astype(np.uint8)
source.tofile(os.path.join(OUT, "resample_source.rgb"))
resamples = []
for filt, name in ((Image.Resampling.BILINEAR, "bilinear"), (Image.Resampling.BICUBIC, "bicubic")):
    for w, h in ((50, 31), (64, 64), (200, 120), (123, 40), (60, 77), (17, 9)):
        out = Image.fromarray(source).resize((w, h), filt)
        fname = f"resample_{name}_{w}x{h}.rgb"
        np.asarray(out, np.uint8).tofile(os.path.join(OUT, fname))
        resamples.append({"filter": name, "width": w, "height": h, "file": fname})

# 7. Numbers from numpy: softmax/top-5, the CLIP mat share, a logistic head.
rng = np.random.default_rng(741)


def r4(array):
    """Rounds to 4 decimals and casts to float32, so the JSON text parses back to the very
    float32 values numpy used."""
    return np.round(array, 4).astype(np.float32)


def listed(array):
    return [round(float(v), 4) for v in np.ravel(array)] if np.ndim(array) == 1 else [listed(a) for a in array]


logits = r4(rng.normal(0, 3, (3, 1000)))
logits[1, 741] += 12
softmax_cases = []
for row in logits:
    z = row.astype(np.float64)
    p = np.exp(z - z.max())
    p /= p.sum()
    top = np.argsort(-p, kind="stable")[:5]
    softmax_cases.append({"logits": listed(row), "p741": float(p[741]),
                          "top5": [[int(i), float(p[i])] for i in top]})


def clip_share(image, mats, others, scale=100.0):
    unit = lambda v: v / np.linalg.norm(v, axis=-1, keepdims=True)
    prompts = unit(np.concatenate([mats, others]).astype(np.float64))
    sims = prompts @ unit(image.astype(np.float64))
    logits = scale * sims
    p = np.exp(logits - logits.max())
    p /= p.sum()
    return float(p[: len(mats)].sum()), p.tolist()


mats = r4(rng.normal(0, 1, (4, 512)))
others = r4(rng.normal(0, 1, (6, 512)))
clip_cases = []
for k in range(5):
    # Unrelated, then nearer and nearer a mat prompt, then near an other prompt.
    target, weight = [(mats[0], 0.0), (mats[0], 0.02), (mats[0], 0.05), (mats[0], 0.3), (others[0], 0.3)][k]
    image = r4(rng.normal(0, 1, 512) + weight * target)
    share, probs = clip_share(image, mats, others)
    clip_cases.append({"image": listed(image), "mat_share": share, "probabilities": probs})

weights = r4(rng.normal(0, 0.05, 1280))
mean = r4(rng.normal(0.5, 0.2, 1280))
scale = r4(rng.uniform(0.5, 2.0, 1280))
head_cases = []
for k in range(4):
    features = r4(rng.normal(0.5, 1.0, 1280))
    z = float(np.dot(weights.astype(np.float64), (features.astype(np.float64) - mean) / scale) + 0.25)
    head_cases.append({"features": listed(features), "probability": 1 / (1 + np.exp(-z))})

with open(os.path.join(OUT, "numbers.json"), "w") as f:
    json.dump({"softmax": softmax_cases,
               "clip": {"mat_prompts": listed(mats), "other_prompts": listed(others), "cases": clip_cases},
               "head": {"weights": listed(weights), "bias": 0.25, "mean": listed(mean),
                        "scale": listed(scale), "cases": head_cases}}, f)
with open(os.path.join(OUT, "expected.json"), "w") as f:
    json.dump({"decode": expected, "resample": resamples}, f, indent=1, sort_keys=True)
print(f"wrote fixtures to {OUT}")
