#!/usr/bin/env python3
"""The span forced-score study behind ForcedScoreRule's defaults (Benchmarks/whisper_dua_eval.md).

With the set-up's Python ONNX Runtime pipeline on the same graphs proofkit runs
(Models/proofkit_models/whisper_run.py), on the 92 recordings of ../shared/data/dua_audio:
  encode  CACHE [TRANSCRIPTS.tsv] [ENCODER DECODER]  each 30 s window encoded once (cross K/V kept
          in CACHE as float16) and its greedy tokens (one-window recordings: the TSV's tokens)
  score   CACHE OUT.jsonl [DECODER]  per window: the forced score of the greedy tokens, and for the
          recording's own text, 6 other texts (random.Random(12000 + id)) and the waking du'a the
          alignment of the window's transcript to the text's letters (semi-global edit distance,
          as TextSpanAligner) and the forced score of the words it covers (as
          WhisperTranscriber.spanScores); resumable
  keywords PROOFKIT TRANSCRIPTS.tsv KEYWORDS.json  `proofkit dua check` of each transcript (own
          text, the 6 sampled texts, the waking du'a; key words picked automatically)
  report  OUT.jsonl KEYWORDS.json [MARGIN MIN_TOKENS MIN_COVERAGE] [-v]  the rule's figures per
          half (A even ids, B odd), key words OR span forced score; KEYWORDS.json is a list of
          {"rec","text","accepted"} (keywords).
Set-up venv only (numpy, onnxruntime):  .deps/venv/bin/python Benchmarks/whisper_span_score_study.py ...
"""
import sys, os, json, csv, re, random, numpy as np
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Models"))
from proofkit_models import whisper_run as wr
WAKING = "الْحَمْدُ لِلَّهِ الَّذِي أَحْيَانَا بَعْدَ مَا أَمَاتَنَا وَإِلَيْهِ النُّشُورُ"
data = os.path.join(ROOT, "..", "shared", "data", "dua_audio")
rows = [r for r in csv.DictReader(open(f"{data}/MANIFEST.tsv"), delimiter="\t") if r.get("text_kind","text")=="text"]
G0 = os.path.join(ROOT, "Models", "generated")
tok = json.load(open(f"{G0}/whisper_tokenizer.json"))
encode = wr.TokenEncoder(tok).encode
without_marks = wr.without_marks
tt = wr.TokenText(tok)
FOLD = {"أ":"ا","إ":"ا","آ":"ا","ٱ":"ا","ى":"ي","ة":"ه","ؤ":"و","ئ":"ي"}
def norm_letters(word):
    """letters only (Arabic base letters), harakat dropped, alef/yeh/teh-marbuta folded"""
    s = []
    for ch in word:
        ch = FOLD.get(ch, ch)
        if "\u0621" <= ch <= "\u064a": s.append(ch)
    return "".join(s)
def words_of(text):
    """the text's words: runs of Arabic letters (with harakat) — everything else separates"""
    t = without_marks(text)
    ws = re.findall(r"[\u0621-\u064a\u0671]+", t)
    return [w for w in ws if norm_letters(w)]
def semiglobal(y, x):
    """y fully aligned to a substring of x (edit distance); returns (cost, start, end) in x."""
    m, n = len(y), len(x)
    if m == 0 or n == 0: return (m, 0, 0)
    X = np.frombuffer(x.encode("utf-32-le"), np.uint32); Y = np.frombuffer(y.encode("utf-32-le"), np.uint32)
    def forward(Y, X, free_start):
        D = np.zeros(len(X)+1, np.int64) if free_start else np.arange(len(X)+1, dtype=np.int64)
        ar = np.arange(len(X)+1)
        for i in range(1, len(Y)+1):
            E = np.empty(len(X)+1, np.int64)
            E[0] = D[0] + 1
            E[1:] = np.minimum(D[:-1] + (X != Y[i-1]), D[1:] + 1)
            D = np.minimum.accumulate(E - ar) + ar
        return D
    D = forward(Y, X, True)
    end = int(np.argmin(D)); cost = int(D[end])
    R = forward(Y[::-1], X[:end][::-1], False)
    k = int(np.argmin(R))
    return (cost, end - k, end)
