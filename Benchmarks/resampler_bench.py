#!/usr/bin/env python3
"""proofkit's resampler against sox's `rate` and libsoxr: speed and quality, side by side.

    .deps/venv/bin/python Benchmarks/resampler_bench.py [--rounds 15] [--baseline REV]
        [--clip ../shared/data/dua_audio/82hm.mp3] [--output FILE.md]

Tools, each on raw float32 mono (the same bytes in, float32 out, so no format's cost differs):
- `proofkit`: SincResampler (Sources/Engines/AudioDSP/SincResampler.swift) compiled with
  Benchmarks/resampler/resample_main.swift by `swiftc -O`, fed 8192 frames at a time as
  ReadingProofRecording feeds it; with --baseline REV, the same file at REV too ("before").
- `libsoxr HQ`: Benchmarks/resampler/soxr_resample.c over Debian's libsoxr (libsoxr-dev), the
  quality sox's `rate` uses by default; fed in the same chunks.
- `sox rate` and `sox rate -v` (Debian's sox 14.4): the command line, whole process.

Speed (CPU time, user + system): every round runs each tool once, in an order that rotates each
round, on the clip converted to 44.1 and 48 kHz mono (a real du'a recording, default 82hm.mp3,
22.8 s) and on a 300 s concatenation of it. Figures are medians over rounds:
- process CPU (wait4) of each whole command: the issue's measure ("at most 1.0x sox's rate, in
  CPU time"), and of `sox` with no effect (its fixed cost: start-up, reading and writing);
- conversion CPU: the resampling alone as the tool itself measures it (CLOCK_PROCESS_CPUTIME_ID),
  for proofkit and libsoxr; for sox, its process CPU minus that of the same command without `rate`.

Quality, with `sox rate -v` as the reference, for 44.1 and 48 kHz to 16 kHz:
- passband ripple: the gain (least-squares fit of a sine at the tone's frequency) of tones from
  100 Hz to 7.2 kHz (0.9 of the output's Nyquist frequency), max - min in dB;
- stopband rejection: the worst output level of tones from 8.8 kHz (1.1x Nyquist) to 0.95 of the
  input's Nyquist frequency, all of which must vanish (in dB relative to the tone);
- aliasing of a sweep: a logarithmic sine sweep from 50 Hz to 0.95 of the input's Nyquist; the
  output's level while the sweep is above 8.8 kHz (what folds back), and the difference from
  `sox rate -v`'s output while it is below 7.2 kHz (dB relative to the signal).
Prints a Markdown report (and writes it with --output).
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENGINE = "Sources/Engines/AudioDSP/SincResampler.swift"
OUT_RATE = 16000


def run(argv):
    """Runs argv; returns (process CPU s, stdout). Fails loudly on a non-zero exit."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"resampler_bench: {' '.join(argv)} failed: {err.strip()[:300]}")
    return usage.ru_utime + usage.ru_stime, out


