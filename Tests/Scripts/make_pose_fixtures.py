"""The Python reference's numbers for proofkit's pose tests (Tests/TestSupport/Fixtures/pose/).

Runs Models/proofkit_models/blazepose_pipeline.py (MediaPipe Pose's single-image pipeline in numpy,
the reference for the Swift engine PoseEstimation) on the per-photo reference tensors that
Models/build.sh writes (Models/generated/pose_ref_<photo>_<tensor>.f32, TFLite's outputs) and, with
ONNX Runtime running the same ONNX graphs proofkit runs, end to end on the six check photos (read
from the pinned wheels in .deps/wheels, as the build reads them). Writes one JSON file:

- "anchors": count, FNV-1a 64 of the anchors' little-endian float32 bytes (x, y, w, h per anchor,
  w = h = 1) and a few of them, so the Swift test checks all 2254 without a 36 KB table;
- per photo, from the reference tensors: the decoded candidates (anchor and score), the weighted
  NMS result, the first detection without the letterbox, its region (pixels), the 39 projected
  landmarks (normalised to the photo, after the heatmap refinement), and the tracking region from
  landmarks 33 and 34;
- per photo, end to end with ONNX Runtime (pipeline.run): the presence and the 33 landmarks, or none;
- for astronaut only, the inputs an always-run engine test needs without the models: the rows of the
  candidates (regressors and score logits), the raw landmarks and the 7x7 heatmap window of each
  landmark (base64 float32: the refinement reads nothing else), ~14 KB in all.

Usage: python Tests/Scripts/make_pose_fixtures.py MODELS_DIR WHEELS_DIR OUT.json
(MODELS_DIR = Models/generated, WHEELS_DIR = .deps/wheels; the venv of .ci/setup has numpy,
onnxruntime and Pillow.)
"""
from __future__ import annotations

import base64
import io
import json
import os
import sys
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "Models"))
from proofkit_models import blazepose as bp  # noqa: E402
from proofkit_models import blazepose_pipeline as pp  # noqa: E402

WHEELS = {"skimage": "scikit_image-", "matplotlib": "matplotlib-"}
ALWAYS_RUN_PHOTO = "astronaut"


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for byte in data:
        h ^= byte
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def g(x: float) -> float:
    return float(f"{x:.12g}")


def b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()


def photo(wheels: str, role: str, member: str) -> np.ndarray:
    from PIL import Image
    name = next(f for f in sorted(os.listdir(wheels)) if f.startswith(WHEELS[role]) and f.endswith(".whl"))
    with zipfile.ZipFile(os.path.join(wheels, name)) as z:
        return np.asarray(Image.open(io.BytesIO(z.read(member))).convert("RGB"))


def det_json(d: dict) -> dict:
    return {"score": g(d["score"]), "anchor": d["anchor"], "box": [g(v) for v in d["box"]],
            "keypoints": [[g(x), g(y)] for x, y in d["keypoints"]], "merged": d.get("merged", 1)}


def main() -> None:
    models, wheels, out = sys.argv[1:4]
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    det_sess = ort.InferenceSession(os.path.join(models, "pose_detection.onnx"), opts,
                                    providers=["CPUExecutionProvider"])
    lm_sess = ort.InferenceSession(os.path.join(models, "pose_landmark_full.onnx"), opts,
                                   providers=["CPUExecutionProvider"])

    def run_detector(x):
        r, s = det_sess.run(["regressors", "scores"], {"image": x})
        return r, s

    def run_landmark(x):
        lm, pr, hm = lm_sess.run(["landmarks", "presence", "heatmap"], {"image": x})
        return lm, pr, hm

    anchors = pp.anchors()
    full = np.concatenate([anchors, np.ones_like(anchors)], axis=1).astype("<f4")
    result = {
        "source": "Tests/Scripts/make_pose_fixtures.py: Models/proofkit_models/blazepose_pipeline.py on "
                  "Models/generated/pose_ref_*.f32 (TFLite's outputs) and, end to end, with ONNX Runtime "
                  + ort.__version__ + " on the same ONNX graphs",
        "anchors": {"count": len(anchors), "fnv1a64_float32_xywh": fnv1a64(full.tobytes()),
                    "samples": {str(i): [float(v) for v in full[i]] for i in (0, 1, 57, 1567, 1568, 1959, 1960, 2253)}},
        "photos": {},
    }
    for role, member, short, _licence, person in bp.PHOTOS:
        def tensor(k: str) -> np.ndarray:
            return np.fromfile(os.path.join(models, f"pose_ref_{short}_{k}.f32"), dtype="<f4")
        img = photo(wheels, role, member)
        h, w = img.shape[:2]
        entry: dict = {"member": member, "wheel": role, "size": [w, h], "shows_person": person}
        regressors, scores = tensor("regressors").reshape(-1, 12), tensor("scores")
        candidates = pp.decode(regressors, scores)
        entry["candidates"] = [{"anchor": d["anchor"], "score": g(d["score"])} for d in candidates]
        nms = pp.weighted_nms(candidates)
        entry["suppressed"] = [det_json(d) for d in nms]
        if nms:
            _, pad = pp.letterbox_roi(w, h)
            det = pp.remove_letterbox(nms[0], pad)
            roi = pp.detection_roi(det, w, h)
            raw, heatmap = tensor("landmarks").reshape(1, 195), tensor("heatmap").reshape(1, 64, 64, 39)
            lms = pp.project_landmarks(raw, heatmap, roi, w, h)
            (x0, y0), (x1, y1) = (lms[33]["x"], lms[33]["y"]), (lms[34]["x"], lms[34]["y"])
            entry["detection"] = det_json(det)
            entry["region"] = {k: g(v) for k, v in roi.items()}
            entry["landmarks"] = [[g(p["x"]), g(p["y"]), g(p["z"]), g(p["visibility"]), g(p["presence"])] for p in lms]
            entry["tracking_region"] = {k: g(v) for k, v in pp.roi_from_points(x0, y0, x1, y1, w, h).items()}
            if short == ALWAYS_RUN_PHOTO:
                rows = [d["anchor"] for d in candidates]
                xy = raw.reshape(39, 5)[:, :2] / 256.0
                windows = []
                for i in range(39):
                    col, row = int(xy[i, 0] * 64), int(xy[i, 1] * 64)
                    if 0 <= col < 64 and 0 <= row < 64:
                        r0, r1, c0, c1 = max(0, row - 3), min(64, row + 4), max(0, col - 3), min(64, col + 4)
                        windows.append({"landmark": i, "rows": [r0, r1], "columns": [c0, c1],
                                        "logits": b64(heatmap[0, r0:r1, c0:c1, i])})
                entry["inputs"] = {"anchors": rows, "regressors": b64(regressors[rows]), "scores": b64(scores[rows]),
                                   "landmarks": b64(raw), "heatmap_windows": windows}
        run = pp.run(img, run_detector, run_landmark)
        entry["end_to_end"] = {
            "person": run["landmarks"] is not None,
            "presence": None if run["presence"] is None else g(run["presence"]),
            "landmarks": None if run["landmarks"] is None else [
                [g(p["x"]), g(p["y"]), g(p["z"]), g(p["visibility"]), g(p["presence"])] for p in run["landmarks"]],
        }
        result["photos"][short] = entry
    with open(out, "w") as f:
        json.dump(result, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
