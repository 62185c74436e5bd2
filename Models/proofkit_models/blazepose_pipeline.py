"""MediaPipe Pose's single-image pipeline in numpy, as the reference for proofkit's Swift engine and
as the source of the landmark model's inputs in the build's check (blazepose.py).

Every number comes from MediaPipe 0.10.21's graph files (mediapipe/modules/pose_detection/
pose_detection_cpu.pbtxt, pose_landmark/pose_detection_to_roi.pbtxt, pose_landmarks_to_roi.pbtxt,
pose_landmark_by_roi_cpu.pbtxt, tensors_to_pose_landmarks_and_segmentation.pbtxt) and the
calculators they name; PIPELINE below is written to pose_pipeline.json for the Swift side.

Image sampling follows MediaPipe's OpenCV ImageToTensorCalculator: the (rotated) region's corners
map to the tensor's corners, each tensor pixel (u, v) reads the source at M (u, v) with pixel
indices as coordinates (no half-pixel shift), bilinear in OpenCV's fixed point (see sample), the
result 8 bits (OpenCV warps the uint8 image), then scaled linearly to the tensor's range.
"""
from __future__ import annotations

import math

import numpy as np

SOURCE = "MediaPipe 0.10.21 (git tag v0.10.21), mediapipe/modules/pose_detection and pose_landmark"
PIPELINE = {
    "format": "proofkit-pose-pipeline",
    "version": 1,
    "source": SOURCE,
    "detector": {
        "model": "pose_detection.onnx",
        "input": {"name": "image", "shape": [1, 224, 224, 3], "layout": "NHWC", "channels": "RGB",
                  "range": [-1.0, 1.0], "keep_aspect_ratio": True, "border": "zero (pixel 0, so -1.0 in the tensor)",
                  "note": "the whole image letterboxed: scaled to fit 224x224, centred, padding on two sides"},
        "outputs": {"regressors": [1, 2254, 12], "scores": [1, 2254, 1]},
        "anchors": {"num_layers": 5, "min_scale": 0.1484375, "max_scale": 0.75, "input_size_height": 224,
                    "input_size_width": 224, "anchor_offset_x": 0.5, "anchor_offset_y": 0.5,
                    "strides": [8, 16, 32, 32, 32], "aspect_ratios": [1.0], "fixed_anchor_size": True,
                    "interpolated_scale_aspect_ratio": 1.0, "reduce_boxes_in_lowest_layer": False,
                    "count": 2254,
                    "note": "SsdAnchorsCalculator: layers of the same stride are merged; per cell 2 anchors per "
                            "layer (aspect 1 and the interpolated one); fixed_anchor_size: every anchor w = h = 1; "
                            "centre ((x + 0.5) / fw, (y + 0.5) / fh) with fw = ceil(224 / stride); order: layer "
                            "group, row y, column x, anchor"},
        "decode": {"num_classes": 1, "num_boxes": 2254, "num_coords": 12, "box_coord_offset": 0,
                   "keypoint_coord_offset": 4, "num_keypoints": 4, "num_values_per_keypoint": 2,
                   "sigmoid_score": True, "score_clipping_thresh": 100.0, "reverse_output_order": True,
                   "box_format": "XYWH (reverse_output_order): x_center, y_center, w, h, then (x, y) per keypoint",
                   "x_scale": 224.0, "y_scale": 224.0, "w_scale": 224.0, "h_scale": 224.0,
                   "apply_exponential_on_box_size": False, "min_score_thresh": 0.5,
                   "note": "x = raw / 224 * anchor.w + anchor.x_center (keypoints alike), w = raw / 224 * anchor.w; "
                           "score = sigmoid(clamp(raw, -100, 100)), kept when >= 0.5"},
        "nms": {"algorithm": "WEIGHTED", "overlap_type": "INTERSECTION_OVER_UNION",
                "min_suppression_threshold": 0.3, "max_num_detections": -1,
                "note": "candidates sorted by score; each round the best one's group is every remaining box "
                        "with IoU > 0.3 (itself included): box corners and keypoints averaged weighted by score, "
                        "score the best one's; the pose graph keeps the first detection only"},
        "letterbox_removal": "x = (x - pad_left) / (1 - pad_left - pad_right), y alike (DetectionLetterboxRemovalCalculator)",
        "keypoints": {"0": "mid-hip centre", "1": "a point that encodes the size and rotation (full body)",
                      "2": "mid-shoulder centre", "3": "a point that encodes the size and rotation (upper body)"},
        "box": "the detected face's bounding box (pose_detection_cpu.pbtxt)",
    },
    "detection_roi": {
        "calculator": "AlignmentPointsRectsCalculator + RectTransformationCalculator",
        "rotation_vector_start_keypoint_index": 0, "rotation_vector_end_keypoint_index": 1,
        "rotation_vector_target_angle_degrees": 90.0,
        "scale_x": 1.25, "scale_y": 1.25, "shift_x": 0.0, "shift_y": 0.0, "square_long": True,
        "note": "in pixels: centre = keypoint 0; size = 2 * |keypoint 1 - keypoint 0|, square; rotation = "
                "normalize(pi/2 - atan2(-(y1 - y0), x1 - x0)) to [-pi, pi); then the square side times 1.25"},
    "landmarks": {
        "model": "pose_landmark_full.onnx",
        "input": {"name": "image", "shape": [1, 256, 256, 3], "layout": "NHWC", "channels": "RGB",
                  "range": [0.0, 1.0], "keep_aspect_ratio": True, "border": "replicate",
                  "note": "the rotated square ROI warped to 256x256: ROI corner (top-left after rotation) to "
                          "tensor (0, 0)"},
        "outputs": {"landmarks": [1, 195], "presence": [1, 1], "segmentation": [1, 256, 256, 1],
                    "heatmap": [1, 64, 64, 39], "world_landmarks": [1, 117]},
        "num_landmarks": 39, "values_per_landmark": 5,
        "landmark_values": "x, y (pixels of the 256x256 input), z (same scale as x), visibility logit, presence logit",
        "visibility_activation": "sigmoid", "presence_activation": "sigmoid",
        "pose_landmarks": 33, "auxiliary_landmarks": [33, 34],
        "presence": "the 'presence' output is already a probability (the model ends in a sigmoid); a pose "
                    "is there when presence > 0.5 (ThresholdingCalculator threshold 0.5)",
        "presence_threshold": 0.5,
        "refine_from_heatmap": {"kernel_size": 7, "min_confidence_to_refine": 0.5, "refine_presence": False,
                                "refine_visibility": False, "heatmap": "[1,64,64,39] logits, sigmoid applied",
                                "note": "RefineLandmarksFromHeatmapCalculator: for each landmark, the 7x7 window "
                                        "of the heatmap (clipped to the map) centred at column int(x * 64), row "
                                        "int(y * 64) (x, y normalized to the crop, truncated toward zero; "
                                        "skipped when outside 0..63); if its max sigmoid value >= 0.5, x, y "
                                        "become the sigmoid-weighted mean of the window's column / 64 and "
                                        "row / 64 (before the projection to the image)"},
        "projection": "normalized x, y (/256) then: dx = x - 0.5, dy = y - 0.5; X = (cos r dx - sin r dy) * "
                      "roi.width + roi.x_center; Y = (sin r dx + cos r dy) * roi.height + roi.y_center (ROI "
                      "normalized to the image); z = z / 256 * roi.width",
        "world_landmarks": "39 x (x, y, z) in metres, hip-centred; rotated by the ROI's rotation about z",
    },
    "tracking_roi": {
        "calculator": "PoseLandmarksToRoi: AlignmentPointsRectsCalculator on the auxiliary landmarks",
        "start_landmark": 33, "end_landmark": 34, "rotation_vector_target_angle_degrees": 90.0,
        "scale_x": 1.25, "scale_y": 1.25, "square_long": True,
        "note": "video: the next frame's ROI from this frame's landmarks 33 (centre) and 34 (scale/rotation); "
                "the detector runs again when presence <= 0.5"},
    "keypoints_33": ["nose", "left_eye_inner", "left_eye", "left_eye_outer", "right_eye_inner", "right_eye",
                     "right_eye_outer", "left_ear", "right_ear", "mouth_left", "mouth_right", "left_shoulder",
                     "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_pinky",
                     "right_pinky", "left_index", "right_index", "left_thumb", "right_thumb", "left_hip",
                     "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle", "left_heel",
                     "right_heel", "left_foot_index", "right_foot_index"],
}