def build(work, baseline):
    """Compiles proofkit's resampler (and the baseline's, and the libsoxr peer); returns the tools."""
    tools = {}
    main = os.path.join(work, "main.swift")  # top-level code must be in main.swift
    shutil.copy(os.path.join(HERE, "resampler", "resample_main.swift"), main)
    sources = {"proofkit": os.path.join(ROOT, ENGINE)}
    if baseline:
        old = os.path.join(work, "SincResampler_baseline.swift")
        with open(old, "w") as f:
            f.write(subprocess.run(["git", "-C", ROOT, "show", f"{baseline}:{ENGINE}"], check=True,
                                   capture_output=True, text=True).stdout)
        sources[f"proofkit {baseline}"] = old
    for name, source in sources.items():
        binary = os.path.join(work, name.replace(" ", "_"))
        subprocess.run(["swiftc", "-O", "-module-name", "resample", source, main, "-o", binary], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tools[name] = lambda i, o, r_in, binary=binary: [binary, i, o, str(r_in), str(OUT_RATE)]
    soxr = os.path.join(work, "soxr_resample")
    subprocess.run(["cc", "-O2", os.path.join(HERE, "resampler", "soxr_resample.c"), "-lsoxr", "-o", soxr],
                   check=True)
    tools["libsoxr HQ"] = lambda i, o, r_in: [soxr, i, o, str(r_in), str(OUT_RATE), "hq"]
    raw = lambda r: ["-t", "f32", "-r", str(r), "-c", "1"]
    tools["sox rate"] = lambda i, o, r_in: ["sox"] + raw(r_in) + [i, "-t", "f32", o, "rate", str(OUT_RATE)]
    tools["sox rate -v"] = lambda i, o, r_in: ["sox"] + raw(r_in) + [i, "-t", "f32", o, "rate", "-v",
                                                                        str(OUT_RATE)]
    tools["sox (no effect)"] = lambda i, o, r_in: ["sox"] + raw(r_in) + [i, "-t", "f32", o]
    return tools


def write(path, samples):
    np.asarray(samples, dtype="<f4").tofile(path)


def read(path):
    return np.fromfile(path, dtype="<f4").astype(np.float64)


def convert(tools, name, samples, rate, work):
    src, dst = os.path.join(work, "q_in.f32"), os.path.join(work, "q_out.f32")
    write(src, samples)
    run(tools[name](src, dst, rate))
    return read(dst)


def tone_level(y, f, rate):
    """Amplitude of the sine at f in y (least squares over the middle half), and the residual RMS."""
    n = len(y)
    seg = y[n // 4: 3 * n // 4]
    t = np.arange(n // 4, n // 4 + len(seg)) / rate
    basis = np.stack([np.sin(2 * np.pi * f * t), np.cos(2 * np.pi * f * t)], axis=1)
    coef, *_ = np.linalg.lstsq(basis, seg, rcond=None)
    return math.hypot(*coef), float(np.sqrt(np.mean((seg - basis @ coef) ** 2)))


def db(x):
    return 20 * math.log10(max(x, 1e-15))


def quality(tools, names, rate, work):
    """Passband ripple, stopband rejection, sweep aliasing and difference from sox rate -v."""
    amp = 0.5
    seconds = 0.5
    t = np.arange(int(seconds * rate)) / rate
    passband = list(range(100, 7201, 100))
    stopband = list(range(8800, int(0.95 * rate / 2), 400))
    results = {}
    sweep_t = np.arange(int(10 * rate)) / rate
    f0, f1 = 50.0, 0.95 * rate / 2
    k = math.log(f1 / f0) / 10
    sweep = amp * np.sin(2 * np.pi * f0 * (np.exp(k * sweep_t) - 1) / k)
    reference = convert(tools, "sox rate -v", sweep, rate, work)
    for name in names:
        gains = []
        for f in passband:
            level, _ = tone_level(convert(tools, name, amp * np.sin(2 * np.pi * f * t), rate, work), f, OUT_RATE)
            gains.append(db(level / amp))
        worst = -1000.0
        for f in stopband:
            y = convert(tools, name, amp * np.sin(2 * np.pi * f * t), rate, work)
            n = len(y)
            worst = max(worst, db(float(np.sqrt(np.mean(y[n // 4: 3 * n // 4] ** 2))) * math.sqrt(2) / amp))
        y = convert(tools, name, sweep, rate, work)
        out_t = np.arange(len(y)) / OUT_RATE
        freq = f0 * np.exp(k * out_t)
        above = (freq > 8800) & (out_t < 9.9)
        alias = db(float(np.sqrt(np.mean(y[above] ** 2))) * math.sqrt(2) / amp)
        below = (freq > 100) & (freq < 7200)
        m = min(len(y), len(reference))
        below = below[:m]
        diff = float(np.sqrt(np.mean((y[:m][below] - reference[:m][below]) ** 2)))
        diff_db = db(diff * math.sqrt(2) / amp)
        results[name] = (max(gains) - min(gains), worst, alias, diff_db)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--baseline", help="a git revision whose SincResampler is measured too (before)")
    ap.add_argument("--clip", default=os.path.join(ROOT, "..", "shared", "data", "dua_audio", "82hm.mp3"))
    ap.add_argument("--output")
    ap.add_argument("--json", action="store_true", help="print {markdown, ratios} as JSON instead")
    args = ap.parse_args()
    for tool in ("sox", "swiftc", "cc"):
        if not shutil.which(tool):
            sys.exit(f"resampler_bench: {tool} is not installed")
    if not os.path.exists(args.clip):
        sys.exit(f"resampler_bench: no clip at {args.clip}")
    work = tempfile.mkdtemp(prefix="proofkit-resampler-")
    try:
        report, ratios = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"markdown": report, "ratios": ratios}) if args.json else report)
    if args.output:
        with open(args.output, "w") as f:
            f.write(report + "\n")


def measure(args, work):
    tools = build(work, args.baseline)
    ours = [n for n in tools if n.startswith("proofkit")]
    peers = ["libsoxr HQ", "sox rate", "sox rate -v"]
    inputs = []
    for rate in (44100, 48000):
        short = os.path.join(work, f"clip{rate}.f32")
        subprocess.run(["sox", args.clip, "-t", "f32", "-r", str(rate), short, "remix", "-", "rate", "-v",
                        str(rate)], check=True)
        long = os.path.join(work, f"long{rate}.f32")
        with open(long, "wb") as f:
            data = open(short, "rb").read()
            repeats = math.ceil(300 * rate * 4 / len(data))
            f.write((data * repeats)[: 300 * rate * 4])
        seconds = os.path.getsize(short) / 4 / rate
        inputs += [(f"{rate / 1000:g} kHz, {seconds:.1f} s", short, rate), (f"{rate / 1000:g} kHz, 300 s", long, rate)]
    names = ours + peers + ["sox (no effect)"]
    process = {(i[0], n): [] for i in inputs for n in names}
    conversion = {(i[0], n): [] for i in inputs for n in ours + ["libsoxr HQ"]}
    for r in range(args.rounds):
        for label, path, rate in inputs:
            order = names[r % len(names):] + names[: r % len(names)]
            for name in order:
                cpu, out = run(tools[name](path, os.path.join(work, "out.f32"), rate))
                process[(label, name)].append(cpu)
                if (label, name) in conversion:
                    conversion[(label, name)].append(float(out.strip()))
    med = lambda xs: statistics.median(xs)
    lines = ["# proofkit's resampler against sox and libsoxr", "",
             f"Clip: {os.path.basename(args.clip)} (mono), converted to 44.1 and 48 kHz with `sox rate -v`, and "
             f"a 300 s concatenation of it; {args.rounds} rounds, tools interleaved (order rotating). "
             f"Machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end.", "",
             "## Speed: CPU time (ms), medians", "",
             "| input | tool | process CPU | conversion CPU | process / sox rate | conversion / sox rate's |",
             "|---|---|---:|---:|---:|---:|"]
    ratios = {}
    for label, _, _ in inputs:
        sox_proc = med(process[(label, "sox rate")])
        sox_conv = sox_proc - med(process[(label, "sox (no effect)")])
        for name in names:
            p = med(process[(label, name)])
            if (label, name) in conversion:
                c = med(conversion[(label, name)])
            elif name == "sox rate":
                c = sox_conv
            elif name == "sox rate -v":
                c = p - med(process[(label, "sox (no effect)")])
            else:
                c = None
            cs = f"{c * 1000:.1f}" if c is not None else ""
            ratio_c = f"{c / sox_conv:.2f}" if c is not None and sox_conv > 0 else ""
            lines.append(f"| {label} | {name} | {p * 1000:.1f} | {cs} | {p / sox_proc:.2f} | {ratio_c} |")
            if name == "proofkit":
                ratios[label] = {"process": p / sox_proc, "conversion": c / sox_conv}
    lines += ["", "(sox's conversion CPU is its process CPU less that of the same command without `rate`;",
              "CPU times under 10 ms are near the kernel's accounting resolution.)", "",
              "## Quality, 16 kHz output (reference: `sox rate -v`)", "",
              "| input rate | tool | passband ripple 0.1-7.2 kHz (dB) | worst stopband tone 8.8 kHz+ (dB) "
              "| sweep above 8.8 kHz, aliased (dB) | sweep below 7.2 kHz, difference from sox -v (dB) |",
              "|---|---|---:|---:|---:|---:|"]
    for rate in (44100, 48000):
        q = quality(tools, ours + peers, rate, work)
        for name, (ripple, stop, alias, diff) in q.items():
            lines.append(f"| {rate} | {name} | {ripple:.4f} | {stop:.1f} | {alias:.1f} | {diff:.1f} |")
    return "\n".join(lines), ratios


if __name__ == "__main__":
    main()
