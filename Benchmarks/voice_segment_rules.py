#!/usr/bin/env python3
"""Replays rules on Silero's segments from saved `voice_gate_eval.py --out` reports (issue 14).

The default gate's worst files are over-counts at the ends of short readings: in noise, Silero's
probability stays above its offset threshold for up to a second after the voice. This script asks,
without rerunning proofkit, what a rule on the segments' edges would do. It reads what proofkit
reported for each file with `--vad silero` (`voice --json`: `silero_segments`, Silero's own;
`veto_segments`, the stretches the speech-likeness veto kept at its trained threshold; and
`voiced_segments`, what the gate decided) and replays:

- `reported`: what the gate decided (a check: it reproduces the report's own figures);
- `no veto`: all of Silero's own segments (what `--no-veto` counts);
- `whole T`: Silero's segments whose mean veto likeness (`silero_likeness`) is at least T; the
  shipped rule is `whole 0.2` (`SpeechLikenessVeto.segmentThreshold`);
- `edge P`: each of `whole 0.2`'s segments cut to [first veto-kept frame - P, last veto-kept frame
  + P] inside it (a segment with no kept frame stays whole); the shipped pad is 0.3 s
  (`SpeechLikenessVeto.edgePaddingSeconds`). Reports from builds before the edge rule (without
  `silero_likeness`) replay `edge P` over the reported segments, which were `whole 0.2` then.

Usage:
    python3 Benchmarks/voice_segment_rules.py REPORT.json [REPORT.json ...] [--pads 0,0.1,0.2,0.3]
        [--thresholds 0.1,0.2,0.3] [--worst N]

It prints, per split and rule, the |error| median / p90 / worst and the files over 25 % at 20, 10 and
5 dB, and noise alone (worst file). Errors are against each report's own reference (Silero on the
clean speech).
"""
import argparse
import json
import statistics
import sys

SNRS = [20, 10, 5]


def total(segments):
    return sum(b - a for a, b in segments)


def edge_trim(decided, kept, pad, island=None):
    """Each decided segment cut to the veto-kept frames inside it, widened by pad seconds. With
    island = (gap, shortest): a kept stretch at either end shorter than `shortest` seconds and more
    than `gap` seconds from its neighbour is not an edge (repeatedly)."""
    out = []
    for a, b in decided:
        inside = [(max(a, c), min(b, d)) for c, d in kept if d > a and c < b]
        if island:
            gap, shortest = island
            while len(inside) > 1 and inside[-1][1] - inside[-1][0] < shortest and inside[-1][0] - inside[-2][1] > gap:
                inside.pop()
            while len(inside) > 1 and inside[0][1] - inside[0][0] < shortest and inside[1][0] - inside[0][1] > gap:
                inside.pop(0)
        if not inside:
            out.append((a, b))
            continue
        out.append((max(a, inside[0][0] - pad), min(b, inside[-1][1] + pad)))
    return out


def whole(row, threshold):
    likeness = row["likeness"]["silero"]
    return [tuple(seg) for seg, like in zip(row["silero"]["silero"], likeness) if like >= threshold]


def rules(pads, thresholds, has_likeness, islands=()):
    yield "reported", lambda row: row["segments"]["silero"]
    if has_likeness:
        yield "no veto", lambda row: row["silero"]["silero"]
        for t in thresholds:
            yield f"whole {t:g}", lambda row, t=t: whole(row, t)
    base = (lambda row: whole(row, 0.2)) if has_likeness else (lambda row: row["segments"]["silero"])
    for pad in pads:
        yield f"edge {pad:g}", lambda row, pad=pad: edge_trim(base(row), row["veto"]["silero"] or [], pad)
    for gap, shortest in islands:
        yield (f"isl {gap:g}/{shortest:g}",
               lambda row, i=(gap, shortest): edge_trim(base(row), row["veto"]["silero"] or [], 0.3, i))


def figures(rows, rule):
    alone = [total(rule(r)) for r in rows if r["speech"] is None]
    line = {"alone_max_s": round(max(alone), 2) if alone else None}
    for snr in SNRS:
        errors = sorted(abs(total(rule(r)) - r["reference"]) / r["reference"] for r in rows if r["snr"] == snr)
        if errors:
            line[snr] = (100 * statistics.median(errors), 100 * errors[min(len(errors) - 1, int(0.9 * len(errors)))],
                         100 * errors[-1], sum(e > 0.25 for e in errors))
    return line


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--pads", default="0,0.1,0.2,0.3", help="edge pads to try, in seconds")
    parser.add_argument("--thresholds", default="0.1,0.2,0.3", help="whole-segment likeness thresholds to try")
    parser.add_argument("--islands", default="", help="island rules to try with pad 0.3 s, as GAP/SHORTEST "
                        "seconds, comma-separated (e.g. 0.5/0.5)")
    parser.add_argument("--worst", type=int, default=0, help="also list each rule's N worst files at >= 10 dB")
    args = parser.parse_args()
    pads = [float(p) for p in args.pads.split(",")]
    thresholds = [float(t) for t in args.thresholds.split(",")]
    islands = [tuple(float(x) for x in pair.split("/")) for pair in args.islands.split(",") if pair]
    rows = []
    for path in args.reports:
        with open(path) as f:
            files = json.load(f)["files"]
        usable = [r for r in files if "silero" in r.get("veto", {}) and r["veto"]["silero"] is not None]
        if len(usable) < len(files):
            sys.exit(f"voice_segment_rules: {path} has files without veto_segments (rerun voice_gate_eval.py "
                     "with --modes silero on a build whose voice --json reports them)")
        rows += files
    has_likeness = all(r.get("likeness", {}).get("silero") is not None for r in rows)
    print("split     rule       alone  | 20 dB med/p90/max >25%  | 10 dB ...                | 5 dB ...")
    for split in sorted({r["split"] for r in rows}, key=lambda s: (s != "tune", s)):
        mine = [r for r in rows if r["split"] == split]
        for name, rule in rules(pads, thresholds, has_likeness, islands):
            line = figures(mine, rule)
            cells = [f"{line[s][0]:4.1f}/{line[s][1]:5.1f}/{line[s][2]:6.1f} {line[s][3]:3d}" if s in line else "-"
                     for s in SNRS]
            print(f"{split:9} {name:9} {line['alone_max_s']:5.2f}s | " + " | ".join(cells))
            if args.worst:
                worst = sorted((r for r in mine if r["snr"] and r["snr"] >= 10),
                               key=lambda r: -abs(total(rule(r)) - r["reference"]) / r["reference"])[: args.worst]
                for r in worst:
                    e = 100 * (total(rule(r)) - r["reference"]) / r["reference"]
                    print(f"      {e:+6.1f} %  {r['noise']} + {r['speech']} @ {r['snr']} dB")


if __name__ == "__main__":
    main()
