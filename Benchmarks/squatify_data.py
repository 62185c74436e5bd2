#!/usr/bin/env python3
"""Converts the phone-video squat recordings of the Squatify repository into squat's keypoint format.

    Benchmarks/squatify_data.py --from CLONE --out DIR

CLONE is a clone (or a plain copy of data/training/labled_data/) of github jonasgwozdz/Squatify at
commit 8012d2e1ecfb37d13d6fba87f575710b4d0c991e. Each CSV is checked against its SHA-256 below before
it is read; a missing one is listed and skipped (five of the repository's 26 labelled CSVs are not
in the stored snapshot this list was made from: videos 01, 02, 10, 22, 26). The repository states no
licence, so the files are read for evaluation only: nothing of them is committed to proofkit.

The CSVs hold MediaPipe Pose landmarks (normalised x, y, z of the 33 landmarks, no visibility) of
phone videos, one row per frame ("Timestamp" = frame number), with the phase labelled by hand:
Pause, Descending, Ascending. Written, per video, `sqf_videoNN_squat.jsonl` in the shared data's
format (t = frame / 30 s, the recording's rate is not stored; the 8 squat joints, confidence 1.0, or
[0, 0, 0] where MediaPipe found nobody) and a MANIFEST.tsv with the true reps (Descending phases
followed by an Ascending one, Pauses between them ignored) and the camera view, estimated from the
shoulders: side when their horizontal distance is under 0.35 of the torso's height, else front when
the person's left shoulder is right of the right one in the image, back otherwise. The six files
already in ../shared/data/squat (videos 04, 11, 16, 20, 24, 27) come out byte-identical.
"""
import argparse
import csv
import hashlib
import json
import os
import statistics
import sys

COMMIT = "8012d2e1ecfb37d13d6fba87f575710b4d0c991e"
FOLDER = "data/training/labled_data"
SHA256 = {
    "video03": "ef26a88e98cfec1598ed44515b6b6246af0250d27c2a4aa4d7dc97de7c7e9015",
    "video04": "1f3ddc0c35d0f2ec65c95032e64bbe46aae523f6604c30754977f64d21203d15",
    "video06": "108d6236c0ab9f8af26c66eae47ace504d6a1a32cf3aa07cb2a9bd2f0fa4bd1b",
    "video07": "04ac83fa11ce7ddb246154dcd7b2610015f32ad2c04bafea615b47cd45e25f2a",
    "video08": "f104e059f981df1e028b802e5e752084121b3543c1903b99c70b2125effb34d8",
    "video09": "228f4c9a2d02f6d4b31d81ce868f76c1d678c0de7b50ffce5e33932aad5daeea",
    "video11": "361abfb9ba04a3ceaa70185cbecec762e347678e5bf19f50b6588de8ad444f3e",
    "video12": "75b29c170a379d2cf25fffcc075f038a6cd406535b292c7b6e6cc23fe5f15fd4",
    "video13": "4d5e4d5493409a66dfeb9f49e78bef686dddeb06db7d84f312cf805ebc649261",
    "video14": "9008a041f497f97cc3a271bcd47197186b3b06a98264e1105357cd5c4bf2e918",
    "video15": "37c7b822be3a95a8c5f79f368a6106c7853d9917654de1debfb7ee1398a27d6a",
    "video16": "e7f7c58341ab0e0c2e2d500296549e47410a38614a935b4caab4d3030dabc46e",
    "video17": "63075e1465aedc3329898907fdd0af2c37646ec8b181891a49810af643488582",
    "video18": "805595e58199594de6bffbab8c8da038580599f621ee72e87ba15307a92dfeaa",
    "video19": "3679d53ee6bdeb391010c12ac113a26c71726c980b80f23a46d362196baecd9f",
    "video20": "8bfe81960ad7de7b8f5772a0e1c22369e178d34ecee058872ab6dce11b672011",
    "video21": "64379a48b70beae49b60ad303e721ef3e9267955805040cc1907e564db54b9f2",
    "video23": "aafe386c5d309d9e6910abfecf7309dadcaa806f8266d26f38a4a5acb66d4b89",
    "video24": "10e7e595aed53b2440df22aefd4169fb82d428da06ac6e73a325b475b489c44f",
    "video25": "b31d4eda31472622532a8964d1f581bd159a780e3304f8542a08a96300eeef47",
    "video27": "d8b66bb4019028ed37647988471185bf3399044ff562d3398ff7cc6f2f135963",
}
JOINTS = {"left_hip": "Left hip", "right_hip": "Right hip", "left_knee": "Left knee", "right_knee": "Right knee",
          "left_ankle": "Left ankle", "right_ankle": "Right ankle", "left_shoulder": "Left shoulder",
          "right_shoulder": "Right shoulder"}
