#!/usr/bin/env python3
"""Before/after: two builds of proofkit on the same commands, side by side in one run.

    python3 Benchmarks/ab_compare.py --a OLD/proofkit --b NEW/proofkit [--rounds 21] [--callgrind]
        [--case NAME=ARGS ...] [--env NAME=VALUE ...] [--output FILE.md]

For changes that must not slow a command by more than a few per cent (issue 15: "nothing here may
slow trim or mat by more than 2 %"), wall times on a shared 2-core machine are too noisy alone
(run-to-run spread ~5-10 %). This script reports three figures for each case:

- wall and CPU time (user + system, from wait4) of the whole process, A and B alternating within
  every round (the order flips each round), as the median over rounds of the per-round ratio B/A;
- peak RSS (wait4 ru_maxrss), median ratio;
- with --callgrind: the instructions executed by the whole process (valgrind --tool=callgrind,
  "Collected" Ir), once per binary. This count does not depend on the machine's load, so a 2 %
  bound can be checked on a busy machine. Multi-threaded work (ONNX Runtime's pool) is counted
  across threads; run such cases with one thread.

Each case is a name and the command's arguments after the binary, with {out} replaced by a fresh
output path in a scratch folder (removed at the end). Default cases: trim of a 3-minute MP3 and a
5-minute WAV made with sox from ../shared/data/audio (or the test fixture), and `mat` on two
shared photos (one mat, one not), one thread. --house adds the rest of the house's hot paths
(issue 19): `squat` of the longest shared pose file, `dua check` of a transcript, `times` for a
year and `plan` for 60 days (embedded method defaults, fixed --now), and `voice` of a shared
du'a recording with the energy gate and a transcript file (so that no recogniser runs: the
command line is the same for a build without one).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_once(argv, env):
    """Runs argv; returns (wall s, cpu s, peak RSS KiB). Fails loudly on a non-zero exit."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"ab_compare: {' '.join(argv)} exited {code}: {err.strip()[:300]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def instructions(argv, env):
    """Instructions executed by the whole process under callgrind (all threads)."""
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not found:
        sys.exit(f"ab_compare: callgrind failed on {' '.join(argv)}: {proc.stderr.strip()[-300:]}")
    return int(found.group(1))


def default_cases(work):
    sources = []
    shared = os.path.join(ROOT, "..", "shared", "data", "audio", "recitation")
    for name in ("rec_002.mp3", "rec_006.mp3", "rec_005.mp3"):
        if os.path.isfile(os.path.join(shared, name)):
            sources.append(os.path.join(shared, name))
    if not sources:
        sources = [os.path.join(ROOT, "Tests", "TestSupport", "Fixtures", "rec_001.mp3")]
    parts = []
    for index, source in enumerate(sources):  # sox joins only files of one rate and layout
        parts.append(os.path.join(work, f"part{index}.wav"))
        subprocess.run(["sox", source, "-r", "44100", "-c", "2", "-b", "16", parts[-1]], check=True,
                       stderr=subprocess.DEVNULL)
    joined = os.path.join(work, "joined.wav")
    subprocess.run(["sox"] + parts * 4 + [joined], check=True, stderr=subprocess.DEVNULL)
    mp3 = os.path.join(work, "in3min.mp3")
    wav = os.path.join(work, "in5min.wav")
    subprocess.run(["sox", joined, "-C", "128", mp3, "trim", "0", "180"], check=True,
                   stderr=subprocess.DEVNULL)
    subprocess.run(["sox", joined, wav, "trim", "0", "300"], check=True, stderr=subprocess.DEVNULL)
    cases = [("trim in3min.mp3", ["trim", mp3, "-o", "{out}.caf"]),
             ("trim in5min.wav", ["trim", wav, "-o", "{out}.caf"])]
    images = os.path.join(ROOT, "..", "shared", "data", "images")
    for rel in ("mat/mat_037.jpg", "other/other_bathroom_010.jpg"):
        path = os.path.join(images, rel)
        if os.path.isfile(path):
            cases.append((f"mat {os.path.basename(path)}", ["mat", path, "--threads", "1"]))
    return cases


def house_cases(work):
    """squat, dua check, times, plan and voice, on shared data where it is needed."""
    shared = os.path.join(ROOT, "..", "shared", "data")
    # The waking du'a as a recogniser would write it (without harakat).
    transcript = "الحمد لله الذي احيانا بعد ما اماتنا واليه النشور"
    transcript_file = os.path.join(work, "transcript.txt")
    with open(transcript_file, "w", encoding="utf-8") as handle:
        handle.write(transcript + "\n")
    place = ["--lat", "51.5072", "--lon", "-0.1276", "--tz", "Europe/London"]
    cases = [("dua check", ["dua", "check", transcript]),
             ("times 366 days", ["times"] + place + ["--date", "2026-01-01", "--days", "366"]),
             ("plan 60 days", ["plan"] + place + ["--days", "60", "--now", "2026-12-01T03:00:00Z"])]
    squat = os.path.join(shared, "squat", "sqf_video24_squat.jsonl")
    if os.path.isfile(squat):
        cases.insert(0, (f"squat {os.path.basename(squat)}", ["squat", squat]))
    recording = os.path.join(shared, "dua_audio", "54hm.mp3")
    if os.path.isfile(recording):
        cases.append((f"voice {os.path.basename(recording)} --vad energy",
                      ["voice", recording, "--vad", "energy", "--transcript-file", transcript_file]))
    return cases


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--a", required=True, help="the old proofkit binary")
    parser.add_argument("--b", required=True, help="the new proofkit binary")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    parser.add_argument("--case", action="append", default=[], help="NAME=ARGS (split on spaces)")
    parser.add_argument("--house", action="store_true",
                        help="add squat, dua check, times, plan and voice to the cases")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for both runs")
    parser.add_argument("--output", help="write the markdown here too")
    args = parser.parse_args()

    env = dict(os.environ)
    for item in args.env:
        name, _, value = item.partition("=")
        env[name] = value
    work = tempfile.mkdtemp(prefix="proofkit-ab.")
    try:
        cases = [(c.partition("=")[0], c.partition("=")[2].split()) for c in args.case] \
            or default_cases(work)
        if args.house:
            cases += house_cases(work)
        load_before = os.getloadavg()
        lines = ["| case | A wall ms | B wall ms | B/A wall | B/A CPU | B/A peak RSS | B/A instructions |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        counter = 0
        for name, template in cases:
            def argv(binary):
                nonlocal counter
                counter += 1
                out = os.path.join(work, f"out{counter}")
                return [binary] + [t.replace("{out}", out) for t in template]
            walls = {"a": [], "b": []}
            wall_ratio, cpu_ratio, rss_ratio = [], [], []
            run_once(argv(args.a), env)  # warm the page cache for both
            run_once(argv(args.b), env)
            for round_index in range(args.rounds):
                order = ("a", "b") if round_index % 2 == 0 else ("b", "a")
                result = {}
                for side in order:
                    result[side] = run_once(argv(args.a if side == "a" else args.b), env)
                    walls[side].append(result[side][0])
                wall_ratio.append(result["b"][0] / result["a"][0])
                cpu_ratio.append(result["b"][1] / max(result["a"][1], 1e-6))
                rss_ratio.append(result["b"][2] / result["a"][2])
                print(f"ab_compare: {name} round {round_index + 1}/{args.rounds}", file=sys.stderr,
                      end="\r", flush=True)
            ir = "-"
            if args.callgrind:
                ir_a = instructions(argv(args.a), env)
                ir_b = instructions(argv(args.b), env)
                ir = f"{ir_b / ir_a:.4f} ({ir_a:,} -> {ir_b:,})"
            lines.append(f"| {name} | {statistics.median(walls['a']) * 1000:.1f} | "
                         f"{statistics.median(walls['b']) * 1000:.1f} | "
                         f"{statistics.median(wall_ratio):.3f} | {statistics.median(cpu_ratio):.3f} | "
                         f"{statistics.median(rss_ratio):.3f} | {ir} |")
        load_after = os.getloadavg()
        header = [f"A: `{args.a}`  ", f"B: `{args.b}`  ",
                  f"{args.rounds} alternating rounds per case; load average before "
                  f"{' '.join(f'{x:.2f}' for x in load_before)}, after "
                  f"{' '.join(f'{x:.2f}' for x in load_after)}; {os.cpu_count()} cores.", ""]
        report = "\n".join(header + lines) + "\n"
        print(file=sys.stderr)
        print(report)
        if args.output:
            with open(args.output, "w") as handle:
                handle.write(report)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
