#!/usr/bin/env python3
"""CPU use and decision latency of `proofkit voice --live` on a real-time virtual microphone.

A FIFO is the `infile` of an ALSA `file` PCM (over a `null` slave), given to proofkit through
PROOFKIT_ALSA_CONFIG, so the real libasound capture path runs without hardware. This script
writes audio into the FIFO at real time, 40 ms at a time, and:

- CPU: reads the child's user+system time (wait4 rusage; /proc/<pid>/stat utime+stime while it
  runs) over the listening time -> percent of one core. Targets: < 3 % for the energy gate, < 5 %
  for the default gate (Silero when installed, issue 14).
- Latency: for each `level` event (one per 100 ms of audio, emitted as the decision for that
  audio is made), the wall time between writing the last sample it covers into the FIFO and
  reading the event on proofkit's stdout. Target: <= 100 ms.

Usage: Benchmarks/voice_live_bench.py [--binary .build/release/proofkit] [--seconds 20]
       [--audio FILE.raw (16 kHz mono S16_LE; default: a generated tone burst pattern)]
       [--vad default|energy|silero|both (default energy; 'default' passes no --vad: the gate
        proofkit picks, reported as "vad_used")] [--no-veto (the energy gate without its veto)]

The listening runs the whole reading proof (voice gate, du'a matcher, JSON level and progress
events), so the figures include everything `proofkit voice --live --json` does.

With --dua ID (a recording of ../shared/data/dua_audio, evaluation only: decoded to 16 kHz by
ffmpeg, 1 s of silence before it and 6 s after), the text is the recording's own and Whisper
listens too; the line also gives when the "accepted" event came and how long after it the "end"
event did (`end_after_accepted_s`: what a caller waits for once the reading has passed).
Prints one JSON line. Stdlib only.
"""
import argparse
import csv
import json
import math
import os
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

RATE = 16000
CHUNK_FRAMES = 640  # 40 ms


def generated_audio(seconds):
    """0.5 s tone bursts at -20 dBFS every second over -50 dBFS hiss (deterministic)."""
    out = bytearray()
    seed = 12345
    for n in range(int(seconds * RATE)):
        seed = (1103515245 * seed + 12345) & 0x7FFFFFFF
        noise = ((seed / 0x7FFFFFFF) - 0.5) * 2 * 0.0055
        tone = 0.14 * math.sin(2 * math.pi * 220 * n / RATE) if (n % RATE) < RATE // 2 else 0.0
        out += struct.pack("<h", int(max(-1, min(1, tone + noise)) * 32767))
    return bytes(out)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    parser = argparse.ArgumentParser()
    default_binary = os.path.join(root, ".build/release/proofkit")
    if not os.path.exists(default_binary):
        default_binary = os.path.join(root, ".build/debug/proofkit")
    parser.add_argument("--binary", default=default_binary)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--audio")
    parser.add_argument("--vad", default="energy", choices=["default", "energy", "silero", "both"])
    parser.add_argument("--no-veto", action="store_true", help="pass --no-veto (the energy gate without its speech-likeness veto)")
    parser.add_argument("--dua", help="a dua_audio recording's id: its audio, and its text to read")
    args = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="proofkit-bench-")
    args.extra = []
    if args.dua:
        audio = dua_audio(args, root, folder)
    else:
        audio = open(args.audio, "rb").read() if args.audio else generated_audio(args.seconds)
        audio = audio[: int(args.seconds * RATE) * 2]
    try:
        measure(args, audio, folder, root)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the FIFO and the ALSA configuration


def dua_audio(args, root, folder):
    """The dua_audio recording `args.dua` at 16 kHz with 1 s of silence before and 6 s after; its
    text in a texts file in `folder`, passed with --text/--texts through `args.extra`."""
    data = os.path.join(os.path.dirname(root), "shared", "data", "dua_audio")
    with open(os.path.join(data, "MANIFEST.tsv"), encoding="utf-8") as f:
        rows = {r["id"]: r for r in csv.DictReader(f, delimiter="\t")}
    row = rows[args.dua]
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", os.path.join(data, row["file"]), "-f", "s16le", "-ac", "1", "-ar",
         str(RATE), "-"], check=True, capture_output=True).stdout
    name = "hm" + args.dua
    texts = os.path.join(folder, "texts.json")
    with open(texts, "w", encoding="utf-8") as f:
        json.dump({"texts": [{"name": name, "title": row.get("title", ""), "text": row["text"],
                              "reading_seconds": max(0.5, float(row["duration_s"]))}]}, f, ensure_ascii=False)
    args.extra = ["--text", name, "--texts", texts]
    audio = bytes(2 * RATE) + raw + bytes(2 * RATE * 6)
    args.seconds = len(audio) / (2 * RATE)
    return audio


