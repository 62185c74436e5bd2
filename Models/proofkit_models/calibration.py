"""Calibration images for the static int8 model: images the project may use.

- scikit-image's sample photos that their docstrings mark CC0 or public domain
  (skimage/data/_fetchers.py in the pinned wheel), each also flipped and cropped;
- procedurally generated images (seeded): ornamental rug-like patterns (borders, diamonds,
  stripes, medallions), smooth gradients with noise, and plain textured surfaces.
No photo from ../shared/data/images is used: most of those have unknown licences, and keeping
them out also keeps them an independent test of the int8 model.
"""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from . import imaging

# name -> licence note (from the docstrings in skimage/data/_fetchers.py)
SKIMAGE_SAMPLES = {
    "astronaut.png": "public domain (NASA)",
    "chelsea.png": "CC0 (Stefan van der Walt)",
    "coffee.png": "CC0 (Rachel Michetti)",
    "rocket.jpg": "public domain (SpaceX)",
    "hubble_deep_field.jpg": "public domain (NASA)",
    "brick.png": "CC0 (CC0Textures)",
    "grass.png": "CC0 (CC0Textures)",
    "gravel.png": "CC0 (CC0Textures)",
    "camera.png": "CC0 (Lav Varshney)",
    "coins.png": "no known copyright restrictions",
    "horse.png": "CC0 (Andreas Preuss)",
    "text.png": "public domain",
    "page.png": "public domain",
    "retina.jpg": "CC0",
}


def _rug(rng: np.random.Generator, size: int = 320) -> Image.Image:
    palette = [tuple(int(c) for c in rng.integers(20, 236, 3)) for _ in range(5)]
    w, h = size, int(size * rng.uniform(1.2, 1.7))
    img = Image.new("RGB", (w, h), palette[0])
    d = ImageDraw.Draw(img)
    for k in range(int(rng.integers(2, 5))):  # nested borders
        m = 8 + k * int(rng.integers(10, 22))
        d.rectangle([m, m, w - m, h - m], outline=palette[1 + k % 4], width=int(rng.integers(3, 9)))
    step = int(rng.integers(18, 40))
    for y in range(step, h - step, step):  # diamond lattice
        for x in range(step, w - step, step):
            r = step // 2 - 2
            d.polygon([(x, y - r), (x + r, y), (x, y + r), (x - r, y)],
                      outline=palette[int(rng.integers(1, 5))])
    cx, cy, r = w // 2, h // 2, int(min(w, h) * rng.uniform(0.15, 0.3))  # medallion / arch
    d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=palette[2], outline=palette[3], width=4)
    d.rectangle([cx - r // 2, int(h * 0.15), cx + r // 2, int(h * 0.3)], fill=palette[4])
    img = img.rotate(float(rng.uniform(-25, 25)), resample=Image.Resampling.BILINEAR,
                     expand=True, fillcolor=tuple(int(c) for c in rng.integers(60, 200, 3)))
    return img.filter(ImageFilter.GaussianBlur(float(rng.uniform(0.0, 1.2))))


def _gradient(rng: np.random.Generator, size: int = 300) -> Image.Image:
    yy, xx = np.mgrid[0:size, 0:size] / size
    a, b = rng.uniform(-1, 1, 2)
    base = rng.uniform(0, 255, 3)
    tone = rng.uniform(-120, 120, 3)
    img = base + tone * (a * xx + b * yy)[..., None] + rng.normal(0, rng.uniform(2, 25), (size, size, 3))
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


def _stripes(rng: np.random.Generator, size: int = 300) -> Image.Image:
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    f, angle = rng.uniform(0.03, 0.3), rng.uniform(0, np.pi)
    wave = np.sin(f * (np.cos(angle) * xx + np.sin(angle) * yy))
    c0, c1 = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    img = c0 + (c1 - c0) * ((wave + 1) / 2)[..., None] + rng.normal(0, 8, (size, size, 3))
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


def generated_images(seed: int = 20240601, count: int = 24) -> list[Image.Image]:
    rng = np.random.default_rng(seed)
    makers = [_rug, _rug, _gradient, _stripes]
    return [makers[i % len(makers)](rng) for i in range(count)]


def skimage_variants(paths: list[str]) -> list[Image.Image]:
    out = []
    for p in paths:
        img = imaging.open_rgb(p)
        out.append(img)
        out.append(img.transpose(Image.Transpose.FLIP_LEFT_RIGHT).resize(
            (max(224, img.width * 3 // 4), max(224, img.height * 3 // 4)), Image.Resampling.BILINEAR))
    return out


def calibration_tensors(skimage_paths: list[str]) -> list[np.ndarray]:
    """Every calibration image through the Lite0 preprocessing: [1,3,224,224] float32 each."""
    imgs = skimage_variants(skimage_paths) + generated_images()
    return [imaging.lite_tensor(imaging.center_crop(imaging.resize_shorter(i))) for i in imgs]
