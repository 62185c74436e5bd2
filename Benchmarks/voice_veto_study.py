#!/usr/bin/env python3
"""The study behind the energy gate's speech-likeness veto (VoiceGate's SpeechLikenessVeto), and the
generator of its weights: can a small learned check tell the energy gate's voiced stretches of
pitched drones (a bee, a mosquito, a steam engine, bubbling water) from reading over them?

Issue 14 asks `--vad energy` (the fallback without ONNX Runtime) for at most 1.0 s of "voice" in
noise alone. Hand-made cues (steady pitch, level span, spectral flux, a frozen pitch) did not
separate a drone alone from a reading over it (VOICE_GATE_EVAL.md). This study asks whether a
learned combination of cheap, streamable features can, used only as a veto on the energy gate's
own segments (it can remove voiced time, never add it).

The veto:
- per 10 ms frame (32 ms Hann window, 512 points, zero-padded to 1024): 16 log band levels from
  100 Hz to 4 kHz (geometric edges); each band's level above its floor (the 10th percentile of
  the last 3 s, sampled every 5th frame), clipped to 0-40 dB; the spectral shape (band levels
  minus their mean); a pitch strength (the largest autocorrelation, corrected for the window,
  of the spectrum below 1 kHz at lags of 2.5-14.5 ms, i.e. 69-400 Hz, over the lag-0 value);
  the frame's level;
- context: those 34 values at -200, -100, -50, 0, +50, +100, +200 ms, and the spread of the
  mean band level over +-150 ms (239 inputs: a fixed 200 ms look-ahead);
- a 239-32-16-1 multilayer perceptron (ReLU, sigmoid; weight matrices rounded to float16 after
  training, as they ship), trained here with Adam (seed 0, 6 epochs,
  positives weighted by sqrt(negatives/positives)) on the noises of the --train splits (default
  the tuning split), each mixed with the TUNING speech only: every frame of the noise-alone files
  and every third frame of the mixtures, labelled by Silero on the clean speech (the evaluation's
  own reference). The shipped weights: --train tune,heldout,heldout3,heldout4,heldout5,heldout6,heldout7
  (114 sources; heldout8 was kept back to measure them);
- its probability is averaged over +-150 ms, and an energy-gate frame is kept when the average
  is at least the threshold. The threshold is chosen on the training files only: the smallest of
  0.1, 0.2, 0.3, 0.4 that leaves every training noise alone at <= 0.5 s (0.4 for the shipped
  weights).

Reported per --splits split, with its own speech (VOICE_GATE_EVAL.md has the figures; a split also
in --train was trained on): the energy gate alone (`proofkit voice
--vad energy --no-veto`), the energy gate with this veto, and the network alone (its probability through
Silero's own hysteresis: 0.5 / 0.35, 100 ms silence, 250 ms speech) as a check on what the
energy gate brings. Error = |voiced - reference| / reference; noise alone in seconds.

Usage: python3 Benchmarks/voice_veto_study.py [--binary .build/release/proofkit]
         [--train tune,...] [--splits tune,heldout,heldout3,heldout4] [--work /tmp/proofkit-voice-eval]
         [--out study.json]
         [--swift Sources/Engines/VoiceGate/SpeechLikenessVetoWeights.swift]
         [--parity Tests/TestSupport/Fixtures/audio/vad_speech_ar.wav Tests/.../speech_likeness_parity.json]
--swift writes the trained network as Swift source (the one proofkit ships is
Sources/Engines/VoiceGate/SpeechLikenessVetoWeights.swift, seed 0), --parity the network's output on a
fixture for the Swift port's parity test. Needs what voice_gate_eval.py needs (numpy, ffmpeg, the
Debian noises, ../shared) and a built proofkit with ONNX Runtime and the Silero model (for the
reference). About 15 minutes on 2 cores.
"""
import argparse
import base64
import json
import os
import subprocess
import sys
import textwrap
import wave
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import voice_gate_eval as evaluation  # noqa: E402