# ------------------------------------------------------------------ anchors and detections

def anchors() -> np.ndarray:
    """[2254, 2] anchor centres (x, y), normalized; every anchor is 1 x 1 (fixed_anchor_size)."""
    a = PIPELINE["detector"]["anchors"]
    strides, n = a["strides"], a["num_layers"]
    out = []
    layer = 0
    while layer < n:
        per_cell = 0
        last = layer
        while last < n and strides[last] == strides[layer]:
            per_cell += len(a["aspect_ratios"]) + (1 if a["interpolated_scale_aspect_ratio"] > 0 else 0)
            last += 1
        stride = strides[layer]
        fh = math.ceil(a["input_size_height"] / stride)
        fw = math.ceil(a["input_size_width"] / stride)
        for y in range(fh):
            for x in range(fw):
                for _ in range(per_cell):
                    out.append(((x + a["anchor_offset_x"]) / fw, (y + a["anchor_offset_y"]) / fh))
        layer = last
    arr = np.array(out, dtype=np.float32)
    if len(arr) != a["count"]:
        raise ValueError(f"{len(arr)} anchors")
    return arr


def decode(regressors: np.ndarray, scores: np.ndarray) -> list[dict]:
    """Raw detector outputs ([2254,12], [2254] or with batch) -> detections above the score
    threshold, normalized to the 224x224 (letterboxed) tensor: {"score", "box": [xmin, ymin, xmax,
    ymax], "keypoints": [[x, y] x 4]}."""
    d = PIPELINE["detector"]["decode"]
    r = np.asarray(regressors, np.float64).reshape(-1, 12)
    s = np.asarray(scores, np.float64).reshape(-1)
    anc = anchors()
    score = 1.0 / (1.0 + np.exp(-np.clip(s, -d["score_clipping_thresh"], d["score_clipping_thresh"])))
    out = []
    for i in np.nonzero(score >= d["min_score_thresh"])[0]:
        ax, ay = anc[i]
        xc = r[i, 0] / d["x_scale"] + ax
        yc = r[i, 1] / d["y_scale"] + ay
        w = r[i, 2] / d["w_scale"]
        h = r[i, 3] / d["h_scale"]
        kps = [[float(r[i, 4 + 2 * k] / d["x_scale"] + ax), float(r[i, 5 + 2 * k] / d["y_scale"] + ay)]
               for k in range(d["num_keypoints"])]
        out.append({"score": float(score[i]), "anchor": int(i),
                    "box": [float(xc - w / 2), float(yc - h / 2), float(xc + w / 2), float(yc + h / 2)],
                    "keypoints": kps})
    return out


