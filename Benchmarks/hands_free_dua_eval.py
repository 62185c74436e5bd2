#!/usr/bin/env python3
"""The reading proof through the alarm's hands-free path, against the same proof on the recording.

Issue 35 asks that the reading proof keep its figures when the recordings of
../shared/data/dua_audio (one reader, Hisnul Muslim; evaluation only, never copied into the
project) arrive through the hands-free path instead of as a file. For each recording this runs,
for its own text and for one other recording's text (the first of the 6 that
random.Random(12000 + id) samples in whisper_dua_eval.py; texts that normalise to the same words
are skipped):

  - the recording:  proofkit voice REC --text T --texts F --json
  - hands-free:     proofkit voice --live --hands-free --device vmic --text T --texts F --json
                    with a virtual microphone (ALSA's file plugin) playing 1 s of silence, the
                    recording as 16 kHz mono S16_LE (ffmpeg), then silence; --hands-free ends
                    listening as the alarm's listener does (ReadingEnd: the first 1.5 s pause after
                    1 s of voice, or a pass) and judges then, with the same gate, recogniser,
                    forced score and matcher.

The hands-free figure is the alarm's first judgement of one reading: stricter than the service,
which goes on listening after a rejection. Halves A (even ids) and B (odd ids), as in
whisper_dua_eval.py; nothing here was tuned (ReadingEnd's 1.5 s and 1 s were chosen before this
ran), so both halves are held out.

Usage (from the package root, after the release build and the models build):
  python3 Benchmarks/hands_free_dua_eval.py [--proofkit PATH] [--data DIR] [--out DIR] [--limit N] [--only NAME] [--reuse-file RESULTS]
Writes OUT/results.jsonl (resumes) and prints the table. Needs ffmpeg and the standard library.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from whisper_dua_eval import manifest_rows, normalise, write_texts  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def verdict(output):
    """The verdict of a `voice --json` run: the last JSON line's "verdict"."""
    for line in reversed(output.strip().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if "verdict" in value:
            return value["verdict"], value.get("rule")
    return None, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proofkit", default=os.path.join(ROOT, ".build/release/proofkit"))
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "dua_audio"))
    parser.add_argument("--out", default=os.path.join(ROOT, "Benchmarks/out/hands_free_dua"))
    parser.add_argument("--limit", type=int, default=0, help="only the first N recordings (a quick look)")
    parser.add_argument("--only", action="append", default=[], help="only this recording (by name; repeatable)")
    parser.add_argument("--reuse-file", metavar="RESULTS",
                        help="take the recording's verdicts from an earlier run's results.jsonl (same file path)")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    rows = manifest_rows(options.data)
    texts_path = write_texts(rows, os.path.join(options.out, "texts.json"))

    results_path = os.path.join(options.out, "results.jsonl")
    done = {}
    if os.path.exists(results_path):
        with open(results_path, encoding="utf-8") as f:
            for line in f:
                value = json.loads(line)
                done[(value["recording"], value["text"])] = value
    earlier = {}
    if options.reuse_file:
        with open(options.reuse_file, encoding="utf-8") as f:
            for line in f:
                value = json.loads(line)
                earlier[(value["recording"], value["text"])] = value
    selected = rows[: options.limit] if options.limit else rows
    if options.only:
        selected = [r for r in selected if r["name"] in options.only]
    started = time.time()
    with open(results_path, "a", encoding="utf-8") as out:
        for index, r in enumerate(selected):
            rng = random.Random(12000 + int(r["id"]))
            others = [x for x in rng.sample([x for x in rows if x is not r], 6)
                      if normalise(x["text"]) != normalise(r["text"])]
            pairs = [("own", r["name"])] + ([("other", others[0]["name"])] if others else [])
            raw = os.path.join(options.out, "mic.raw")
            pcm = subprocess.run(["ffmpeg", "-v", "error", "-i", r["path"], "-f", "s16le", "-ac", "1", "-ar", "16000",
                                  "-"], capture_output=True, check=True).stdout
            with open(raw, "wb") as f:
                f.write(bytes(32000) + pcm)
            conf = os.path.join(options.out, "asound.conf")
            with open(conf, "w") as f:
                f.write('pcm.vmic { type file slave.pcm { type null } file "/dev/null" '
                        f'infile "{raw}" format "raw" }}\n')
            seconds = len(pcm) / 32000 + 6
            for kind, text in pairs:
                if (r["name"], text) in done:
                    continue
                common = ["--text", text, "--texts", texts_path, "--json"]
                before = earlier.get((r["name"], text))
                recording = None if before else subprocess.run([options.proofkit, "voice", r["path"]] + common,
                                                               capture_output=True, text=True)
                live = subprocess.run([options.proofkit, "voice", "--live", "--hands-free", "--device", "vmic",
                                       "--max-seconds", f"{seconds:.1f}"] + common,
                                      capture_output=True, text=True,
                                      env=dict(os.environ, PROOFKIT_ALSA_CONFIG=conf))
                a, rule_a = (before["file"], before["file_rule"]) if before else verdict(recording.stdout)
                b, rule_b = verdict(live.stdout)
                value = {"recording": r["name"], "half": r["half"], "kind": kind, "text": text,
                         "file": a, "file_rule": rule_a, "hands_free": b, "hands_free_rule": rule_b,
                         "file_reused": bool(before),
                         "errors": [x.stderr.strip()[-300:] for x in (recording, live) if x and x.returncode != 0]}
                done[(r["name"], text)] = value
                out.write(json.dumps(value, ensure_ascii=False) + "\n")
                out.flush()
            elapsed = time.time() - started
            print(f"\r{index + 1}/{len(selected)} recordings, {elapsed:.0f} s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    results = [v for v in done.values() if any(v["recording"] == r["name"] for r in selected)]
    print("| | half A | half B | all |\n|---|---|---|---|")
    for kind, label in (("own", "own text accepted"), ("other", "another recording's text accepted")):
        for path in ("file", "hands_free"):
            cells = []
            for half in ("A", "B", None):
                chosen = [v for v in results if v["kind"] == kind and (half is None or v["half"] == half)]
                accepted = sum(1 for v in chosen if v[path] == "accepted")
                cells.append(f"{accepted}/{len(chosen)}")
            name = "voice REC" if path == "file" else "hands-free"
            print(f"| {label}, {name} | " + " | ".join(cells) + " |")
    differ = [v for v in results if v["file"] != v["hands_free"]]
    print(f"\n{len(differ)} of {len(results)} pairs differ:")
    for v in differ:
        print(f"  {v['recording']} {v['kind']} ({v['text']}): recording {v['file']} ({v['file_rule']}), "
              f"hands-free {v['hands_free']} ({v['hands_free_rule']}) {'; '.join(v['errors'])}")


if __name__ == "__main__":
    main()
