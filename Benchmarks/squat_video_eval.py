#!/usr/bin/env python3
"""`proofkit squat --video` on real squat videos it was never tuned on: body pose and counting together.

    Benchmarks/squat_video_eval.py --videos DIR [--bin .build/release/proofkit]
                                   [--labels Benchmarks/squat_video_labels.tsv] [--json out.json]

DIR holds the videos that `squat_video_labels.tsv` names (from the public repositories and commits
it gives; nothing of them is committed here, see SQUAT_VIDEOS.md). Each file is checked against its
sha256, then counted by the real command, `proofkit squat --video FILE --json --target 1`, with the
shipped defaults: pose (MediaPipe's pipeline on ONNX Runtime) and the counter, end to end.

Figures: clips counted exactly (of the scored ones: a label of "-" is not scored), the mean absolute
error, and each miss with the counter's own reasons (rejected reps).
"""
import argparse
import csv
import json
import os
import subprocess
import sys

from pose_vs_mediapipe import sha256

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def count(binary, path):
    proc = subprocess.run([binary, "squat", "--video", path, "--json", "--target", "1"],
                          capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if not lines:
        raise SystemExit(f"squat_video_eval: {path}: no result (exit {proc.returncode}): {proc.stderr.strip()}")
    return json.loads(lines[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--videos", required=True, help="the folder holding the labelled videos")
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "proofkit"))
    parser.add_argument("--labels", default=os.path.join(ROOT, "Benchmarks", "squat_video_labels.tsv"))
    parser.add_argument("--json", help="also write every clip's result here")
    args = parser.parse_args()

    with open(args.labels) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    results = []
    for index, row in enumerate(rows, 1):
        path = os.path.join(args.videos, row["file"])
        if not os.path.isfile(path):
            raise SystemExit(f"squat_video_eval: {path} is missing (fetch it from {row['source']})")
        if sha256(path) != row["sha256"]:
            raise SystemExit(f"squat_video_eval: {path} is not the labelled file (sha256 differs)")
        print(f"\r[{index}/{len(rows)}] {row['file']}", end="", file=sys.stderr, flush=True)
        result = count(args.bin, path)
        reasons = [reject.get("reason") for reject in result.get("rejected", [])]
        results.append({"file": row["file"], "truth": row["true_reps"], "counted": result["reps"],
                        "frames": result["frames"], "rejected": reasons, "seen": row[list(row)[-1]]})
    print(file=sys.stderr)

    scored = [r for r in results if r["truth"] != "-"]
    exact = [r for r in scored if int(r["truth"]) == r["counted"]]
    error = sum(abs(int(r["truth"]) - r["counted"]) for r in scored)
    print("| clip | frames | true | counted | rejected | what is seen |")
    print("|---|---:|---:|---:|---|---|")
    for r in results:
        mark = "" if r["truth"] == "-" or int(r["truth"]) == r["counted"] else " **miss**"
        print(f"| {r['file']} | {r['frames']} | {r['truth']} | {r['counted']}{mark} | "
              f"{', '.join(r['rejected']) or '-'} | {r['seen']} |")
    print(f"\nexact: {len(exact)}/{len(scored)} scored clips ({len(results) - len(scored)} not scored); "
          f"MAE {error / max(1, len(scored)):.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"clips": results, "exact": len(exact), "scored": len(scored)}, f, indent=1)


if __name__ == "__main__":
    main()