def span_words(transcript, words):
    """the words of `words` an alignment of the transcript's letters covers: (cost, first, last+1, letters)"""
    y = norm_letters(transcript.replace(" ", ""))
    x = ""; owner = []
    for i, w in enumerate(words):
        l = norm_letters(w); x += l; owner += [i]*len(l)
    cost, s, e = semiglobal(y, x)
    if e <= s: return (cost, 0, 0, len(y))
    return (cost, owner[s], owner[e-1]+1, len(y))
def half(id_): return "A" if int(id_) % 2 == 0 else "B"
def others_of(r):
    rng = random.Random(12000 + int(r["id"]))
    return rng.sample([x for x in rows if x["id"] != r["id"]], 6)
def normalise(text):
    return " ".join(norm_letters(w) for w in words_of(text))
def align_words(transcript, words):
    """semi-global alignment with traceback: (cost, first, end, kept word indices: words with at least one aligned letter)"""
    y = norm_letters(transcript.replace(" ", ""))
    x = ""; owner = []
    for i, w in enumerate(words):
        l = norm_letters(w); x += l; owner += [i]*len(l)
    m, n = len(y), len(x)
    if m == 0 or n == 0: return None
    X = np.frombuffer(x.encode("utf-32-le"), np.uint32); Y = np.frombuffer(y.encode("utf-32-le"), np.uint32)
    D = np.zeros((m+1, n+1), np.int64)
    ar = np.arange(n+1)
    for i in range(1, m+1):
        E = np.empty(n+1, np.int64); E[0] = D[i-1][0] + 1
        E[1:] = np.minimum(D[i-1][:-1] + (X != Y[i-1]), D[i-1][1:] + 1)
        D[i] = np.minimum.accumulate(E - ar) + ar
    j = int(np.argmin(D[m][1:])) + 1; end = j; cost = int(D[m][j])
    i = m; kept = set()
    while i > 0 and j > 0:
        if D[i][j] == D[i-1][j-1] + (x[j-1] != y[i-1]): kept.add(owner[j-1]); i -= 1; j -= 1
        elif D[i][j] == D[i-1][j] + 1: i -= 1
        else: j -= 1
    start = j
    if end <= start: return None
    return (cost, owner[start], owner[end-1]+1, sorted(kept), m)


def encode_main(argv):
    G = G0
    C = argv[0]
    TSV = argv[1] if len(argv) > 1 else "/tmp/whisper_dua_transcripts.tsv"
    enc = argv[2] if len(argv) > 2 else f"{G}/whisper_base_encoder.onnx"
    dec = argv[3] if len(argv) > 3 else f"{G}/whisper_base_decoder.onnx"
    import glob
    os.makedirs(C, exist_ok=True)
    pre = {r["id"]: ([int(x) for x in r["tokens"].split()], r["windows"]) for r in csv.DictReader(open(TSV), delimiter="\t")} if os.path.exists(TSV) else {}
    config = json.load(open(f"{G}/whisper_config.json"))
    m = wr.OnnxWhisper(enc, dec, config, threads=2)
    fe = wr.feature_extractor(glob.glob(os.path.join(ROOT, ".deps", "wheels", "faster_whisper*.whl"))[0])
    rows_sorted = sorted(rows, key=lambda r: float(r["duration_s"]))
    for r in rows_sorted:
        meta = f"{C}/{r['id']}.json"
        if os.path.exists(meta): continue
        audio = wr.decode_audio(f"{data}/{r['file']}")
        wins = wr.windows(wr.log_mel(fe, audio))
        greedy = []
        for i, w in enumerate(wins):
            np.savez(f"{C}/{r['id']}_{i}_cross.npz", **{k: v.astype(np.float16) for k, v in m.encode(w).items()})
            if len(wins) == 1 and r["id"] in pre and pre[r["id"]][1] == "1":
                greedy.append(pre[r["id"]][0])
            else:
                greedy.append(m.greedy(w))
        json.dump({"id": r["id"], "windows": len(wins), "greedy": greedy}, open(meta + ".tmp", "w")); os.replace(meta + ".tmp", meta)
        print(r["id"], len(wins), flush=True)

