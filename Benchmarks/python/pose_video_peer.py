#!/usr/bin/env python3
"""The MediaPipe side of Benchmarks/pose_video_vs_mediapipe.py: MediaPipe 0.10.21's Python
solution in video mode on every frame of a video, decoded by OpenCV (mediapipe's own dependency).

    python Benchmarks/python/pose_video_peer.py VIDEO

`solutions.pose.Pose(static_image_mode=False, model_complexity=1)` (the full landmark model, the
one proofkit runs; landmark smoothing on, its default). For each frame: decode, BGR to RGB, pose,
and one JSON line with the 8 squat joints (flushed at once, as proofkit writes its lines), the
same work as `proofkit pose VIDEO --json`. Tests/Scripts/make_video_fixtures.py uses `poses`.
"""
import json
import sys

import cv2
import mediapipe as mp

JOINTS = {"left_shoulder": 11, "right_shoulder": 12, "left_hip": 23, "right_hip": 24,
          "left_knee": 25, "right_knee": 26, "left_ankle": 27, "right_ankle": 28}


def poses(path: str):
    """Yields (frame number, its time in seconds, {joint: [x, y, visibility]} or {} for nobody)."""
    capture = cv2.VideoCapture(path)
    pose = mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1)
    index = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        seconds = capture.get(cv2.CAP_PROP_POS_MSEC) / 1000
        result = pose.process(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        keypoints = {}
        if result.pose_landmarks:
            landmarks = result.pose_landmarks.landmark
            keypoints = {name: [round(landmarks[i].x, 6), round(landmarks[i].y, 6), round(landmarks[i].visibility, 4)]
                         for name, i in JOINTS.items()}
        yield index, seconds, keypoints
        index += 1


def main() -> None:
    for index, seconds, keypoints in poses(sys.argv[1]):
        sys.stdout.write(json.dumps({"t": round(seconds, 6), "frame": index, "keypoints": keypoints}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