FPS = 30.0


def find(base, video):
    name = f"Tracking_{video}_labled.csv"
    for candidate in (os.path.join(base, FOLDER, name), os.path.join(base, name)):
        if os.path.isfile(candidate):
            return candidate
    return None


def true_reps(labels):
    phases = [label for i, label in enumerate(labels) if label != "Pause" and (i == 0 or labels[i - 1] != label)]
    phases = [p for i, p in enumerate(phases) if i == 0 or phases[i - 1] != p]
    return sum(1 for a, b in zip(phases, phases[1:]) if a == "Descending" and b == "Ascending")


def camera_view(rows):
    seen = [r for r in rows if r["Left shoulder_x"]]
    dx = statistics.median(float(r["Left shoulder_x"]) - float(r["Right shoulder_x"]) for r in seen)
    torso = statistics.median(float(r["Left hip_y"]) - float(r["Left shoulder_y"]) for r in seen)
    ratio = dx / torso
    return "side" if abs(ratio) < 0.35 else ("front" if ratio > 0 else "back")


def convert(path, out_path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    first = float(rows[0]["Timestamp"])
    with open(out_path + ".part", "w") as f:
        for row in rows:
            keypoints = {}
            for key, column in JOINTS.items():
                try:
                    keypoints[key] = [round(float(row[column + "_x"]), 5), round(float(row[column + "_y"]), 5), 1.0]
                except ValueError:
                    keypoints[key] = [0.0, 0.0, 0.0]
            t = round((float(row["Timestamp"]) - first) / FPS, 4)
            f.write(json.dumps({"t": t, "keypoints": keypoints}, separators=(",", ":")) + "\n")
    os.replace(out_path + ".part", out_path)
    return true_reps([r["Label"] for r in rows]), len(rows), camera_view(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--from", dest="source", required=True, help=f"a clone of Squatify at {COMMIT[:7]}")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    lines = ["file\tactivity\ttrue_reps\tfps\tframes\tcamera_view\tsource_repo\tsource_path\tlicense\tnotes"]
    for video, digest in SHA256.items():
        path = find(args.source, video)
        if path is None:
            print(f"squatify_data: {video}: not found under {args.source}, skipped", file=sys.stderr)
            continue
        with open(path, "rb") as f:
            actual = hashlib.sha256(f.read()).hexdigest()
        if actual != digest:
            raise SystemExit(f"squatify_data: {path}: sha256 {actual}, expected {digest}")
        name = f"sqf_{video}_squat.jsonl"
        reps, frames, view = convert(path, os.path.join(args.out, name))
        lines.append("\t".join([name, "squat", str(reps), str(FPS), str(frames), view, "jonasgwozdz/Squatify",
                                f"{FOLDER}/{os.path.basename(path)}", "none stated (no LICENSE file in repo)",
                                "MediaPipe Pose from a phone video; reps = annotated Descending->Ascending phases; "
                                "fps not recorded (30 assumed); no per-landmark confidence (1.0); "
                                "camera view estimated from the shoulders"]))
    with open(os.path.join(args.out, "MANIFEST.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"squatify_data: {len(lines) - 1} videos written to {args.out}")


if __name__ == "__main__":
    main()