def score_main(argv):
    C = argv[0]; OUT = argv[1]
    dec = argv[2] if len(argv) > 2 else f"{G0}/whisper_base_decoder.onnx"
    ALL = False
    import onnxruntime as ort
    o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.inter_op_num_threads = 1; o.log_severity_level = 3
    D = ort.InferenceSession(dec, o, providers=["CPUExecutionProvider"])
    empty = np.zeros((6,1,8,0,64),np.float32)
    def logsm(x):
        m = x.max(-1, keepdims=True); return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))
    def forced(cross, toks):
        toks = toks + [wr.EOT]
        if len(toks) + 4 > 448: return None
        feeds = {"tokens": np.array([wr.PROMPT + toks[:-1]], np.int64), "offset": np.array([0], np.int64),
                 "past_k": empty, "past_v": empty, **cross}
        logits = D.run(["logits"], feeds)[0][0]
        ls = logsm(logits[3:])
        return [round(float(ls[i, t]), 4) for i, t in enumerate(toks)]
    def joined(words):
        out = []
        for w in words:
            if out and out[-1] in ("و",): out[-1] = out[-1] + w
            else: out.append(w)
        if out and out[-1] == "و": out.pop()
        return " ".join(out)
    done = {json.loads(l)["id"] for l in open(OUT)} if os.path.exists(OUT) else set()
    out = open(OUT, "a")
    byid = {r["id"]: r for r in rows}
    order = sorted(rows, key=lambda r: float(r["duration_s"]))
    import time
    while True:
        pending = [r for r in order if r["id"] not in done]
        if not pending: break
        ready = [r for r in pending if os.path.exists(f"{C}/{r['id']}.json")]
        if not ready: time.sleep(10); continue
        r = ready[0]
        meta = json.load(open(f"{C}/{r['id']}.json"))
        texts = [("own", r["id"], r["text"])] + [("other", x["id"], x["text"]) for x in (rows if ALL else others_of(r)) if x["id"] != r["id"]] + [("waking", "waking", WAKING)]
        rec = {"id": r["id"], "windows": meta["windows"], "greedy": [], "transcripts": [], "texts": {}}
        for i in range(meta["windows"]):
            saved = np.load(f"{C}/{r['id']}_{i}_cross.npz")
            cross = {k: saved[k].astype(np.float32) for k in saved.files}
            g = meta["greedy"][i]
            tr = tt.text(g)
            rec["transcripts"].append(tr)
            rec["greedy"].append(forced(cross, g) if g else [])
            for kind, tid, text in texts:
                words = words_of(text)
                cost, s, e, ylen = span_words(tr, words) if tr.strip() else (0, 0, 0, 0)
                ent = rec["texts"].setdefault(kind + ":" + tid, [])
                d = {"cost": cost, "s": s, "e": e, "ylen": ylen, "nwords": len(words)}
                if False:
                    d["whole"] = forced(cross, encode(" " + without_marks(text)))
                    d["clean"] = forced(cross, encode(" " + joined(words)))
                d["span"] = forced(cross, encode(" " + joined(words[s:e]))) if e > s else None
                ent.append(d)
        out.write(json.dumps(rec, ensure_ascii=False) + "\n"); out.flush(); done.add(r["id"])
        print(r["id"], flush=True)

