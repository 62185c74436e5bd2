#!/usr/bin/env python3
"""Transcribes recordings with the ONNX Whisper graphs of Models/generated (ONNX Runtime in Python,
the same greedy decoding as the build's checks) and writes a TSV, so the du'a matcher
(`proofkit dua check`) can be evaluated on real transcripts. Evaluation only: nothing is committed.

    .deps/venv/bin/python Models/study_whisper.py                 # all of ../shared/data/dua_audio
    .deps/venv/bin/python Models/study_whisper.py --out /tmp/x.tsv --limit 5
    .deps/venv/bin/python Models/study_whisper.py --decoder Models/generated/other_decoder.onnx
    .deps/venv/bin/python Models/study_whisper.py --ct2 int8      # faster-whisper's engine instead

Audio is decoded by ffmpeg to 16 kHz mono; features by faster-whisper's FeatureExtractor (read from
its pinned wheel in .deps/wheels); each 30 s window is decoded on its own with the prompt
<|startoftranscript|><|ar|><|transcribe|><|notimestamps|>, greedy, at most 224 tokens.

TSV columns: file, id, duration_s (MANIFEST), seconds (wall time of features+encoder+decoder),
windows, tokens (space-separated ids), transcript, text (the MANIFEST's text).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    gen = os.path.join(HERE, "generated")
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data", "dua_audio"),
                    help="folder with MANIFEST.tsv and the recordings (default ../shared/data/dua_audio)")
    ap.add_argument("--encoder", default=os.path.join(gen, "whisper_base_encoder.onnx"))
    ap.add_argument("--decoder", default=os.path.join(gen, "whisper_base_decoder.onnx"))
    ap.add_argument("--ct2", choices=["int8", "float32"], help="use CTranslate2 (faster-whisper's engine) on "
                    "model.bin instead of the ONNX graphs; needs --model-dir")
    ap.add_argument("--model-dir", help="folder with model.bin, config.json, vocabulary.txt (for --ct2)")
    ap.add_argument("--wheels", default=os.environ.get("PROOFKIT_WHEELS", os.path.join(ROOT, ".deps", "wheels")))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--limit", type=int, default=0, help="only the first N recordings")
    ap.add_argument("--out", default="/tmp/whisper_dua_transcripts.tsv")
    a = ap.parse_args(argv)

    from proofkit_models import whisper_run as wr
    from proofkit_models.build import WHEELS
    cfg = json.load(open(os.path.join(gen, "whisper_config.json")))
    text_of = wr.TokenText(json.load(open(os.path.join(gen, "whisper_tokenizer.json"))))
    fe = wr.feature_extractor(os.path.join(a.wheels, WHEELS["faster_whisper"]))
    if a.ct2:
        if not a.model_dir:
            ap.error("--ct2 needs --model-dir")
        engine = wr.Ct2Whisper(a.model_dir, a.ct2, a.threads)
        label = f"CTranslate2 {a.ct2}"
    else:
        engine = wr.OnnxWhisper(a.encoder, a.decoder, cfg, a.threads)
        label = f"ONNX {os.path.basename(a.encoder)} + {os.path.basename(a.decoder)}"
    with open(os.path.join(a.data, "MANIFEST.tsv"), newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if a.limit:
        rows = rows[:a.limit]
    tmp = a.out + ".part"
    total_audio = total_time = 0.0
    t_start = time.time()
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(["file", "id", "duration_s", "seconds", "windows", "tokens", "transcript", "text"])
        for i, r in enumerate(rows, 1):
            audio = wr.decode_audio(os.path.join(a.data, r["file"]))
            t = time.time()
            mel = wr.log_mel(fe, audio)
            wins = wr.windows(mel)
            toks = engine.transcribe_tokens(mel)
            dt = time.time() - t
            total_audio += len(audio) / 16000
            total_time += dt
            text = text_of.text(toks)
            w.writerow([r["file"], r["id"], r["duration_s"], f"{dt:.3f}", len(wins), " ".join(map(str, toks)),
                        text, r["text"]])
            f.flush()
            print(f"[{i}/{len(rows)}] {r['file']} {len(audio) / 16000:.1f} s in {dt:.2f} s: {text}", file=sys.stderr)
    os.replace(tmp, a.out)
    print(f"{label}: {len(rows)} recordings, {total_audio:.0f} s of audio transcribed in {total_time:.0f} s "
          f"(wall {time.time() - t_start:.0f} s, {a.threads} threads) -> {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
