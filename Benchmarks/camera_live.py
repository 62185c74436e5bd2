#!/usr/bin/env python3
"""The live proofs by camera: frames per second and CPU, over the fake UVC webcam.

Runs the built proofkit (release by default) under Tests/TestSupport/FakeCamera/fakecam.c
(built here with cc into a temporary folder), with real photos as the camera's frames:

  squat.live   `squat --camera` (YUYV; squat.live.mjpeg: a camera offering MJPEG only): a person in view (the pose check photo grace_hopper.jpg from
               the pinned matplotlib wheel), every frame's pose estimated and counted, for
               --seconds; fps from the command's JSON result, CPU = (user + sys) / wall.
  squat.photo  the peer, side by side: `pose` on the same frame as a photo file, N copies in
               one process (the photo path: decode, detector on every photo, landmarks).
  mat.live     `mat --camera` (YUYV; mat.live.mjpeg: MJPEG) with a room in view (demo_coffee.jpg: never passes, so it judges
               for the whole --seconds): CPU = (user + sys) / wall.
  mat.photo    the peer: `mat` on the same photo, N copies in one process.

CPU includes loading the models (about half a second) and the fake camera's own work, so the
live figures are upper bounds. Targets (issue 37): squat.live >= 15 fps with CPU <= 1 core;
mat.live CPU < 0.5 core. Prints one JSON line per measurement.

Usage: python3 Benchmarks/camera_live.py [--binary .build/release/proofkit] [--seconds 20]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_fake(folder):
    library = os.path.join(folder, "fakecam.so")
    source = os.path.join(ROOT, "Tests/TestSupport/FakeCamera/fakecam.c")
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", source, "-o", library, "-lturbojpeg", "-ldl", "-lpthread"],
                   check=True)
    return library


def person_photo(folder):
    wheels = os.path.join(ROOT, ".deps/wheels")
    wheel = next(name for name in sorted(os.listdir(wheels)) if name.startswith("matplotlib-"))
    path = os.path.join(folder, "grace_hopper.jpg")
    with zipfile.ZipFile(os.path.join(wheels, wheel)) as archive:
        with open(path, "wb") as out:
            out.write(archive.read("matplotlib/mpl-data/sample_data/grace_hopper.jpg"))
    return path


def measured(arguments, environment):
    """Runs a command; gives its stdout, wall seconds and CPU seconds (user + sys)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(arguments, env={**os.environ, **environment}, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode not in (0, 2):
        sys.exit(f"{' '.join(arguments)}: exit {result.returncode}: {result.stderr}")
    return result.stdout, wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build/release/proofkit"))
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--copies", type=int, default=30)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        fake = build_fake(folder)
        person = person_photo(folder)
        room = os.path.join(ROOT, "Tests/TestSupport/Fixtures/images/demo_coffee.jpg")
        seconds = str(options.seconds)
        squat = ["squat", "--camera", "--json", "--max-seconds", seconds, "--reps", "1000"]
        mat = ["mat", "--camera", "--json", "--max-seconds", seconds]
        for name, photo, command, formats in [
            ("squat.live", person, squat, "MJPG,YUYV"),
            ("squat.live.mjpeg", person, squat, "MJPG"),
            ("mat.live", room, mat, "MJPG,YUYV"),
            ("mat.live.mjpeg", room, mat, "MJPG"),
        ]:
            environment = {"LD_PRELOAD": fake, "FAKECAM_FRAMES": photo, "FAKECAM_FORMATS": formats,
                           "ORT_DISABLE_TELEMETRY": "1"}
            out, wall, cpu = measured([options.binary] + command, environment)
            last = json.loads(out.strip().splitlines()[-1])
            row = {"name": name, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "cores": round(cpu / wall, 3)}
            if name.startswith("squat"):
                row["fps"] = last["fps"]
                row["camera_frames"] = last["camera_frames"]
                row["mode"] = last["mode"]
            else:
                row["judged"] = last["judged"]
                row["frames"] = last["frames"]
                row["mode"] = last["mode"]
            print(json.dumps(row))
        for name, photo, command in [("squat.photo", person, ["pose", "--json"]), ("mat.photo", room, ["mat", "--json"])]:
            out, wall, cpu = measured([options.binary] + command + [photo] * options.copies, {})
            print(json.dumps({"name": name, "photos": options.copies, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                              "photos_per_s": round(options.copies / wall, 2)}))


if __name__ == "__main__":
    main()
