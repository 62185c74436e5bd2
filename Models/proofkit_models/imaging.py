"""Image preprocessing shared by the build checks, the accuracy study and the benchmark peer."""
from __future__ import annotations

import numpy as np
from PIL import Image, ImageOps

LITE_SIZE = 224
LITE_RESIZE = 256


def open_rgb(path: str) -> Image.Image:
    """Decode with the EXIF orientation applied, as RGB."""
    img = Image.open(path)
    img = ImageOps.exif_transpose(img)
    return img.convert("RGB")


def resize_shorter(img: Image.Image, shorter: int = LITE_RESIZE,
                   resample=Image.Resampling.BICUBIC) -> Image.Image:
    """Resize so the shorter side is `shorter` px, keeping the aspect ratio (rounded)."""
    w, h = img.size
    if w <= h:
        nw, nh = shorter, max(1, round(h * shorter / w))
    else:
        nw, nh = max(1, round(w * shorter / h)), shorter
    return img.resize((nw, nh), resample)


def center_crop(img: Image.Image, size: int = LITE_SIZE) -> Image.Image:
    w, h = img.size
    left, top = (w - size) // 2, (h - size) // 2
    return img.crop((left, top, left + size, top + size))


def lite_tensor(img: Image.Image) -> np.ndarray:
    """A 224x224 RGB image -> [1,3,224,224] float32, (RGB - 127) / 128."""
    a = np.asarray(img, dtype=np.float32)
    return ((a - 127.0) / 128.0).transpose(2, 0, 1)[None].copy()


def brightness(img: Image.Image) -> float:
    """Mean Rec.601 luma of an RGB image, 0..1."""
    a = np.asarray(img, dtype=np.float64)
    return float((0.299 * a[..., 0] + 0.587 * a[..., 1] + 0.114 * a[..., 2]).mean() / 255.0)


def lite_input(path: str, resample=Image.Resampling.BICUBIC) -> np.ndarray:
    """The reference preprocessing: EXIF-aware decode, shorter side 256, centre crop 224."""
    return lite_tensor(center_crop(resize_shorter(open_rgb(path), LITE_RESIZE, resample)))


def softmax(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
