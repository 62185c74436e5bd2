#!/usr/bin/env python3
"""`proofkit pose VIDEO --json` against MediaPipe's Python in video mode, side by side in one run.

    python3 Benchmarks/pose_video_vs_mediapipe.py [--mediapipe-python /tmp/mpvenv/bin/python]
        [--rounds 3] [--loops 3] [--proofkit .build/release/proofkit] [--threads 1] [--json OUT]

The video: Tests/TestSupport/Fixtures/video/walkers.mp4 (640x480, real people walking, 10
frames/s), played --loops times in a row and re-encoded once (H.264) into a scratch file, so both
sides read the same file. Both sides do the same job per frame: decode (FFmpeg's libraries for
proofkit, OpenCV's FFmpeg for MediaPipe), RGB, the pose pipeline with tracking (the detector only
when the person is lost) and smoothing, one JSON line with the 8 squat joints, flushed.

MediaPipe: 0.10.21's `solutions.pose.Pose(static_image_mode=False, model_complexity=1)` (the
full landmark model, the one proofkit runs), by Benchmarks/python/pose_video_peer.py. It needs
numpy<2 and OpenCV, so it runs in a scratch venv of its own (as Models/study_pose_mediapipe.py):
    python3 -m venv /tmp/mpvenv && /tmp/mpvenv/bin/pip install .deps/wheels/mediapipe-0.10.21-*.whl

Measured, alternating proofkit and MediaPipe round by round (machine noise hits both alike):
  - frames per second from decode to pose: (frames - 1) / (time of the last line - time of the
    first), read from each process's stdout as it comes (model loading and the first frame left
    out, the same on both sides); time per frame is its inverse;
  - CPU per frame: the process's user + system time over its frames (MediaPipe may use more than
    one thread; proofkit's --threads is given to ONNX Runtime);
  - peak RSS of the whole process (wait4's ru_maxrss).
Targets (issue 36): at least 30 frames/s, and at most 1.0x MediaPipe's time per frame and peak
memory. Prints a markdown report (and JSON with --json). Exits 1 when a side is missing.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(ROOT, "Benchmarks", "python", "pose_video_peer.py")
VIDEO = os.path.join(ROOT, "Tests", "TestSupport", "Fixtures", "video", "walkers.mp4")


def run(argv: list[str], env: dict) -> dict:
    """Runs argv, timing each stdout line; returns frames, fps, CPU seconds, peak RSS, persons."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    stamps = []
    persons = 0
    for line in proc.stdout:
        stamps.append(time.perf_counter())
        if json.loads(line).get("keypoints"):
            persons += 1
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or len(stamps) < 2:
        raise SystemExit(f"{argv[0]} exited {code} after {len(stamps)} lines: {err[-500:]}")
    span = stamps[-1] - stamps[0]
    return {"frames": len(stamps), "fps": (len(stamps) - 1) / span, "ms_per_frame": 1000 * span / (len(stamps) - 1),
            "cpu_ms_per_frame": 1000 * (usage.ru_utime + usage.ru_stime) / len(stamps),
            "first_line_s": stamps[0] - start, "wall_s": wall, "peak_rss_mib": usage.ru_maxrss / 1024,
            "persons": persons}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proofkit", default=os.path.join(ROOT, ".build", "release", "proofkit"))
    ap.add_argument("--mediapipe-python", default="/tmp/mpvenv/bin/python")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--loops", type=int, default=3, help="times the 9 s clip is played in a row (default 3)")
    ap.add_argument("--threads", type=int, default=1, help="proofkit's ONNX Runtime threads (default 1)")
    ap.add_argument("--json", help="also write the figures as JSON here")
    a = ap.parse_args()
    missing = [p for p in (a.proofkit, a.mediapipe_python, VIDEO) if not os.path.exists(p)]
    if missing:
        print(f"pose_video_vs_mediapipe.py: missing {', '.join(missing)} (swift build -c release --product "
              "proofkit; a venv with mediapipe 0.10.21, see --help)", file=sys.stderr)
        return 1
    check = subprocess.run([a.mediapipe_python, "-c", "import mediapipe, cv2; print(mediapipe.__version__)"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        print(f"pose_video_vs_mediapipe.py: {a.mediapipe_python} has no mediapipe/cv2: {check.stderr[-300:]}",
              file=sys.stderr)
        return 1
    scratch = tempfile.mkdtemp(prefix="proofkit-pose-video-")
    atexit.register(shutil.rmtree, scratch, True)
    video = os.path.join(scratch, "walkers_loop.mp4")
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-stream_loop", str(a.loops - 1), "-i", VIDEO, "-c:v",
                    "libx264", "-preset", "medium", "-crf", "23", "-pix_fmt", "yuv420p", "-an", video], check=True)
    env = dict(os.environ)
    env["ORT_DISABLE_TELEMETRY"] = "1"
    env.setdefault("PROOFKIT_MODELS", os.path.join(ROOT, "Models", "generated"))
    pk_cmd = [a.proofkit, "pose", video, "--json", "--threads", str(a.threads)]
    mp_cmd = [a.mediapipe_python, PEER, video]
    rows = {"proofkit": [], "mediapipe": []}
    for _ in range(a.rounds):
        rows["proofkit"].append(run(pk_cmd, env))
        rows["mediapipe"].append(run(mp_cmd, env))

    def med(side, key):
        return statistics.median(r[key] for r in rows[side])

    ratio = {key: statistics.median(p[key] / m[key] for p, m in zip(rows["proofkit"], rows["mediapipe"]))
             for key in ("ms_per_frame", "cpu_ms_per_frame", "peak_rss_mib")}
    out = ["| side | frames | frames with a person | frames/s | ms per frame | CPU ms per frame | peak RSS MiB |",
           "|---|---|---|---|---|---|---|"]
    for side in ("proofkit", "mediapipe"):
        out.append(f"| {side} | {rows[side][0]['frames']} | {rows[side][0]['persons']} | {med(side, 'fps'):.1f} | "
                   f"{med(side, 'ms_per_frame'):.1f} | {med(side, 'cpu_ms_per_frame'):.1f} | "
                   f"{med(side, 'peak_rss_mib'):.0f} |")
    out.append(f"| proofkit / mediapipe | | | | {ratio['ms_per_frame']:.2f}x | {ratio['cpu_ms_per_frame']:.2f}x | "
               f"{ratio['peak_rss_mib']:.2f}x |")
    out.append("")
    out.append(f"{a.rounds} alternating rounds, medians; video 640x480, {rows['proofkit'][0]['frames']} frames; "
               f"proofkit --threads {a.threads}; MediaPipe {check.stdout.strip()}; {os.cpu_count()} CPUs.")
    print("\n".join(out))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "ratio": ratio}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
