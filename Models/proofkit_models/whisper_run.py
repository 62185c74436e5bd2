"""Running Whisper in Python, for the build's checks, Models/study_whisper.py and the benchmark peer:
the log-mel front end (faster-whisper's own numpy FeatureExtractor, read from its pinned wheel),
greedy decoding with the ONNX graphs (ONNX Runtime) and with CTranslate2 (the reference), and the
byte-level BPE decoding of token ids. Set-up only; proofkit itself does all of this in Swift.
"""
from __future__ import annotations

import json
import re
import subprocess
import types
import zipfile

import numpy as np

SAMPLE_RATE = 16000
FRAMES = 3000  # 30 s of 10 ms frames
SOT, EOT = 50258, 50257
AR, TRANSCRIBE, NO_TIMESTAMPS = 50272, 50359, 50363
FIRST_TIMESTAMP = 50364
PROMPT = [SOT, AR, TRANSCRIBE, NO_TIMESTAMPS]
MAX_NEW_TOKENS = 224  # per 30 s window (half of the 448 positions, as whisper's sample_len)
# The encoder's outputs and the decoder's inputs: each decoder layer's cross-attention keys and values.
CROSS = [f"cross_{kind}_{i}" for kind in "kv" for i in range(6)]


def feature_extractor(faster_whisper_wheel: str):
    """faster-whisper's FeatureExtractor class, executed from the wheel's feature_extractor.py
    (numpy only: the package itself is not installed, its __init__ imports av)."""
    src = zipfile.ZipFile(faster_whisper_wheel).read("faster_whisper/feature_extractor.py").decode()
    mod = types.ModuleType("faster_whisper_feature_extractor")
    exec(compile(src, "faster_whisper/feature_extractor.py", "exec"), mod.__dict__)
    return mod.FeatureExtractor()


def log_mel(fe, audio: np.ndarray) -> np.ndarray:
    """faster-whisper's features of a whole clip, as its transcribe() makes them: the clip plus 160
    zero samples, log-mel [80, frames], the last frame dropped ("content frames")."""
    return fe(audio.astype(np.float32))[:, :-1]


def windows(mel: np.ndarray) -> list[np.ndarray]:
    """The 30 s windows of a clip's features, each zero-padded (in the log-mel domain, as
    faster-whisper's pad_or_trim) to [1, 80, 3000] float32."""
    out = []
    for s in range(0, max(mel.shape[1], 1), FRAMES):
        w = mel[:, s:s + FRAMES]
        w = np.pad(w, ((0, 0), (0, FRAMES - w.shape[1])))
        out.append(w[None].astype(np.float32))
    return out


def decode_audio(path: str) -> np.ndarray:
    """Any audio file -> 16 kHz mono float32, by ffmpeg (as faster-whisper's decode_audio does with
    PyAV: resampled by libswresample)."""
    raw = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1",
                          "-ar", str(SAMPLE_RATE), "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0


class Suppression:
    """Tokens masked at every step (config suppress_ids: the non-speech symbols and the task/special
    tokens) and, at the first generated step only, suppress_ids_begin (the blank " " and
    <|endoftext|>), as CTranslate2 and faster-whisper do with suppress_tokens=[-1],
    suppress_blank=True."""

    def __init__(self, config: dict):
        self.always = np.array(sorted(set(config["suppress_ids"])), np.int64)
        self.begin = np.array(sorted(set(config["suppress_ids_begin"])), np.int64)

    def apply(self, logits: np.ndarray, first: bool) -> np.ndarray:
        x = logits.copy()
        x[self.always] = -np.inf
        if first:
            x[self.begin] = -np.inf
        return x


class OnnxWhisper:
    """The encoder and decoder graphs in ONNX Runtime, greedy decoding with the KV cache."""

    def __init__(self, encoder: str | bytes, decoder: str | bytes, config: dict, threads: int = 2,
                 lean: bool = False):
        """lean: no memory arena, no memory patterns, no weight pre-packing (lower peak RSS)."""
        import onnxruntime as ort
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        o.inter_op_num_threads = 1
        o.log_severity_level = 3
        if lean:
            o.enable_cpu_mem_arena = False
            o.enable_mem_pattern = False
            o.add_session_config_entry("session.disable_prepacking", "1")
        self.enc = ort.InferenceSession(encoder, o, providers=["CPUExecutionProvider"])
        self.dec = ort.InferenceSession(decoder, o, providers=["CPUExecutionProvider"])
        self.suppress = Suppression(config)

    def encode(self, mel: np.ndarray) -> dict:
        """Each decoder layer's cross-attention keys and values, by input name (cross_k_0...)."""
        return dict(zip(CROSS, self.enc.run(CROSS, {"mel": mel})))

    def step(self, tokens: list[int], offset: int, past, cross: dict):
        feeds = {"tokens": np.array([tokens], np.int64), "offset": np.array([offset], np.int64),
                 "past_k": past[0], "past_v": past[1], **cross}
        logits, pk, pv = self.dec.run(["logits", "present_k", "present_v"], feeds)
        return logits[0], (pk, pv)

    def greedy(self, mel: np.ndarray, max_new: int = MAX_NEW_TOKENS, keep_logits: int = 0):
        """Greedy tokens (without the prompt and <|endoftext|>) of one window; with keep_logits,
        also the raw logits of the first keep_logits steps (each [51865])."""
        cross = self.encode(mel)
        empty = np.zeros((6, 1, 8, 0, 64), np.float32)
        logits, past = self.step(PROMPT, 0, (empty, empty), cross)
        last = logits[-1]
        out, kept, offset = [], [], len(PROMPT)
        for i in range(max_new):
            if i < keep_logits:
                kept.append(last)
            t = int(np.argmax(self.suppress.apply(last, i == 0)))
            if t == EOT:
                break
            out.append(t)
            if offset + 1 >= 448:
                break
            logits, past = self.step([t], offset, past, cross)
            offset += 1
            last = logits[-1]
        return (out, kept) if keep_logits else out

    def transcribe_tokens(self, mel: np.ndarray) -> list[int]:
        toks = []
        for w in windows(mel):
            toks += self.greedy(w)
        return toks