def _iou(a: list[float], b: list[float]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def weighted_nms(dets: list[dict]) -> list[dict]:
    thr = PIPELINE["detector"]["nms"]["min_suppression_threshold"]
    remaining = sorted(dets, key=lambda d: -d["score"])  # (stable: ties keep anchor order)
    out = []
    while remaining:
        best = remaining[0]
        group = [d for d in remaining if _iou(d["box"], best["box"]) > thr]
        rest = [d for d in remaining if _iou(d["box"], best["box"]) <= thr]
        total = sum(d["score"] for d in group)
        box = [sum(d["box"][j] * d["score"] for d in group) / total for j in range(4)]
        kps = [[sum(d["keypoints"][k][j] * d["score"] for d in group) / total for j in range(2)]
               for k in range(len(best["keypoints"]))]
        out.append({"score": best["score"], "anchor": best["anchor"], "box": box, "keypoints": kps,
                    "merged": len(group)})
        if len(rest) == len(remaining):
            break
        remaining = rest
    return out


# ------------------------------------------------------------------ regions and sampling

def letterbox_roi(width: int, height: int) -> tuple[dict, list[float]]:
    """The detector's ROI (the whole image padded to a square) and the padding (left, top, right,
    bottom) as fractions of the padded square (ImageToTensorCalculator's PadRoi)."""
    side = max(width, height)
    roi = {"x_center": width / 2, "y_center": height / 2, "width": float(side), "height": float(side), "rotation": 0.0}
    h_pad = (1 - width / side) / 2
    v_pad = (1 - height / side) / 2
    return roi, [h_pad, v_pad, h_pad, v_pad]


def remove_letterbox(det: dict, pad: list[float]) -> dict:
    l, t, r, b = pad
    sx, sy = 1 - l - r, 1 - t - b
    box = det["box"]
    return {**det, "box": [(box[0] - l) / sx, (box[1] - t) / sy, (box[2] - l) / sx, (box[3] - t) / sy],
            "keypoints": [[(x - l) / sx, (y - t) / sy] for x, y in det["keypoints"]]}


def normalize_radians(a: float) -> float:
    return a - 2 * math.pi * math.floor((a + math.pi) / (2 * math.pi))


def roi_from_points(x0: float, y0: float, x1: float, y1: float, width: int, height: int) -> dict:
    """AlignmentPointsRectsCalculator + RectTransformationCalculator (scale 1.25, square_long), from
    two normalized points; returns the ROI in pixels."""
    cfg = PIPELINE["detection_roi"]
    px0, py0, px1, py1 = x0 * width, y0 * height, x1 * width, y1 * height
    size = math.hypot(px1 - px0, py1 - py0) * 2.0
    rot = normalize_radians(math.radians(cfg["rotation_vector_target_angle_degrees"]) - math.atan2(-(py1 - py0), px1 - px0))
    side = size  # square_long of a square
    return {"x_center": px0, "y_center": py0, "width": side * cfg["scale_x"], "height": side * cfg["scale_y"],
            "rotation": rot}


def roi_matrix(roi: dict, out_w: int, out_h: int) -> np.ndarray:
    """2x3 matrix taking tensor pixel (u, v) to source pixel coordinates."""
    c, s = math.cos(roi["rotation"]), math.sin(roi["rotation"])
    sx, sy = roi["width"] / out_w, roi["height"] / out_h
    # source = centre + R (sx (u - out_w/2), sy (v - out_h/2))
    return np.array([[c * sx, -s * sy, roi["x_center"] - c * sx * out_w / 2 + s * sy * out_h / 2],
                     [s * sx, c * sy, roi["y_center"] - s * sx * out_w / 2 - c * sy * out_h / 2]], dtype=np.float64)


def sample(image: np.ndarray, m: np.ndarray, out_w: int, out_h: int, border: str) -> np.ndarray:
    """Bilinear warp of an HxWx3 uint8 image, out[v, u] = image at m (u, v), bit for bit as OpenCV's
    warpPerspective (INTER_LINEAR) on uint8, which MediaPipe's ImageToTensorCalculator calls: the
    source position is rounded to 1/32 pixel (X = round(32 x), integer part X >> 5, fraction X & 31),
    the four weights are the bilinear ones rounded to 15-bit fixed point, and the sum is rounded
    ((s + 2^14) >> 15). Border "zero" (each tap outside the image reads 0) or "replicate". The
    landmark model is sensitive enough to its input that plain float bilinear sampling (at most 3
    levels away on a pixel) moved MediaPipe's landmarks by up to 4 % of the diagonal on a photo whose
    ROI is much larger than the photo (Models/MODELS.md)."""
    h, w = image.shape[:2]
    u, v = np.meshgrid(np.arange(out_w, dtype=np.float64), np.arange(out_h, dtype=np.float64))
    x = m[0, 0] * u + m[0, 1] * v + m[0, 2]
    y = m[1, 0] * u + m[1, 1] * v + m[1, 2]
    # OpenCV computes these in double and converts with cvRound (round half to even), as np.rint.
    xi = np.rint(x * 32).astype(np.int64)
    yi = np.rint(y * 32).astype(np.int64)
    x0, y0 = xi >> 5, yi >> 5
    a, b = (xi & 31).astype(np.float64) / 32, (yi & 31).astype(np.float64) / 32
    # cv::initInterTab2D: the float products rounded to 15 bits (its +-1 correction when the four
    # do not sum to 2^15 is left out: at most 1/32768 of a level, never visible after the rounding).
    w00 = np.rint((1 - a) * (1 - b) * 32768).astype(np.int64)[..., None]
    w01 = np.rint(a * (1 - b) * 32768).astype(np.int64)[..., None]
    w10 = np.rint((1 - a) * b * 32768).astype(np.int64)[..., None]
    w11 = np.rint(a * b * 32768).astype(np.int64)[..., None]
    img = image.astype(np.int64)

    def px(yy, xx):
        if border == "replicate":
            return img[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
        inside = ((xx >= 0) & (xx < w) & (yy >= 0) & (yy < h))[..., None]
        return np.where(inside, img[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)], 0)

    total = px(y0, x0) * w00 + px(y0, x0 + 1) * w01 + px(y0 + 1, x0) * w10 + px(y0 + 1, x0 + 1) * w11
    return np.clip((total + (1 << 14)) >> 15, 0, 255).astype(np.uint8)


def to_tensor(pixels: np.ndarray, lo: float, hi: float) -> np.ndarray:
    return (pixels.astype(np.float32) * np.float32((hi - lo) / 255.0) + np.float32(lo))[None]


def detector_input(image: np.ndarray) -> tuple[np.ndarray, list[float]]:
    h, w = image.shape[:2]
    roi, pad = letterbox_roi(w, h)
    px = sample(image, roi_matrix(roi, 224, 224), 224, 224, "zero")
    return to_tensor(px, -1.0, 1.0), pad


def landmark_input(image: np.ndarray, roi: dict) -> np.ndarray:
    return to_tensor(sample(image, roi_matrix(roi, 256, 256), 256, 256, "replicate"), 0.0, 1.0)


def detect(image: np.ndarray, run_detector) -> tuple[dict | None, np.ndarray, list[float]]:
    """The first pose detection (normalized to the image) or None; also the detector's input."""
    x, pad = detector_input(image)
    regressors, scores = run_detector(x)
    dets = weighted_nms(decode(regressors, scores))
    if not dets:
        return None, x, pad
    return remove_letterbox(dets[0], pad), x, pad


def detection_roi(det: dict, width: int, height: int) -> dict:
    (x0, y0), (x1, y1) = det["keypoints"][0], det["keypoints"][1]
    return roi_from_points(x0, y0, x1, y1, width, height)


# ------------------------------------------------------------------ landmarks

def _sigmoid(v):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(v, np.float64)))


