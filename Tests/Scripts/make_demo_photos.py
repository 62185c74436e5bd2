#!/usr/bin/env python3
"""Makes the photos that `proofkit demo` shows and the `proofkit mat` tests use, deterministically.

    .deps/venv/bin/python Tests/Scripts/make_demo_photos.py

Writes, in Tests/TestSupport/Fixtures/images/:
- demo_mat.jpg (640x480): a RENDERED picture of a prayer mat (drawn here with Pillow from a seeded
  generator: a red rug with a mihrab arch, a patterned border and fringes, on a wooden floor). It
  is not a photo; EfficientNet-Lite0 calls it "prayer rug, prayer mat" (about 0.7). Made by
  proofkit, same licence as the project.
- demo_coffee.jpg (480x320): scikit-image's `coffee` sample photo (CC0, photographer Rachel
  Michetti, per skimage/data/_fetchers.py), resized; read from the scikit-image 0.26.0 wheel that
  Models/build.sh downloads into .deps/wheels (sha256-checked there).
- dark_coffee.jpg (480x320): the same photo at 12 % brightness (a dark room).
- closeup_mat.jpg (480x360): a close-up of demo_mat.jpg's pattern (a 110x82 crop of the decoded
  JPEG at (270, 210), brightened 1.5x, enlarged): a mat photographed too near. Lite0 rejects it
  with class 741 at about 0.09 (fp32 0.10), so `proofkit mat` gives the retake hint (MatRetakeHint).
and the same demo_mat.jpg and demo_coffee.jpg, byte for byte, in Sources/CLI/ProofkitDemoMedia/Media/,
then runs embed_demo_media.py, which writes them into the binary's source (EmbeddedMedia.swift) so
that `proofkit demo` needs no data files.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import glob
import io
import os
import zipfile

import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFilter

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "Tests", "TestSupport", "Fixtures", "images")
MEDIA = os.path.join(ROOT, "Sources", "CLI", "ProofkitDemoMedia", "Media")
SEED = 30


def render_mat(seed: int = SEED, W: int = 640, H: int = 480) -> Image.Image:
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    base = np.array([150, 110, 70]) * rng.uniform(0.8, 1.1)  # wooden floor
    grain = 12 * np.sin(xx / 7.0 + 3 * np.sin(yy / 40.0)) + rng.normal(0, 6, (H, W))
    boards = ((yy // 60) % 2) * 10
    img = Image.fromarray(np.clip(base[None, None, :] + (grain + boards)[..., None], 0, 255).astype(np.uint8))
    rw, rh = 300, 460
    red = tuple(int(c) for c in (rng.integers(120, 170), rng.integers(10, 40), rng.integers(20, 50)))
    navy, gold, cream, green = (25, 35, 80), (200, 160, 70), (225, 210, 170), (30, 90, 60)
    r = Image.new("RGB", (rw, rh), red)
    d = ImageDraw.Draw(r)
    d.rectangle([6, 6, rw - 7, rh - 7], outline=navy, width=18)  # borders
    d.rectangle([26, 26, rw - 27, rh - 27], outline=gold, width=4)
    for x in range(15, rw - 10, 16):  # border diamonds
        for y in (15, rh - 16):
            d.polygon([(x, y - 5), (x + 5, y), (x, y + 5), (x - 5, y)], fill=cream)
    for y in range(15, rh - 10, 16):
        for x in (15, rw - 16):
            d.polygon([(x, y - 5), (x + 5, y), (x, y + 5), (x - 5, y)], fill=cream)
    ax0, ax1, atop = 50, rw - 50, 60  # the mihrab arch
    d.rectangle([ax0, atop + 60, ax1, rh - 50], fill=(rng.integers(100, 140), 15, 30), outline=gold, width=3)
    d.pieslice([ax0, atop, ax1, atop + (ax1 - ax0)], 180, 360, fill=(rng.integers(100, 140), 15, 30),
               outline=gold, width=3)
    d.polygon([((ax0 + ax1) // 2, atop - 25), ((ax0 + ax1) // 2 - 10, atop + 5), ((ax0 + ax1) // 2 + 10, atop + 5)],
              fill=gold)
    cx = rw // 2  # medallion
    d.ellipse([cx - 40, 210, cx + 40, 290], fill=navy, outline=gold, width=3)
    d.ellipse([cx - 18, 232, cx + 18, 268], fill=cream)
    for k in range(8):
        a = k * np.pi / 4
        d.ellipse([cx + 60 * np.cos(a) - 6, 250 + 60 * np.sin(a) - 6, cx + 60 * np.cos(a) + 6,
                   250 + 60 * np.sin(a) + 6], fill=gold)
    for _ in range(200):
        x, y = rng.integers(60, rw - 60), rng.integers(130, rh - 60)
        d.point((int(x), int(y)), fill=cream)
    for y in range(rh - 45, rh - 35, 4):
        d.line([(30, y), (rw - 30, y)], fill=green, width=2)
    a = np.asarray(r).astype(np.float64)  # weave texture
    a += rng.normal(0, 9, a.shape) + 6 * np.sin(np.arange(rw)[None, :, None] * 2.5)
    r = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(0.6))
    fr = Image.new("RGBA", (rw, rh + 40), (0, 0, 0, 0))  # fringes
    fd = ImageDraw.Draw(fr)
    for x in range(8, rw - 8, 5):
        fd.line([(x, 0), (x + rng.integers(-3, 4), 20)], fill=cream + (255,), width=2)
        fd.line([(x, rh + 20), (x + rng.integers(-3, 4), rh + 39)], fill=cream + (255,), width=2)
    fr.paste(r, (0, 20))
    angle = float(rng.uniform(-20, 20)) + 90 * int(rng.integers(0, 2))
    fr = fr.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True)
    s = rng.uniform(0.75, 1.0) * min(W / fr.width, H / fr.height) * 0.95
    fr = fr.resize((int(fr.width * s), int(fr.height * s)), Image.Resampling.LANCZOS)
    img.paste(fr, ((W - fr.width) // 2 + int(rng.integers(-30, 30)), (H - fr.height) // 2 + int(rng.integers(-20, 20))), fr)
    a = np.asarray(img).astype(np.float64)  # soft vignette
    a *= (1 - 0.5 * (((xx - W / 2) / W) ** 2 + ((yy - H / 2) / H) ** 2))[..., None]
    return Image.fromarray(np.clip(a, 0, 255).astype(np.uint8))


def coffee() -> Image.Image:
    wheels = glob.glob(os.path.join(ROOT, ".deps", "wheels", "scikit_image-0.26.0-*.whl"))
    if not wheels:
        raise SystemExit("no scikit-image 0.26.0 wheel in .deps/wheels: run Models/build.sh first")
    with zipfile.ZipFile(wheels[0]) as z:
        return Image.open(io.BytesIO(z.read("skimage/data/coffee.png"))).convert("RGB")


def jpeg(img: Image.Image, quality: int = 85) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality, optimize=True)
    return buf.getvalue()


def closeup(mat_jpeg: bytes) -> Image.Image:
    """A close-up of the rendered mat: too near to show the whole mat."""
    decoded = Image.open(io.BytesIO(mat_jpeg)).convert("RGB")
    crop = decoded.crop((270, 210, 380, 292))
    return ImageEnhance.Brightness(crop).enhance(1.5).resize((480, 360), Image.Resampling.LANCZOS)


def main() -> None:
    os.makedirs(OUT, exist_ok=True)
    mat = jpeg(render_mat())
    cup = coffee().resize((480, 320), Image.Resampling.LANCZOS)
    photo = jpeg(cup)
    dark = jpeg(ImageEnhance.Brightness(cup).enhance(0.12))
    near = jpeg(closeup(mat))
    for name, data in (("demo_mat.jpg", mat), ("demo_coffee.jpg", photo), ("dark_coffee.jpg", dark),
                       ("closeup_mat.jpg", near)):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"wrote {name} ({len(data)} bytes)")
    for name in ("demo_mat.jpg", "demo_coffee.jpg"):
        shutil.copyfile(os.path.join(OUT, name), os.path.join(MEDIA, name))
        print(f"copied {name} to {os.path.relpath(MEDIA, ROOT)}")
    subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "embed_demo_media.py")],
                   check=True)


if __name__ == "__main__":
    main()
