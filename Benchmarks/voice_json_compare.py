#!/usr/bin/env python3
"""`proofkit voice REC --json` of two builds over every recording of a folder: identical or not.

    python3 Benchmarks/voice_json_compare.py run --binary OLD/proofkit --output before.jsonl
        [--folder ../shared/data/dua_audio] [--args "--vad both"] [--jobs 1]
    python3 Benchmarks/voice_json_compare.py run --binary NEW/proofkit --output after.jsonl
    python3 Benchmarks/voice_json_compare.py compare before.jsonl after.jsonl

`run` writes one line per recording: the file, the exit code and the JSON object (the built-in
recogniser and Silero when installed, as `proofkit voice` chooses by default; ONNX Runtime from
.deps/onnxruntime and the models from Models/generated unless PROOFKIT_ORT_LIBRARY and
PROOFKIT_MODELS are set). `compare` reports every recording whose exit code or JSON differs,
field by field, leaving out `recognizer_seconds` (wall-clock time, different on every run), and
exits 1 when any differs. Issue 38: the verdicts and the JSON must stay identical.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOLATILE = {"recognizer_seconds"}


def environment():
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1")
    if "PROOFKIT_ORT_LIBRARY" not in env:
        found = sorted(glob.glob(os.path.join(ROOT, ".deps", "onnxruntime", "libonnxruntime.so*")))
        if found:
            env["PROOFKIT_ORT_LIBRARY"] = found[-1]
    env.setdefault("PROOFKIT_MODELS", os.path.join(ROOT, "Models", "generated"))
    return env


def run(args):
    recordings = sorted(
        p for p in glob.glob(os.path.join(args.folder, "*"))
        if os.path.splitext(p)[1].lower() in (".mp3", ".wav", ".flac", ".ogg", ".m4a"))
    if not recordings:
        sys.exit(f"voice_json_compare: no recordings in {args.folder}")
    env = environment()

    def one(path):
        proc = subprocess.run([args.binary, "voice", path, "--json"] + args.args.split(),
                              capture_output=True, text=True, env=env)
        try:
            result = json.loads(proc.stdout)
        except json.JSONDecodeError:
            result = None
        return {"file": os.path.basename(path), "exit": proc.returncode, "json": result,
                "stderr": proc.stderr.strip()}

    with open(args.output, "w") as out, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for i, row in enumerate(pool.map(one, recordings)):
            out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            out.flush()
            print(f"\r{i + 1}/{len(recordings)} {row['file']}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)


def load(path):
    with open(path) as f:
        return {row["file"]: row for row in map(json.loads, f)}


def compare(args):
    a, b = load(args.a), load(args.b)
    differences = 0
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print(f"{name}: only in {'A' if name in a else 'B'}")
            differences += 1
            continue
        ra, rb = a[name], b[name]
        fields = []
        if ra["exit"] != rb["exit"]:
            fields.append(f"exit {ra['exit']} -> {rb['exit']}")
        ja, jb = ra["json"] or {}, rb["json"] or {}
        for key in sorted(set(ja) | set(jb)):
            if key not in VOLATILE and ja.get(key) != jb.get(key):
                fields.append(f"{key}: {json.dumps(ja.get(key), ensure_ascii=False)[:120]} -> "
                              f"{json.dumps(jb.get(key), ensure_ascii=False)[:120]}")
        if fields:
            differences += 1
            print(f"{name}: " + "; ".join(fields))
    verdicts = lambda rows: sum(1 for r in rows.values() if (r["json"] or {}).get("verdict") == "accepted")
    print(f"{len(a)} recordings in A, {len(b)} in B; accepted {verdicts(a)} -> {verdicts(b)}; "
          f"{differences} differ (leaving out {', '.join(sorted(VOLATILE))})")
    sys.exit(1 if differences else 0)


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--binary", required=True)
    r.add_argument("--output", required=True)
    r.add_argument("--folder", default=os.path.join(ROOT, "..", "shared", "data", "dua_audio"))
    r.add_argument("--args", default="", help="more arguments for `proofkit voice`")
    r.add_argument("--jobs", type=int, default=1, help="recordings run at once (the output is the same)")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args()
    run(args) if args.command == "run" else compare(args)


if __name__ == "__main__":
    main()