def refine_from_heatmap(xy: np.ndarray, heatmap: np.ndarray) -> np.ndarray:
    """RefineLandmarksFromHeatmapCalculator: xy [39,2] normalized to the crop, heatmap [64,64,39]
    logits (NHWC without the batch) -> refined xy."""
    cfg = PIPELINE["landmarks"]["refine_from_heatmap"]
    k, min_conf = cfg["kernel_size"], cfg["min_confidence_to_refine"]
    hm_h, hm_w, _ = heatmap.shape
    out = xy.copy()
    off = (k - 1) // 2
    for i in range(xy.shape[0]):
        col, row = int(xy[i, 0] * hm_w), int(xy[i, 1] * hm_h)  # truncation toward zero, as C++
        if col < 0 or col >= hm_w or row < 0 or row >= hm_h:
            continue
        r0, r1 = max(0, row - off), min(hm_h, row + off + 1)
        c0, c1 = max(0, col - off), min(hm_w, col + off + 1)
        conf = _sigmoid(heatmap[r0:r1, c0:c1, i])
        total = conf.sum()
        if conf.max() >= min_conf and total > 0:
            rows, cols = np.mgrid[r0:r1, c0:c1]
            out[i, 0] = (cols * conf).sum() / hm_w / total
            out[i, 1] = (rows * conf).sum() / hm_h / total
    return out