RATE, HOP, WINDOW, BANDS = 16000, 160, 512, 16
FREQS = np.fft.rfftfreq(WINDOW, 1 / RATE)
HANN = np.hanning(WINDOW)
EDGES = np.geomspace(100, 4000, BANDS + 1)
BAND_MATRIX = np.array([(FREQS >= EDGES[b]) & (FREQS < EDGES[b + 1]) for b in range(BANDS)], dtype=np.float64)
WINDOW_AC = np.fft.irfft(np.abs(np.fft.rfft(HANN, 2 * WINDOW)) ** 2)[:WINDOW]
WINDOW_AC /= WINDOW_AC[0]
LAGS = np.arange(40, 233)  # 400 Hz .. 69 Hz at 16 kHz
OFFSETS = (-20, -10, -5, 0, 5, 10, 20)  # frames
THRESHOLDS = (0.1, 0.2, 0.3, 0.4)
SMOOTH = 31  # frames (+-150 ms)


def frame_features(x):
    """34 values per 10 ms frame (see the module doc)."""
    frames = (len(x) - WINDOW) // HOP + 1
    index = np.arange(WINDOW)[None, :] + HOP * np.arange(frames)[:, None]
    power = np.abs(np.fft.rfft(x[index] * HANN, 2 * WINDOW, axis=1)) ** 2
    bins = power[:, ::2][:, : len(FREQS)]
    level = 10 * np.log10(bins @ BAND_MATRIX.T + 1e-10)
    samples = level[::5]
    padded = np.concatenate([np.repeat(samples[:1], 59, 0), samples], 0)
    floor = np.percentile(sliding_window_view(padded, 60, axis=0), 10, axis=2)[np.arange(frames) // 5]
    above = np.clip(level - floor, 0, 40)
    shape = level - level.mean(1, keepdims=True)
    low = power.copy()
    low[:, np.fft.rfftfreq(2 * WINDOW, 1 / RATE) > 1000] = 0
    ac = np.fft.irfft(low, 2 * WINDOW, axis=1)[:, :WINDOW]
    strength = np.clip((ac[:, LAGS] / WINDOW_AC[LAGS]).max(1) / np.maximum(ac[:, 0], 1e-20), 0, 1)
    total = np.clip(10 * np.log10(bins.sum(1) + 1e-10) + 90, 0, 90) / 10
    return np.concatenate([above, shape, strength[:, None], total[:, None]], 1)


def stacked(x):
    f = frame_features(x)
    n = len(f)
    parts = [f[np.clip(np.arange(n) + o, 0, n - 1)] for o in OFFSETS]
    mean_band = np.pad(f[:, :BANDS].mean(1), SMOOTH // 2, mode="edge")
    parts.append(sliding_window_view(mean_band, SMOOTH).std(1)[:, None])
    return np.concatenate(parts, 1).astype(np.float32)


def features_of(item):
    with wave.open(item["file"]) as w:
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    return stacked(pcm.astype(np.float64) / 32768)


def labels_of(item, speeches, frames):
    y = np.zeros(frames, np.float32)
    if item["speech"]:
        for a, b in speeches[item["speech"]]:
            y[int((a + 1.5) * 100): int((b + 1.5) * 100)] = 1
    return y


class Network:
    def __init__(self, inputs, seed=0, hidden=(32, 16)):
        rng = np.random.default_rng(seed)
        sizes = (inputs,) + hidden + (1,)
        self.params = []
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            scale = np.sqrt((2 if i < len(hidden) else 1) / a)
            self.params += [rng.normal(0, scale, (a, b)).astype(np.float32), np.zeros(b, np.float32)]
        self.mean = np.zeros(inputs, np.float32)
        self.std = np.ones(inputs, np.float32)

    def forward(self, x):
        h = (x - self.mean) / self.std
        layers = []
        for i in range(0, len(self.params) - 2, 2):
            h = np.maximum(h @ self.params[i] + self.params[i + 1], 0)
            layers.append(h)
        z = (h @ self.params[-2] + self.params[-1])[:, 0]
        return 1 / (1 + np.exp(-z)), layers

    def quantize(self):
        """Rounds the weight matrices to float16, as they ship (biases and scaling stay float32)."""
        for i in range(0, len(self.params), 2):
            self.params[i] = self.params[i].astype(np.float16).astype(np.float32)

    def train(self, x, y, epochs=6, batch=2048, rate=1e-3, decay=1e-4, seed=0):
        rng = np.random.default_rng(seed)
        self.mean = x.mean(0)
        self.std = x.std(0) + 1e-3
        positive = (1 - y.mean()) / y.mean()
        m = [np.zeros_like(p) for p in self.params]
        v = [np.zeros_like(p) for p in self.params]
        step = 0
        for epoch in range(epochs):
            order = rng.permutation(len(x))
            loss = 0.0
            for start in range(0, len(x), batch):
                i = order[start: start + batch]
                xb, yb = x[i], y[i]
                p, layers = self.forward(xb)
                w = np.where(yb > 0, positive ** 0.5, 1.0).astype(np.float32)
                loss += float((w * -(yb * np.log(p + 1e-7) + (1 - yb) * np.log(1 - p + 1e-7))).sum())
                g = (w * (p - yb) / len(i))[:, None]
                inputs = [(xb - self.mean) / self.std] + layers
                grads = [None] * len(self.params)
                for k in range(len(self.params) // 2 - 1, -1, -1):
                    grads[2 * k] = inputs[k].T @ g + (decay * self.params[2 * k] if k < len(self.params) // 2 - 1 else 0)
                    grads[2 * k + 1] = g.sum(0)
                    if k > 0:
                        g = (g @ self.params[2 * k].T) * (inputs[k] > 0)
                step += 1
                for k, grad in enumerate(grads):
                    m[k] = 0.9 * m[k] + 0.1 * grad
                    v[k] = 0.999 * v[k] + 0.001 * grad ** 2
                    self.params[k] -= rate * (m[k] / (1 - 0.9 ** step)) / (np.sqrt(v[k] / (1 - 0.999 ** step)) + 1e-8)
            print(f"epoch {epoch + 1}/{epochs}: loss {loss / len(x):.4f}", file=sys.stderr, flush=True)


def energy_alone(binary, path):
    """The energy gate's own voiced seconds and segments (`--no-veto`: without the veto this study built)."""
    out = subprocess.run([binary, "voice", path, "--json", "--vad", "energy", "--no-veto", "--recognizer", "none"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{path}: exit {out.returncode}: {out.stderr.strip()}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["voiced_seconds"], result["voiced_segments"]


def hysteresis_seconds(p, on=0.5, off=0.35, silence=10, speech=25):
    total, start, last = 0, None, 0
    for i, q in enumerate(p):
        if start is None:
            if q >= on:
                start = last = i
        elif q >= off:
            last = i
        elif i - last > silence:
            total += (last + 1 - start) if last + 1 - start >= speech else 0
            start = None
    if start is not None and last + 1 - start >= speech:
        total += last + 1 - start
    return total / 100


def vetoed_seconds(segments, smoothed, threshold):
    kept = 0
    for a, b in segments:
        kept += int(np.sum(smoothed[int(a * 100): int(b * 100)] >= threshold))
    return kept / 100


def summary(rows, key):
    alone = sorted(((r[key], r["noise"]) for r in rows if r["speech"] is None), reverse=True)
    out = {"noise_alone_worst": [[round(s, 2), n] for s, n in alone[:3]]}
    for snr in evaluation.SNRS:
        errors = sorted(100 * abs(r[key] - r["reference"]) / r["reference"] for r in rows if r["snr"] == snr)
        if errors:
            out[f"{snr}dB"] = {"median_pct": round(float(np.median(errors)), 1), "worst_pct": round(errors[-1], 1)}
    return out


def band_bins():
    """The 512-point bins of each band, as half-open index ranges."""
    ranges = []
    for row in BAND_MATRIX:
        k = np.flatnonzero(row)
        ranges.append((int(k[0]), int(k[-1]) + 1))
        assert np.all(np.diff(k) == 1)
    return ranges


def write_swift(network, threshold, path, trained_on):
    """The trained veto as Swift source: the weight matrices as little-endian float16 and the rest
    as float32, base64 in string literals (a string literal compiles at once, where a literal array
    of 8,000 floats would not; float16 keeps the file under the house's 40 KB)."""
    def encoded(a, dtype):
        text = base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode()
        lines = [text[i: i + 96] for i in range(0, len(text), 96)]
        return '"""\n' + "\n".join("        " + line for line in lines) + '\n        """'
    sizes = [int(network.params[i].shape[1]) for i in range(0, len(network.params), 2)]
    parts = [("mean", network.mean, "<f4"), ("deviation", network.std, "<f4")]
    for i in range(0, len(network.params), 2):
        parts += [(f"weights{i // 2 + 1}", network.params[i], "<f2"), (f"biases{i // 2 + 1}", network.params[i + 1], "<f4")]
    where = "the tuning split" if trained_on == ["tune"] else \
        "the noises of splits " + ", ".join(trained_on) + " with the tuning speech"
    out = ["// Generated by Benchmarks/voice_veto_study.py --swift (seed 0)."]
    out += ["// " + line for line in textwrap.wrap(f"Trained on {where}.", 100)]
    out += [
           "// Do not edit: rerun the study to change it.", "",
           "extension SpeechLikenessVeto {",
           "    /// The study's threshold on the smoothed speech likeness (0...1), chosen on the training noises",
           "    /// (the smallest of 0.1-0.4 that leaves every one of them alone at <= 0.5 s).",
           f"    public static let trainedThreshold: Float = {threshold}",
           f"    /// Layer sizes after the {network.mean.size} inputs.",
           f"    static let layerSizes = {sizes}",
           "    /// Each band's 512-point FFT bins, as half-open ranges (100 Hz to 4 kHz, geometric edges).",
           "    static let bandBins: [Range<Int>] = ["]
    ranges = [f"{a}..<{b}" for a, b in band_bins()]
    out += ["        " + ", ".join(ranges[i: i + 8]) + "," for i in range(0, len(ranges), 8)]
    out.append("    ]")
    for name, array, dtype in parts:
        kind = "float16" if dtype == "<f2" else "float32"
        out.append(f"    /// `{name}`: {' x '.join(map(str, array.shape))} little-endian {kind}, row-major, base64.")
        out.append(f"    static let {name}{kind.capitalize()} = {encoded(array, dtype)}")
    out.append("}")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_parity(network, threshold, wav, path):
    """The study's features' probabilities for one fixture, for the Swift port's parity test."""
    with wave.open(wav) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64) / 32768
    p, _ = network.forward(stacked(x))
    smoothed = np.convolve(p, np.ones(SMOOTH) / SMOOTH, "same")
    with open(path, "w") as f:
        json.dump({"file": os.path.basename(wav), "threshold": threshold,
                   "probabilities": [round(float(v), 5) for v in p],
                   "smoothed": [round(float(v), 5) for v in smoothed]}, f)


def train(args):
    """Trains the network on the --train noise splits mixed with the tuning speech, then picks the
    threshold on those same files: the smallest that leaves every noise alone at <= 0.5 s."""
    xs, ys, alone = [], [], []
    for split in args.train.split(","):
        items, speeches = evaluation.build(args.work, split, args.binary, speech="tune")
        reference = {name: segments for name, _, _, segments, _ in speeches}
        print(f"train {split}: {len(items)} files: features", file=sys.stderr, flush=True)
        with ProcessPoolExecutor(2) as pool:
            features = list(pool.map(features_of, items, chunksize=4))
        for it, f in zip(items, features):
            step = 1 if it["speech"] is None else 3
            xs.append(f[::step])
            ys.append(labels_of(it, reference, len(f))[::step])
            if it["speech"] is None:
                alone.append((it, f))
        del features
    x, y = np.concatenate(xs), np.concatenate(ys)
    del xs, ys
    print(f"training on {len(x)} frames ({100 * y.mean():.0f} % speech)", file=sys.stderr, flush=True)
    network = Network(x.shape[1])
    network.train(x, y)
    network.quantize()
    del x, y
    with ThreadPoolExecutor(2) as pool:
        energy = list(pool.map(lambda pair: energy_alone(args.binary, pair[0]["file"]), alone))
    worst = {}
    for (it, f), (_, segments) in zip(alone, energy):
        smoothed = np.convolve(network.forward(f)[0], np.ones(SMOOTH) / SMOOTH, "same")
        for t in THRESHOLDS:
            worst[t] = max(worst.get(t, 0.0), vetoed_seconds(segments, smoothed, t))
    threshold = next((t for t in THRESHOLDS if worst[t] <= 0.5), THRESHOLDS[-1])
    print(f"threshold chosen on the training noises: {threshold} (worst noise alone per threshold: {worst})",
          file=sys.stderr, flush=True)
    if args.swift:
        write_swift(network, threshold, args.swift, args.train.split(","))
    if args.parity:
        write_parity(network, threshold, *args.parity)
    return network, threshold


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/release/proofkit")
    parser.add_argument("--splits", default="tune,heldout,heldout3,heldout4")
    parser.add_argument("--train", default="tune",
                        help="noise splits to train on, each mixed with the TUNING speech (default: tune)")
    parser.add_argument("--work", default="/tmp/proofkit-voice-eval")
    parser.add_argument("--out")
    parser.add_argument("--swift", help="write the trained veto as Swift source here")
    parser.add_argument("--parity", nargs=2, metavar=("WAV", "JSON"),
                        help="write the network's probabilities on WAV (16 kHz mono) to JSON")
    args = parser.parse_args()
    splits = args.splits.split(",")
    report = {}
    network, threshold = train(args)
    report["trained_on"] = args.train.split(",")
    for split in splits:
        items, speeches = evaluation.build(args.work, split, args.binary)
        reference = {name: segments for name, _, _, segments, _ in speeches}
        print(f"{split}: {len(items)} files: energy gate", file=sys.stderr, flush=True)
        with ThreadPoolExecutor(2) as pool:
            energy = list(pool.map(lambda it: energy_alone(args.binary, it["file"]), items))
        print(f"{split}: features", file=sys.stderr, flush=True)
        with ProcessPoolExecutor(2) as pool:
            features = list(pool.map(features_of, items, chunksize=4))
        rows = []
        for it, f, (seconds, segments) in zip(items, features, energy):
            p, _ = network.forward(f)
            smoothed = np.convolve(p, np.ones(SMOOTH) / SMOOTH, "same")
            rows.append({"noise": it["noise"], "speech": it["speech"], "snr": it["snr"], "reference": it["reference"],
                         "energy": seconds, "network": hysteresis_seconds(p),
                         "energy+veto": vetoed_seconds(segments, smoothed, threshold)})
        report[split] = {key: summary(rows, key) for key in ("energy", "energy+veto", "network")}
        report[split]["per_noise_alone"] = {r["noise"]: {"energy": r["energy"], "energy+veto": r["energy+veto"]}
                                            for r in rows if r["speech"] is None}
        for key in ("energy", "energy+veto", "network"):
            s = report[split][key]
            figures = " | ".join(f"{snr} dB {s[f'{snr}dB']['median_pct']} / {s[f'{snr}dB']['worst_pct']} %"
                                 for snr in evaluation.SNRS if f"{snr}dB" in s)
            print(f"{split:9} {key:12} alone worst {s['noise_alone_worst']} | {figures}", flush=True)
    report["threshold"] = threshold
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
