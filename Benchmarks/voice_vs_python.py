#!/usr/bin/env python3
"""`proofkit voice REC --json` against its Python peer (issue 38), side by side in one run.

    python3 Benchmarks/voice_vs_python.py [--rounds 5] [--binary .build/release/proofkit]
        [--before OLD/proofkit] [--clip REC ...] [--output FILE.md]

The peer is Benchmarks/python/voice_peer.py: ffmpeg decoding, Silero VAD on onnxruntime and
Whisper base by CTranslate2 int8 with 2 threads (faster-whisper's engine), on the same clips;
proofkit runs its default reading proof (Silero and the built-in Whisper, 2 threads). Every round
runs each program once per clip, the order rotating from round to round; figures are medians
(and ranges) over rounds of the per-round ratio proofkit / peer:
- time: wall time of the whole process (start-up, model loading, decoding, the gate and Whisper);
- memory: peak RSS of the process (wait4 ru_maxrss; the peer's ffmpeg child is not counted).
Targets: time <= 0.8x, memory <= 1.0x. With --before, an older build runs in the same rounds.
Clips (default): du'a recordings of ../shared/data/dua_audio of 22.8 s and 34.8 s (82hm, 206hm).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_PY = os.path.join(ROOT, ".deps", "venv", "bin", "python")
PEER = os.path.join(HERE, "python", "voice_peer.py")
DUA = os.path.join(ROOT, "..", "shared", "data", "dua_audio")


def measured(argv, env):
    """Runs argv; returns (wall s, CPU s, peak RSS MiB). Fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"voice_vs_python: {' '.join(argv)} failed: {err.strip()[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "proofkit"))
    ap.add_argument("--before", help="an older proofkit build measured in the same rounds")
    ap.add_argument("--clip", action="append", help="a recording (repeatable)")
    ap.add_argument("--model-dir", help="the peer's CTranslate2 model folder (see voice_peer.py)")
    ap.add_argument("--output")
    ap.add_argument("--json", action="store_true", help="print {markdown, ratios} as JSON instead")
    args = ap.parse_args()
    clips = args.clip or [os.path.join(DUA, "82hm.mp3"), os.path.join(DUA, "206hm.mp3")]
    clips = [c for c in clips if os.path.exists(c)]
    if not clips:
        sys.exit("voice_vs_python: no clips (../shared/data/dua_audio is missing)")
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1", OMP_NUM_THREADS="2")
    found = sorted(glob.glob(os.path.join(ROOT, ".deps", "onnxruntime", "libonnxruntime.so*")))
    if found:
        env.setdefault("PROOFKIT_ORT_LIBRARY", found[-1])
    env.setdefault("PROOFKIT_MODELS", os.path.join(ROOT, "Models", "generated"))
    peer_extra = ["--model-dir", args.model_dir] if args.model_dir else []
    programs = {"proofkit": lambda c: [args.binary, "voice", c, "--json"],
                "peer": lambda c: [VENV_PY, PEER, c] + peer_extra}
    if args.before:
        programs["proofkit before"] = lambda c: [args.before, "voice", c, "--json"]
    names = list(programs)
    for clip in clips:  # warm the page cache and the peer's model folder
        for name in names:
            measured(programs[name](clip), env)
    results = {(c, n): [] for c in clips for n in names}
    for r in range(args.rounds):
        for clip in clips:
            order = names[r % len(names):] + names[: r % len(names)]
            for name in order:
                results[(clip, name)].append(measured(programs[name](clip), env))
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr)
    rng = lambda xs: f"{statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})"
    lines = ["# `proofkit voice REC` against its Python peer (Silero on onnxruntime + faster-whisper int8)", "",
             f"{args.rounds} rounds, programs interleaved (order rotating); {os.cpu_count()} cores, load average "
             f"{'/'.join(f'{x:.1f}' for x in os.getloadavg())} at the end. Medians (ranges) over rounds.", "",
             "| clip | program | wall s | CPU s | peak RSS MiB | wall / peer | RSS / peer |",
             "|---|---|---:|---:|---:|---:|---:|"]
    ratios = {}
    for clip in clips:
        audio = subprocess.run(["soxi", "-D", clip], capture_output=True, text=True).stdout.strip()
        label = f"{os.path.basename(clip)} ({float(audio):.1f} s)" if audio else os.path.basename(clip)
        peer = results[(clip, "peer")]
        for name in names:
            runs = results[(clip, name)]
            wall = [x[0] for x in runs]
            time_ratios = [a[0] / b[0] for a, b in zip(runs, peer)]
            rss = [a[2] / b[2] for a, b in zip(runs, peer)]
            lines.append(f"| {label} | {name} | {rng(wall)} | {rng([x[1] for x in runs])} | "
                         f"{statistics.median([x[2] for x in runs]):.0f} | {rng(time_ratios)} | {rng(rss)} |")
            if name == "proofkit":
                ratios[label] = {"time": statistics.median(time_ratios),
                                 "time_range": [min(time_ratios), max(time_ratios)], "rss": statistics.median(rss)}
    report = "\n".join(lines)
    print(json.dumps({"markdown": report, "ratios": ratios}) if args.json else report)
    if args.output:
        with open(args.output, "w") as f:
            f.write(report + "\n")


if __name__ == "__main__":
    main()