def project_landmarks(raw: np.ndarray, heatmap: np.ndarray, roi: dict, width: int, height: int) -> list[dict]:
    """The landmark model's raw outputs ([1,195], [1,64,64,39]) and its ROI (pixels) -> 39 landmarks
    normalized to the image (x, y, z as MediaPipe's NormalizedLandmark), with visibility and presence."""
    size = PIPELINE["landmarks"]["input"]["shape"][2]
    r = np.asarray(raw, np.float64).reshape(-1, 5)
    xy = r[:, :2] / size
    xy = refine_from_heatmap(xy, np.asarray(heatmap, np.float64).reshape(heatmap.shape[-3:]))
    c, s = math.cos(roi["rotation"]), math.sin(roi["rotation"])
    rw, rh = roi["width"] / width, roi["height"] / height
    out = []
    for i in range(r.shape[0]):
        dx, dy = xy[i, 0] - 0.5, xy[i, 1] - 0.5
        out.append({"x": (c * dx - s * dy) * rw + roi["x_center"] / width,
                    "y": (s * dx + c * dy) * rh + roi["y_center"] / height,
                    "z": r[i, 2] / size * rw,
                    "visibility": float(_sigmoid(r[i, 3])), "presence": float(_sigmoid(r[i, 4]))})
    return out


def run(image: np.ndarray, run_detector, run_landmark) -> dict:
    """MediaPipe Pose on one photo (static_image_mode): detector -> decode -> weighted NMS -> first
    detection -> rotated ROI -> 256x256 crop -> landmarks -> heatmap refinement -> projection.
    run_detector(x) -> (regressors, scores); run_landmark(x) -> (landmarks, presence, heatmap).
    Returns {"detection", "roi", "presence", "landmarks" (33, normalized) or None}."""
    h, w = image.shape[:2]
    det, _, _ = detect(image, run_detector)
    if det is None:
        return {"detection": None, "roi": None, "presence": None, "landmarks": None}
    roi = detection_roi(det, w, h)
    raw, presence, heatmap = run_landmark(landmark_input(image, roi))
    p = float(np.asarray(presence).reshape(-1)[0])
    lms = project_landmarks(raw, heatmap, roi, w, h)[:PIPELINE["landmarks"]["pose_landmarks"]]
    return {"detection": det, "roi": roi, "presence": p,
            "landmarks": lms if p > PIPELINE["landmarks"]["presence_threshold"] else None}