def report_main(argv):
    S = argv[0]; KW = argv[1]
    sys.argv = [sys.argv[0]] + argv
    recs = {}
    for l in open(S):
        o = json.loads(l); recs[o["id"]] = o
    kw = {(x["rec"], x["text"]): x for x in json.load(open(KW))} if os.path.exists(KW) else {}
    byid = {r["id"]: r for r in rows}
    def stats(rec, key):
        g = 0; gn = 0
        ents = rec["texts"][key]
        sp = 0; sn = 0; covered = set(); cost = 0; ylen = 0
        for w, e in enumerate(ents):
            if not rec["greedy"][w]: continue
            if e["span"] is None: continue
            g += sum(rec["greedy"][w]); gn += len(rec["greedy"][w])
            sp += sum(e["span"]); sn += len(e["span"]); covered |= set(range(e["s"], e["e"]))
            cost += e["cost"]; ylen += e["ylen"]
        if gn == 0 or sn == 0: return None
        return {"ratio": sp / sn - g / gn, "tokens": sn, "cov": len(covered) / max(1, ents[0]["nwords"]), "cer": cost / max(1, ylen)}
    def rows_for(margin, mintok, mincov, maxcer=9):
        out = []
        for rid, rec in recs.items():
            for key in rec["texts"]:
                kind, tid = key.split(":")
                if kind == "other" and normalise(byid[tid]["text"]) == normalise(byid[rid]["text"]): continue
                st = stats(rec, key)
                fs = bool(st and st["ratio"] >= -margin and st["tokens"] >= mintok and st["cov"] >= mincov and st["cer"] <= maxcer)
                k = kw.get((rid, tid), {}).get("accepted", False)
                out.append({"rec": rid, "half": half(rid), "kind": kind, "text": tid, "fs": fs, "kw": k, "st": st})
        return out
    def table(res):
        for h in ("A", "B", "all"):
            sel = [x for x in res if h == "all" or x["half"] == h]
            own = [x for x in sel if x["kind"] == "own"]; oth = [x for x in sel if x["kind"] == "other"]; wk = [x for x in sel if x["kind"] == "waking"]
            f = lambda xs, k: sum(1 for x in xs if ((x["fs"] or x["kw"]) if k == "or" else x[k]))
            print(f"{h}: own {f(own,'or')}/{len(own)} (fs {f(own,'fs')}, kw {f(own,'kw')})  other {f(oth,'or')}/{len(oth)} (fs {f(oth,'fs')})  waking {f(wk,'or')}/{len(wk)} (fs {f(wk,'fs')})")
    if True:
        a = [float(x) for x in sys.argv[3:6]] if len(sys.argv) > 5 else [1.4, 8, 0]
        res = rows_for(*a)
        table(res)
        if "-v" in sys.argv:
            for x in sorted(res, key=lambda x: (x["kind"], x["half"])):
                if x["kind"] == "own" and not (x["fs"] or x["kw"]): print("MISS", x["rec"], x["half"], x["st"], recs[x["rec"]]["transcripts"])
                if x["kind"] != "own" and (x["fs"]): print("FP", x["rec"], x["kind"], x["text"], x["st"])

def keywords_main(argv):
    """keywords PROOFKIT TRANSCRIPTS.tsv OUT.json: `proofkit dua check` of each transcript against
    its own text, the 6 sampled other texts and the waking du'a."""
    PK, TSV, OUT = argv[0], argv[1], argv[2]
    import subprocess, concurrent.futures
    tr = {r["id"]: r["transcript"] for r in csv.DictReader(open(TSV), delimiter="\t")}
    texts = {"texts": [{"name": "hm" + r["id"], "title": r["title"], "text": r["text"], "reading_seconds": max(0.5, float(r["duration_s"]))} for r in rows]}
    tp = OUT + ".texts.json"; json.dump(texts, open(tp, "w"), ensure_ascii=False)
    jobs = [(r["id"], r["id"]) for r in rows] + [(r["id"], x["id"]) for r in rows for x in others_of(r)] + [(r["id"], "waking") for r in rows]
    def check(job):
        rid, tid = job
        name = "waking" if tid == "waking" else "hm" + tid
        p = subprocess.run([PK, "dua", "check", tr[rid] or " ", "--text", name, "--texts", tp, "--json"], capture_output=True, text=True)
        o = json.loads(p.stdout)
        return {"rec": rid, "text": tid, "accepted": o["verdict"] == "accepted", "heard": o["heard_count"], "required": o["required"]}
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        res = list(pool.map(check, jobs))
    json.dump(res, open(OUT, "w"))


if __name__ == "__main__":
    {"encode": encode_main, "score": score_main, "keywords": keywords_main, "report": report_main}[sys.argv[1]](sys.argv[2:])
