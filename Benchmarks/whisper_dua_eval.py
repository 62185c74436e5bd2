#!/usr/bin/env python3
"""The reading proof with the built-in recogniser, on real recordings of du'as.

For the recordings of ../shared/data/dua_audio (one reader, Hisnul Muslim; MANIFEST.tsv has the
text each one reads), this runs `proofkit transcribe` on every recording (one process, the model
loaded once), then asks `proofkit dua check` whether each transcript is accepted
  - for its own text, with key words picked automatically (an entry without key_words),
  - for every other recording's text (texts that normalise to the same words are left out),
  - for the waking du'a (the built-in text with its hand-picked key words),
and, with --voice, also runs `proofkit voice REC --json` on each recording for the waking du'a
(the whole pipeline: gate, recogniser, matcher).

With --forced, it asks `proofkit transcribe REC --score-text ...` (one process per recording,
kept in OUT/forced/NAME.json so that a run resumes; its transcript is the one used above) for the
span forced score of the recording's own text, of 6 other recordings' texts chosen by a seeded RNG
(random.Random(12000 + id)) and of the waking du'a, and reports the rule `proofkit voice` uses by
default: accepted when the key words pass OR the forced score passes (ForcedScoreRule on the
SpanScore: the words of the text the transcript aligns to, scored in each window, at most its
margin below the model's own transcript, with enough tokens and coverage). Other-text acceptance
under that rule is counted on the sampled pairs (the key words alone on all pairs too).
With --voice-own it also runs the default `proofkit voice REC --text OWN --json` on every
recording (gate, recogniser, key words, forced score: what a user gets), kept in OUT/voice/.
--models DIR points PROOFKIT_MODELS at another models folder (e.g. an int8 build).

The recordings are split in two halves by the parity of their id (A: even, B: odd) so that any
rule tuned on one half can be reported on the other; both halves and the total are printed.

Usage (from the package root, after `.ci/build-release proofkit` and the models build):
  python3 Benchmarks/whisper_dua_eval.py [--proofkit PATH] [--data DIR] [--voice] [--forced]
      [--voice-own] [--models DIR] [--out DIR]
Writes DIR/transcripts.jsonl, DIR/texts.json and DIR/results.json (default Benchmarks/out/whisper_dua).
Needs only the Python standard library.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import subprocess
import sys
import time
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def normalise(text):
    """Letters only, harakat dropped, alef/yeh/teh-marbuta unified (close to ArabicNormalizer)."""
    out = []
    for ch in text:
        if unicodedata.category(ch) == "Mn" or ch == "\u0640":
            continue
        ch = {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي"}.get(ch, ch)
        out.append(ch if "\u0621" <= ch <= "\u064a" else " ")
    return " ".join("".join(out).split())


ENV = None


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, env=ENV, **kw)


def cached_json(path, make):
    """The JSON at path, else make() written there (atomically): long runs resume where they stopped."""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    value = make()
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False)
    os.replace(path + ".tmp", path)
    return value


def manifest_rows(data):
    """The recordings of MANIFEST.tsv that read a text, each with its name (hmID), half (A: even
    id, B: odd) and path."""
    with open(os.path.join(data, "MANIFEST.tsv"), encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r.get("text_kind", "text") == "text"]
    for r in rows:
        r["name"] = "hm" + r["id"]
        r["half"] = "A" if int(r["id"]) % 2 == 0 else "B"
        r["path"] = os.path.join(data, r["file"])
    return rows


def write_texts(rows, path):
    """A texts file with every recording's text and no key_words (proofkit picks them); its path."""
    texts = {"texts": [{"name": r["name"], "title": r["title"], "text": r["text"],
                        "reading_seconds": max(0.5, float(r["duration_s"]))} for r in rows]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(texts, f, ensure_ascii=False, indent=1)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proofkit", default=os.path.join(ROOT, ".build/release/proofkit"))
    parser.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "dua_audio"))
    parser.add_argument("--out", default=os.path.join(ROOT, "Benchmarks", "out", "whisper_dua"))
    parser.add_argument("--voice", action="store_true", help="also run 'proofkit voice REC' for the waking du'a")
    parser.add_argument("--reuse", action="store_true", help="reuse transcripts.jsonl from an earlier run")
    parser.add_argument("--forced", action="store_true", help="also the forced-score rule on sampled pairs")
    parser.add_argument("--voice-own", action="store_true",
                        help="also run the default 'proofkit voice REC --text OWN' on every recording")
    parser.add_argument("--models", help="the models folder (PROOFKIT_MODELS), e.g. an int8 build")
    options = parser.parse_args()
    if not os.path.isdir(options.data):
        sys.exit(f"no data folder {options.data}")
    os.makedirs(options.out, exist_ok=True)
    global ENV
    ENV = dict(os.environ)
    if options.models:
        ENV["PROOFKIT_MODELS"] = options.models
    rows = manifest_rows(options.data)

    # 1. A texts file with every recording's text and no key_words: proofkit picks them.
    texts_path = write_texts(rows, os.path.join(options.out, "texts.json"))

    # 2. Transcripts. With --forced: one `transcribe --score-text` process per recording (its
    # transcript, and the forced scores of its own text, 6 other recordings' texts chosen by a
    # seeded RNG and the waking du'a on one encoding), each kept in OUT/forced/NAME.json so that
    # a long run resumes; else one process for all recordings (the model loaded once).
    import random
    names = {r["name"]: r for r in rows}
    scored = {}
    if options.forced:
        os.makedirs(os.path.join(options.out, "forced"), exist_ok=True)
        for done, r in enumerate(rows):
            rng = random.Random(12000 + int(r["id"]))
            others = rng.sample([x for x in rows if x is not r], 6)
            names_scored = [r["name"]] + [x["name"] for x in others] + ["waking"]
            args = [options.proofkit, "transcribe", r["path"], "--json", "--texts", texts_path]
            for name in names_scored:
                args += ["--score-text", name]
            def make(args=args):
                result = run(args)
                if result.returncode != 0:
                    sys.exit(f"proofkit transcribe failed ({result.returncode}): {result.stderr.strip()}")
                return json.loads(result.stdout)
            scored[r["name"]] = cached_json(os.path.join(options.out, "forced", r["name"] + ".json"), make)
            print(f"\rscored {done + 1}/{len(rows)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        by_file = {obj["file"]: obj for obj in scored.values()}
    else:
        transcripts_path = os.path.join(options.out, "transcripts.jsonl")
        if not (options.reuse and os.path.exists(transcripts_path)):
            started = time.time()
            result = run([options.proofkit, "transcribe", "--json"] + [r["path"] for r in rows])
            if result.returncode != 0:
                sys.exit(f"proofkit transcribe failed ({result.returncode}): {result.stderr.strip()}")
            with open(transcripts_path, "w", encoding="utf-8") as f:
                f.write(result.stdout)
            print(f"transcribed {len(rows)} recordings in {time.time() - started:.1f} s", file=sys.stderr)
        by_file = {}
        with open(transcripts_path, encoding="utf-8") as f:
            for line in f:
                obj = json.loads(line)
                by_file[obj["file"]] = obj
    for r in rows:
        r["transcript"] = by_file[r["path"]]["transcript"]
        r["transcribe_seconds"] = by_file[r["path"]]["timing"]["transcribe_seconds"]

    def check(transcript, name):
        result = run([options.proofkit, "dua", "check", transcript, "--text", name, "--texts", texts_path, "--json"])
        if result.returncode != 0:
            sys.exit(f"dua check failed: {result.stderr.strip()}")
        return json.loads(result.stdout)

    # 3. Own text, other texts, the waking du'a.
    same_words = {}
    for r in rows:
        same_words.setdefault(normalise(r["text"]), []).append(r["name"])
    jobs = [(r, t) for r in rows for t in rows
            # the same words under another number are not "another text"
            if t is r or normalise(t["text"]) != normalise(r["text"])]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = list(pool.map(lambda job: check(job[0]["transcript"], job[1]["name"]), jobs))
    pairs = []
    for (r, t), verdict in zip(jobs, verdicts):
        pairs.append({"recording": r["name"], "text": t["name"], "own": t is r, "half": r["half"],
                      "accepted": verdict["verdict"] == "accepted", "heard": verdict["heard_count"],
                      "required": verdict["required"]})
    waking = []
    for r in rows:
        verdict = check(r["transcript"], "waking")
        waking.append({"recording": r["name"], "half": r["half"], "accepted": verdict["verdict"] == "accepted",
                       "heard": verdict["heard_count"]})
    voice = []
    if options.voice:
        for r in rows:
            result = run([options.proofkit, "voice", r["path"], "--json"])
            obj = json.loads(result.stdout)
            voice.append({"recording": r["name"], "half": r["half"], "accepted": obj["verdict"] == "accepted",
                          "rule": obj["rule"], "recognizer": obj.get("recognizer"),
                          "forced_score": (obj.get("forced_score") or {}).get("mean_log_prob")})

    forced = []
    if options.forced:
        accepted_by_words = {(p["recording"], p["text"]) for p in pairs if p["accepted"]}
        for r in rows:
            for score in scored[r["name"]]["scores"]:
                name = score["text"]
                kind = "own" if name == r["name"] else "waking" if name == "waking" else "other"
                if kind == "other" and normalise(names[name]["text"]) == normalise(r["text"]):
                    continue
                words = (any(w["recording"] == r["name"] and w["accepted"] for w in waking) if kind == "waking"
                         else (r["name"], name) in accepted_by_words)
                forced.append({"recording": r["name"], "text": name, "kind": kind, "half": r["half"],
                               "ratio": score.get("ratio"), "tokens": score.get("tokens"),
                               "coverage": score.get("coverage"), "passes": bool(score.get("passes")),
                               "words": words, "accepted": words or bool(score.get("passes"))})

    # 4. What a user gets by default: `proofkit voice REC --text OWN` (gate, recogniser, key words,
    # forced score), one process per recording, kept in OUT/voice/NAME.json.
    voice_own = []
    if options.voice_own:
        os.makedirs(os.path.join(options.out, "voice"), exist_ok=True)
        for done, r in enumerate(rows):
            def make(r=r):
                result = run([options.proofkit, "voice", r["path"], "--text", r["name"], "--texts", texts_path, "--json"])
                if result.returncode != 0:
                    sys.exit(f"proofkit voice failed ({result.returncode}): {result.stderr.strip()}")
                return json.loads(result.stdout)
            obj = cached_json(os.path.join(options.out, "voice", r["name"] + ".json"), make)
            voice_own.append({"recording": r["name"], "half": r["half"], "accepted": obj["verdict"] == "accepted",
                              "rule": obj["rule"], "forced_score": obj.get("forced_score")})
            print(f"\rvoice {done + 1}/{len(rows)}", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)

    def rate(items):
        return sum(1 for x in items if x["accepted"]), len(items)

    report = {"recordings": len(rows), "halves": {}}
    for half in ["A", "B", "all"]:
        sel = (lambda x: True) if half == "all" else (lambda x, h=half: x["half"] == h)
        own = [p for p in pairs if p["own"] and sel(p)]
        other = [p for p in pairs if not p["own"] and sel(p)]
        wake = [w for w in waking if sel(w)]
        entry = {"own_accepted": rate(own), "other_accepted": rate(other), "waking_accepted": rate(wake)}
        if voice:
            entry["voice_waking_accepted"] = rate([v for v in voice if sel(v)])
        if forced:
            for kind in ["own", "other", "waking"]:
                entry[f"words_or_forced_{kind}_accepted"] = rate([f for f in forced if f["kind"] == kind and sel(f)])
                entry[f"forced_alone_{kind}_accepted"] = rate(
                    [dict(f, accepted=f["passes"]) for f in forced if f["kind"] == kind and sel(f)])
                entry[f"words_alone_{kind}_accepted_sampled"] = rate(
                    [dict(f, accepted=f["words"]) for f in forced if f["kind"] == kind and sel(f)])
        if voice_own:
            entry["voice_own_accepted"] = rate([v for v in voice_own if sel(v)])
        report["halves"][half] = entry
    report["own_rejected"] = [{"recording": p["recording"], "heard": p["heard"], "required": p["required"]}
                              for p in pairs if p["own"] and not p["accepted"]]
    report["other_accepted_pairs"] = [(p["recording"], p["text"]) for p in pairs if not p["own"] and p["accepted"]]
    report["waking_accepted"] = [w["recording"] for w in waking if w["accepted"]]
    report["transcribe_seconds_total"] = round(sum(r["transcribe_seconds"] for r in rows), 2)
    report["audio_seconds_total"] = round(sum(float(r["duration_s"]) for r in rows), 2)
    if voice:
        report["voice"] = voice
    if forced:
        report["forced"] = forced
    if voice_own:
        report["voice_own"] = voice_own
    with open(os.path.join(options.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, ensure_ascii=False, indent=1)
    for half, entry in report["halves"].items():
        own, other, wake = entry["own_accepted"], entry["other_accepted"], entry["waking_accepted"]
        line = (f"half {half}: own text accepted {own[0]}/{own[1]} ({100 * own[0] / max(1, own[1]):.1f}%), "
                f"another recording's text accepted {other[0]}/{other[1]} (1 in {other[1] / max(1, other[0]):.0f}), "
                f"accepted as the waking du'a {wake[0]}/{wake[1]}")
        if "voice_waking_accepted" in entry:
            v = entry["voice_waking_accepted"]
            line += f", 'voice REC' accepted as waking {v[0]}/{v[1]}"
        print(line)
        if "words_or_forced_own_accepted" in entry:
            o, t, w = (entry[f"words_or_forced_{k}_accepted"] for k in ["own", "other", "waking"])
            print(f"  key words or forced score: own {o[0]}/{o[1]} ({100 * o[0] / max(1, o[1]):.1f}%), "
                  f"another text (sampled) {t[0]}/{t[1]} (1 in {t[1] / max(1, t[0]):.0f}), waking {w[0]}/{w[1]}")
            fo, ft, fw = (entry[f"forced_alone_{k}_accepted"] for k in ["own", "other", "waking"])
            print(f"  forced score alone: own {fo[0]}/{fo[1]}, another text (sampled) {ft[0]}/{ft[1]}, waking {fw[0]}/{fw[1]}")
        if "voice_own_accepted" in entry:
            v = entry["voice_own_accepted"]
            print(f"  'proofkit voice REC --text OWN' (the default): accepted {v[0]}/{v[1]} ({100 * v[0] / max(1, v[1]):.1f}%)")
    print(f"transcribe: {report['transcribe_seconds_total']} s for {report['audio_seconds_total']} s of audio")


if __name__ == "__main__":
    main()
