"""Writes Tests/TestSupport/Fixtures/video/walkers_mediapipe.jsonl: MediaPipe 0.10.21's own video
mode (`solutions.pose.Pose(static_image_mode=False, model_complexity=1)`, landmark smoothing on, as
its default) on every frame of walkers.mp4, read with OpenCV (mediapipe's own dependency), through
Benchmarks/python/pose_video_peer.py (the benchmark's MediaPipe side). One line per frame:
{"frame": N, "person": bool, "keypoints": {squat joint: [x, y, visibility]}}, x and y normalised
to the frame (6 decimals). MediaPipe's Python feeds its graph a clock of 1/30 s per frame whatever
the video's rate; the test gives proofkit's tracker the same clock.

Run with a Python that has mediapipe==0.10.21 (the pinned wheel in .deps/wheels, plus its
dependencies from PyPI):
    python Tests/Scripts/make_video_fixtures.py > Tests/TestSupport/Fixtures/video/walkers_mediapipe.jsonl
"""
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Benchmarks" / "python"))

from pose_video_peer import poses  # noqa: E402


def main() -> None:
    for index, _, keypoints in poses(str(ROOT / "Tests/TestSupport/Fixtures/video/walkers.mp4")):
        line = {"frame": index, "person": bool(keypoints), "keypoints": keypoints}
        sys.stdout.write(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
