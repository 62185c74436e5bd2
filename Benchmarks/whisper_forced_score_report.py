#!/usr/bin/env python3
"""Figures of the key words OR the forced score, per half, from whisper_forced_score_study.py's
output and whisper_dua_eval.py's results.json (the key words' verdicts), for a grid of margins
(tuning: read half A's lines only) and for one margin given with --margin (all halves).
  python3 Benchmarks/whisper_forced_score_report.py SCORES.jsonl RESULTS.json [--margin 1.4]
"""
import json, csv, os, sys, unicodedata
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def normalise(text):
    out = []
    for ch in text:
        if unicodedata.category(ch) == "Mn" or ch == "\u0640": continue
        ch = {"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه", "ؤ": "و", "ئ": "ي"}.get(ch, ch)
        out.append(ch if "\u0621" <= ch <= "\u064a" else " ")
    return " ".join("".join(out).split())
rows = {r["id"]: r for r in csv.DictReader(open(os.path.join(ROOT, "..", "shared", "data", "dua_audio", "MANIFEST.tsv"), encoding="utf-8"), delimiter="\t")}
kw = json.load(open(sys.argv[2]))
own_rej = {x["recording"] for x in kw["own_rejected"]}
other_acc = {tuple(p) for p in kw["other_accepted_pairs"]}
recs = list({r["id"]: r for r in (json.loads(l) for l in open(sys.argv[1]))}.values())
def mean(x): return sum(x)/len(x)
def feats(rec, key):
    best = None
    for wi, lp in enumerate(rec["texts"][key]):
        if lp is None: continue
        if best is None or mean(lp) > mean(best[1]): best = (wi, lp)
    if best is None: return None
    wi, lp = best
    g = rec["greedy"][wi]
    return {"mean": mean(lp), "n": len(lp), "ratio": (mean(lp) - mean(g)) if len(g) > 1 else None, "lp": lp}
def passes(f, margin, mintok):
    return f is not None and f["ratio"] is not None and f["n"] >= mintok and f["ratio"] >= -margin
def evaluate(margin, mintok, half):
    own = [0,0]; oth = [0,0]; wak = [0,0]; othf=[0,0]
    for rec in recs:
        i = int(rec["id"]); h = "A" if i % 2 == 0 else "B"
        if half != "all" and h != half: continue
        name = "hm" + rec["id"]
        for key in rec["texts"]:
            kind, tid = key.split(":")
            f = feats(rec, key)
            fp = passes(f, margin, mintok)
            if kind == "own":
                own[1] += 1; own[0] += (name not in own_rej) or fp
            elif kind == "other":
                if normalise(rows[tid]["text"]) == normalise(rows[rec["id"]]["text"]): continue
                oth[1] += 1; oth[0] += ((name, "hm"+tid) in other_acc) or fp
                othf[1] += 1; othf[0] += fp
            else:
                wak[1] += 1; wak[0] += fp
    return own, oth, wak, othf
if __name__ == "__main__":
    print(len(recs), "recordings scored")
    for half in ["A","B","all"]:
        print(half, "kw only", evaluate(-1e9, 10**9, half))
    if "--margin" in sys.argv:
        margin = float(sys.argv[sys.argv.index("--margin") + 1])
        for half in ["A", "B", "all"]:
            own, oth, wak, othf = evaluate(margin, 8, half)
            print(f"margin {margin}, half {half}: own {own[0]}/{own[1]}, other (sampled) {oth[0]}/{oth[1]} "
                  f"(by the forced score {othf[0]}), waking {wak[0]}/{wak[1]}")
        sys.exit(0)
    print("margin, minimum tokens, half A: (own, other, waking, other by the forced score) [accepted, pairs]")
    for margin in [0.2,0.4,0.6,0.8,0.9,1.0,1.2,1.4,1.5,1.6,1.8]:
        for mintok in [1, 4, 8, 12]:
            print(margin, mintok, "A", evaluate(margin, mintok, "A"))
