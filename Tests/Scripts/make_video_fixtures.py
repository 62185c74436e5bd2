"""Writes Tests/TestSupport/Fixtures/video/walkers_mediapipe.jsonl: MediaPipe 0.10.21's own video
mode (`solutions.pose.Pose(static_image_mode=False, model_complexity=1)`, landmark smoothing on, as
its default) on every frame of walkers.mp4, read with OpenCV (mediapipe's own dependency). One line
per frame: {"frame": N, "person": bool, "keypoints": {squat joint: [x, y, visibility]}}, x and y
normalised to the frame (6 decimals). MediaPipe's Python feeds its graph a clock of 1/30 s per
frame whatever the video's rate; the test gives proofkit's tracker the same clock.

Run with a Python that has mediapipe==0.10.21 (the pinned wheel in .deps/wheels, plus its
dependencies from PyPI):
    python Tests/Scripts/make_video_fixtures.py > Tests/TestSupport/Fixtures/video/walkers_mediapipe.jsonl
"""
import json
import pathlib
import sys

import cv2
import mediapipe as mp

JOINTS = {"left_shoulder": 11, "right_shoulder": 12, "left_hip": 23, "right_hip": 24,
          "left_knee": 25, "right_knee": 26, "left_ankle": 27, "right_ankle": 28}


def main() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    capture = cv2.VideoCapture(str(root / "Tests/TestSupport/Fixtures/video/walkers.mp4"))
    pose = mp.solutions.pose.Pose(static_image_mode=False, model_complexity=1)
    index = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        result = pose.process(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        keypoints = {}
        if result.pose_landmarks:
            landmarks = result.pose_landmarks.landmark
            keypoints = {name: [round(landmarks[i].x, 6), round(landmarks[i].y, 6), round(landmarks[i].visibility, 4)]
                         for name, i in JOINTS.items()}
        line = {"frame": index, "person": bool(keypoints), "keypoints": keypoints}
        sys.stdout.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
        index += 1


if __name__ == "__main__":
    main()
