"""The Lite0 mat scorer that proofkit implements in Swift (ImageProof), as a Python reference.

Five-crop rule (nothing fitted; the classic centre + four corners test-time crops):
- view 0: the reference crop: shorter side resized to 256, centre crop 224 at
  ((W-224)//2, (H-224)//2) of the resized image;
- views 1-4: squares of side s = floor(0.6 * min(w, h)) taken from the decoded image
  (w x h, EXIF orientation applied) at x = floor((w - s) * fx), y = floor((h - s) * fy) for
  (fx, fy) = (0,0), (1,0), (0,1), (1,1), each resized to 224 x 224;
- each view -> (RGB - 127) / 128, NCHW; one batch of 5 (the model takes any N);
- score = max over the 5 views of softmax(logits)[741]; pass when score >= 0.3.
"""
from __future__ import annotations

import numpy as np
from PIL import Image

from . import imaging as im

MAT_CLASS = 741
LITE_THRESHOLD = 0.3
FIVE_CROP_ZOOM = 0.6
ENROL_THRESHOLD = 0.75
CORNERS = [(0, 0), (1, 0), (0, 1), (1, 1)]


def five_crop_views(img: Image.Image, zoom: float = FIVE_CROP_ZOOM,
                    resample=Image.Resampling.BICUBIC) -> list[Image.Image]:
    views = [im.center_crop(im.resize_shorter(img, im.LITE_RESIZE, resample))]
    w, h = img.size
    s = int(zoom * min(w, h))
    for fx, fy in CORNERS:
        x, y = int((w - s) * fx), int((h - s) * fy)
        views.append(img.crop((x, y, x + s, y + s)).resize((im.LITE_SIZE, im.LITE_SIZE), resample))
    return views


def five_crop_batch(img: Image.Image, zoom: float = FIVE_CROP_ZOOM) -> np.ndarray:
    return np.concatenate([im.lite_tensor(v) for v in five_crop_views(img, zoom)])


def score(probabilities: np.ndarray) -> float:
    """probabilities: [5, 1000] softmax rows of the five views."""
    return float(np.max(probabilities[:, MAT_CLASS]))