class Ct2Whisper:
    """CTranslate2's Whisper on the same model.bin (the reference), greedy (beam 1), Arabic,
    without timestamps, suppress_tokens=[-1], suppress_blank."""

    def __init__(self, model_dir: str, compute_type: str = "float32", threads: int = 2):
        import ctranslate2
        self.ct2 = ctranslate2
        self.model = ctranslate2.models.Whisper(model_dir, device="cpu", compute_type=compute_type,
                                                intra_threads=threads, inter_threads=1)

    def encode(self, mel: np.ndarray) -> np.ndarray:
        return np.array(self.model.encode(self.ct2.StorageView.from_array(mel), to_cpu=True))

    def greedy(self, mel: np.ndarray, max_new: int = MAX_NEW_TOKENS, logits: int = 0):
        """Greedy tokens (no prompt, no <|endoftext|>); with logits=k also the logits of the first
        k steps as CTranslate2 reports them (suppressed tokens at float32's lowest), from a second,
        k-token generation on the same encoder output (return_logits_vocab slows every step)."""
        enc = self.model.encode(self.ct2.StorageView.from_array(mel), to_cpu=False)
        r = self.model.generate(enc, [PROMPT], beam_size=1, max_length=len(PROMPT) + max_new,
                                suppress_blank=True, suppress_tokens=[-1])[0]
        toks = [t for t in r.sequences_ids[0] if t != EOT]
        if not logits:
            return toks
        r = self.model.generate(enc, [PROMPT], beam_size=1, max_length=len(PROMPT) + logits,
                                suppress_blank=True, suppress_tokens=[-1], return_logits_vocab=True)[0]
        return toks, [np.array(x) for x in r.logits[0]]

    def transcribe_tokens(self, mel: np.ndarray) -> list[int]:
        toks = []
        for w in windows(mel):
            toks += self.greedy(w)
        return toks


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte <-> printable character table used by byte-level BPE."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


class TokenText:
    """Token ids -> text with tokenizer.json's vocabulary (byte-level); special tokens dropped."""

    def __init__(self, tokenizer_json: dict):
        self.vocab = {i: s for s, i in tokenizer_json["model"]["vocab"].items()}
        self.special = {a["id"] for a in tokenizer_json["added_tokens"] if a.get("special")}
        self.byte_of = {c: b for b, c in bytes_to_unicode().items()}

    def text(self, ids: list[int]) -> str:
        s = "".join(self.vocab.get(i, "") for i in ids if i not in self.special and i < FIRST_TIMESTAMP)
        return bytes(self.byte_of[c] for c in s).decode("utf-8", errors="replace").strip()


class TokenEncoder:
    """Text -> token ids with tokenizer.json's byte-level BPE (GPT-2 pre-tokenisation and merges),
    for forced scoring of an expected text; no special tokens added."""

    PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")

    def __init__(self, tokenizer_json: dict):
        self.vocab = tokenizer_json["model"]["vocab"]
        merges = tokenizer_json["model"]["merges"]
        self.ranks = {tuple(m.split(" ") if isinstance(m, str) else m): i for i, m in enumerate(merges)}
        self.char_of = bytes_to_unicode()

    def _bpe(self, word: str) -> list[str]:
        parts = list(word)
        while len(parts) > 1:
            best = min((self.ranks.get((parts[i], parts[i + 1]), 1e18), i) for i in range(len(parts) - 1))
            if best[0] == 1e18:
                break
            i = best[1]
            parts = parts[:i] + [parts[i] + parts[i + 1]] + parts[i + 2:]
        return parts

    def encode(self, text: str) -> list[int]:
        out = []
        for piece in self.PATTERN.findall(text):
            word = "".join(self.char_of[b] for b in piece.encode())
            out += [self.vocab[p] for p in self._bpe(word)]
        return out


def without_marks(text: str) -> str:
    """`text` without harakat, tatweel, Quranic annotation marks, joiners and the brackets of an
    ayah, spaces collapsed: what the recogniser writes for what a reader says."""
    out, last = [], True
    for ch in text:
        v = ord(ch)
        if (0x64B <= v <= 0x65F or v in (0x670, 0x640) or 0x610 <= v <= 0x61A or 0x6D6 <= v <= 0x6ED
                or 0x8D3 <= v <= 0x8FF or v in (0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF)):
            continue
        if ch in "()\uFD3E\uFD3F":
            continue
        if ch.isspace():
            if not last:
                out.append(" ")
            last = True
            continue
        out.append(ch)
        last = False
    return "".join(out).strip()


def load_json_bytes(b: bytes) -> dict:
    return json.loads(b.decode("utf-8"))