def measure(args, audio, folder, root):
    """Runs `proofkit voice --live` on the audio through a FIFO-fed ALSA file PCM in `folder`."""
    fifo = os.path.join(folder, "mic.fifo")
    os.mkfifo(fifo)
    config = os.path.join(folder, "asound.conf")
    with open(config, "w") as f:
        f.write('pcm.vmic { type file slave.pcm { type null } file "/dev/null" '
                f'infile "{fifo}" format "raw" }}\n')

    env = dict(os.environ, PROOFKIT_ALSA_CONFIG=config)
    child = subprocess.Popen(
        [args.binary, "voice", "--live", "--device", "vmic", "--json",
         "--max-seconds", str(args.seconds)] + ([] if args.vad == "default" else ["--vad", args.vad])
        + (["--no-veto"] if args.no_veto else []) + args.extra,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)

    written_at = {}  # frame index after a write -> monotonic time of the write

    def writer():
        try:
            feed()
        except BrokenPipeError:
            pass  # proofkit ended first (the reading passed): nothing more to hear

    def feed():
        with open(fifo, "wb", buffering=0) as out:
            start = time.monotonic()
            frames = 0
            for offset in range(0, len(audio), CHUNK_FRAMES * 2):
                due = start + frames / RATE
                delay = due - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                piece = audio[offset: offset + CHUNK_FRAMES * 2]
                out.write(piece)
                frames += len(piece) // 2
                written_at[frames] = time.monotonic()
            # Keep the FIFO open a little so the last reads complete, then EOF (silence).
            time.sleep(0.5)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()

    latencies = []
    cpu_samples = []
    vad_used = None
    stat_path = f"/proc/{child.pid}/stat"
    seen = {}  # event name -> monotonic time it was first read
    for line in child.stdout:
        received = time.monotonic()
        event = json.loads(line)
        seen.setdefault(event.get("event"), received)
        if event.get("event") == "start":
            vad_used = event.get("vad")
        if event.get("event") == "level":
            end_frame = round(event["t"] * RATE)
            # The write that delivered the event's last sample.
            covering = [f for f in written_at if f >= end_frame]
            if covering:
                latencies.append((received - written_at[min(covering)]) * 1000)
        try:
            fields = open(stat_path).read().rsplit(")", 1)[1].split()
            cpu_samples.append((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
        except OSError:
            pass
    _, status, usage = os.wait4(child.pid, 0)
    stderr = child.stderr.read().decode()
    thread.join(timeout=2)
    cpu = usage.ru_utime + usage.ru_stime
    latencies.sort()

    def pct(p):
        return round(latencies[min(len(latencies) - 1, int(p / 100 * len(latencies)))], 1) if latencies else None

    print(json.dumps({
        "benchmark": "voice-live-" + args.vad + ("-no-veto" if args.no_veto else ""),
        "binary": os.path.relpath(args.binary, root),
        "audio_seconds": args.seconds,
        "exit_status": os.waitstatus_to_exitcode(status),
        "cpu_seconds": round(cpu, 3),
        "cpu_percent_of_one_core": round(100 * cpu / args.seconds, 2),
        "cpu_percent_proc_stat": round(100 * cpu_samples[-1] / args.seconds, 2) if cpu_samples else None,
        "latency_ms": {"count": len(latencies), "p50": pct(50), "p90": pct(90), "p99": pct(99),
                       "max": round(latencies[-1], 1) if latencies else None},
        "vad_used": vad_used,
        "accepted_after_start_s": None if "accepted" not in seen else round(seen["accepted"] - seen["start"], 2),
        "end_after_accepted_s": None if "accepted" not in seen or "end" not in seen
        else round(seen["end"] - seen["accepted"], 2),
        "targets": {"cpu_percent": 3 if args.vad == "energy" else 5, "latency_ms": 100},
        "stderr": stderr.strip()[:200],
    }, sort_keys=True))


if __name__ == "__main__":
    main()
