#!/usr/bin/env python3
"""The forced-score study behind ForcedScoreRule's margin (Benchmarks/whisper_dua_eval.md).

For each recording of ../shared/data/dua_audio, with the set-up's Python ONNX Runtime pipeline on
the same graphs proofkit runs (Models/proofkit_models/whisper_run.py), per 30 s window: the
encoder once, the greedy transcript (or the tokens of an earlier run's TSV for one-window
recordings), then the forced per-token log-probabilities of the greedy tokens and of the
recording's own text, 6 other recordings' texts (random.Random(12000 + id)) and the waking du'a.
Appends one JSON line per recording to OUT (resumable). Set-up venv only (numpy, onnxruntime):
  .deps/venv/bin/python Benchmarks/whisper_forced_score_study.py OUT.jsonl [TRANSCRIPTS.tsv]
"""
import sys, os, json, csv, random, re, glob
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Models"))
import numpy as np
from proofkit_models import whisper_run as wr
G = os.path.join(ROOT, "Models", "generated")
OUT = sys.argv[1]
TRANSCRIPTS = sys.argv[2] if len(sys.argv) > 2 else None
# The built-in waking du'a (DuaCatalog.builtInJSON).
WAKING = "الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ"
tok = json.load(open(f"{G}/whisper_tokenizer.json"))
encode = wr.TokenEncoder(tok).encode
without_marks = wr.without_marks
def logsm(row):
    m=row.max(); return row - m - np.log(np.exp(row-m).sum())
data = os.path.join(ROOT, "..", "shared", "data", "dua_audio")
rows = [r for r in csv.DictReader(open(f"{data}/MANIFEST.tsv"), delimiter="\t") if r.get("text_kind","text")=="text"]
waking = WAKING
config = json.load(open(f"{G}/whisper_config.json"))
m = wr.OnnxWhisper(f"{G}/whisper_base_encoder.onnx", f"{G}/whisper_base_decoder.onnx", config, threads=2)
fe = wr.feature_extractor(glob.glob(os.path.join(ROOT, ".deps", "wheels", "faster_whisper*.whl"))[0])
empty = np.zeros((6,1,8,0,64),np.float32)
def forced(cross, toks):
    toks = toks + [wr.EOT]
    if len(toks)+4 > 448: return None
    logits,_ = m.step(wr.PROMPT + toks[:-1], 0, (empty,empty), cross)
    return [float(logsm(logits[3+i])[t]) for i,t in enumerate(toks)]
names = [r["id"] for r in rows]
pre = {r["id"]: ([int(x) for x in r["tokens"].split()], r["windows"]) for r in csv.DictReader(open(TRANSCRIPTS), delimiter="\t")} if TRANSCRIPTS else {}
done = {json.loads(l)["id"] for l in open(OUT)} if os.path.exists(OUT) else set()
out = open(OUT, "a")
for r in rows:
    if r["id"] in done: continue
    rng = random.Random(12000 + int(r["id"]))
    others = rng.sample([x for x in rows if x["id"] != r["id"]], 6)
    audio = wr.decode_audio(f"{data}/{r['file']}")
    mel = wr.log_mel(fe, audio)
    wins = wr.windows(mel)
    rec = {"id": r["id"], "windows": len(wins), "greedy": [], "texts": {}}
    cand = [("own", r["id"], r["text"])] + [("other", x["id"], x["text"]) for x in others] + [("waking", "waking", waking)]
    for w in wins:
        cross = m.encode(w)
        greedy = pre[r["id"]][0] if len(wins) == 1 and pre.get(r["id"], ([], ""))[1] == "1" else m.greedy(w)
        rec["greedy"].append(forced(cross, greedy) if greedy else [])
        for kind, tid, text in cand:
            rec["texts"].setdefault(kind + ":" + tid, []).append(forced(cross, encode(" " + without_marks(text))))
    out.write(json.dumps(rec) + "\n"); out.flush()
    print(r["id"], len(greedy), flush=True)
