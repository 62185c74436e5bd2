#!/usr/bin/env python3
"""proofkit's benchmark suite: every benchmark, side by side with its named peer, in one run.

    Benchmarks/run_all.sh [--rounds 5] [--runs 100] [--trim-runs 5] [--quick] [--output Benchmarks/REPORT.md]

Writes a markdown report (default Benchmarks/REPORT.md) and prints where it is. Sections:

0. `proofkit bench --model all --json` with its defaults (the 2-minute acceptance), whole table.
1. Inference, EfficientNet-Lite0 int8 and fp32 at 1 and 2 threads: `proofkit bench` (one child
   process per configuration) against Python onnxruntime (Benchmarks/python/photo_peer.py
   --mode stages) at the same thread count and spinning setting, and against the suite's own
   figure (`proofkit-bench --filter inference.`). The three alternate within every round (the
   order flips each round), so machine noise hits them alike; the ratio is the median over rounds
   of the per-round ratios. Peak RSS of the same processes.
2. Photo decode + preprocess against Pillow + numpy (Benchmarks/image_preprocess_bench.py).
3. One photo end to end in a warm process (`proofkit bench --image`) against the peer's stages.
4. The whole `proofkit mat PHOTO` process against the whole Python script (photo_peer.py
   --mode once), wall time and peak RSS (wait4), alternating: Benchmarks/mat_vs_python.py when
   it is there (the photo-proof verb's own comparison), else the same measured here.
5. Engines from proofkit-bench: the voice gate (peer: a plain frame-RMS loop), Silero, the du'a
   matcher, the squat counter, against their targets.
5b. `proofkit squat FILE` end to end against a Python json.loads loop over the same pose lines
   (Benchmarks/squat_read_bench.py): frames/s by wall and CPU time, peak RSS at two lengths.
6. `proofkit trim` against sox and ffmpeg (Benchmarks/trim_vs_peers.sh).
7. `proofkit transcribe` against faster-whisper (CTranslate2 int8, the same Whisper base model.bin,
   the same threads) on the same real Arabic clips, alternating
   (Benchmarks/whisper_vs_faster_whisper.py): transcribe time, time per 10 s of speech, real-time
   factor, peak RSS of the whole processes; targets: time <= 1.5x, peak RSS <= 1x.
8. Resampling 44.1 and 48 kHz to 16 kHz: proofkit's SincResampler against sox's `rate` and libsoxr,
   CPU time and quality (Benchmarks/resampler_bench.py); target: conversion CPU <= 1.0x sox.
9. `proofkit voice REC` against its Python peer, Silero on onnxruntime plus faster-whisper int8 with
   2 threads, on the same du'a recordings (Benchmarks/voice_vs_python.py); targets: wall time
   <= 0.8x, peak RSS <= 1.0x.

A missing peer (no venv, no sox, no ffmpeg) or a missing proofkit feature is noted and skipped,
never a failure. Python peers run in .deps/venv (set-up makes it). The 2 MP photo comes from
Benchmarks/python/make_phone_photo.py. Release builds are made first unless PROOFKIT_BIN and
PROOFKIT_BENCH_BIN point at built binaries.

This machine may be shared: the report gives the load average before and after, flags noisy
figures, and leads with ratios measured side by side, which survive a busy machine far better
than absolute times.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
# onnxruntime writes a telemetry cache (~/.cache/Microsoft) on import unless this is set; every
# child process inherits it.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = os.path.join(ROOT, ".deps", "venv", "bin", "python")
MODELS = os.path.join(ROOT, "Models", "generated")
PEER = os.path.join(ROOT, "Benchmarks", "python", "photo_peer.py")
MAKE_PHOTO = os.path.join(ROOT, "Benchmarks", "python", "make_phone_photo.py")
IMAGE_BENCH = os.path.join(ROOT, "Benchmarks", "image_preprocess_bench.py")
TRIM_BENCH = os.path.join(ROOT, "Benchmarks", "trim_vs_peers.sh")
MAT_BENCH = os.path.join(ROOT, "Benchmarks", "mat_vs_python.py")
SQUAT_READ_BENCH = os.path.join(ROOT, "Benchmarks", "squat_read_bench.py")
WHISPER_BENCH = os.path.join(ROOT, "Benchmarks", "whisper_vs_faster_whisper.py")
RESAMPLER_BENCH = os.path.join(ROOT, "Benchmarks", "resampler_bench.py")
VOICE_BENCH = os.path.join(ROOT, "Benchmarks", "voice_vs_python.py")
MODEL_FILES = {"int8": "efficientnet_lite0_int8.onnx", "fp32": "efficientnet_lite0_fp32.onnx"}
BENCH_MODEL = {"int8": "lite0", "fp32": "lite0-fp32"}


def log(text):
    print(f"run_all: {text}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    """Runs a command; returns (status, stdout, stderr, wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    out, err = proc.communicate()
    return proc.returncode, out, err, time.perf_counter() - start


def median(values):
    return statistics.median(values) if values else float("nan")


def fmt(value, digits=None):
    if value is None or value != value:
        return "-"
    if digits is None:
        a = abs(value)
        digits = 0 if a >= 100 else 1 if a >= 10 else 2 if a >= 1 else 3
    return f"{value:.{digits}f}"


NOISY_SPREAD = 0.20


def ratio_cell(values):
    """Median ratio with the range over rounds, marked **noisy** when max/min - 1 is over 20 %."""
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}x"
    noisy = min(values) > 0 and max(values) / min(values) - 1 > NOISY_SPREAD
    return f"{median(values):.2f}x ({min(values):.2f}-{max(values):.2f})" + (" **noisy**" if noisy else "")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                for key in ("model name", "Model", "Hardware"):
                    if line.split(":")[0].strip() == key:
                        return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


class Suite:
    def __init__(self, args):
        self.args = args
        self.sections = []
        self.summary = []  # (what, target, measured, verdict)
        self.notes = []
        self.work = tempfile.mkdtemp(prefix="proofkit-suite-")
        self.pk = os.environ.get("PROOFKIT_BIN") or os.path.join(ROOT, ".build", "release", "proofkit")
        self.pkbench = os.environ.get("PROOFKIT_BENCH_BIN") or os.path.join(ROOT, ".build", "release", "proofkit-bench")
        self.py = VENV_PY if self.venv_ok() else None
        self.photo = None
        self.small_photo = None
        self.photo_info = {}
        self.inference = {}

    def venv_ok(self):
        if not os.path.exists(VENV_PY):
            return False
        status, _, _, _ = run([VENV_PY, "-c", "import numpy, PIL, onnxruntime"])
        return status == 0

    # --- set-up ------------------------------------------------------------------------
    def build(self):
        if os.environ.get("PROOFKIT_BIN") and os.environ.get("PROOFKIT_BENCH_BIN"):
            return
        for product in ("proofkit", "proofkit-bench"):
            # The same build as .ci/setup makes (static Swift runtime, lean start-up).
            log(f".ci/build-release {product}")
            status = subprocess.call([os.path.join(ROOT, ".ci", "build-release"), product],
                                     cwd=ROOT, stdout=sys.stderr)
            if status != 0:
                sys.exit(f"run_all: the release build of {product} failed")

    def make_photos(self):
        if not self.py:
            self.notes.append("No Python venv with numpy, Pillow and onnxruntime (.deps/venv; set-up makes it): "
                              "the Python peers and the 2 MP photo are skipped.")
            return
        self.photo = os.path.join(self.work, "phone_2mp.jpg")
        status, out, err, _ = run([self.py, MAKE_PHOTO, self.photo])
        if status != 0:
            self.notes.append(f"Could not make the 2 MP photo: {err.strip()}")
            self.photo = None
            return
        self.photo_info = json.loads(out)
        # A small photo for the inference rows: the peer's stage mode also times decoding, which
        # does not matter there, so keep it short.
        self.small_photo = os.path.join(self.work, "small.jpg")
        run([self.py, MAKE_PHOTO, self.small_photo, "--size", "320x240"])

    # --- 1. inference ----------------------------------------------------------------------
    def inference_section(self):
        a = self.args
        threads = [1, 2]
        rows = {}
        for key in MODEL_FILES:
            for t in threads:
                rows[(key, t)] = {"pk": [], "pk_rss": [], "pk_base": [], "pk_load": [], "py_load": [], "py": [], "py_rss": [], "suite": [], "ratio": [], "suite_ratio": []}
        have_peer = self.py is not None and self.small_photo is not None
        if not have_peer:
            self.notes.append("Inference peer (Python onnxruntime) skipped: no venv.")
        for r in range(a.rounds):
            log(f"inference round {r + 1}/{a.rounds}")
            for key in MODEL_FILES:
                for t in threads:
                    row = rows[(key, t)]
                    # The three measurements of one configuration run back to back, in an order
                    # that rotates every round.
                    order = ["pk", "py", "suite"]
                    order = order[r % 3:] + order[:r % 3]
                    for who in order:
                        if who == "suite":
                            name = f"inference.lite0.{key}.t{t}"
                            status, out, err, _ = run([self.pkbench, "--filter", name, "--threads", str(t)])
                            for line in out.splitlines():
                                try:
                                    item = json.loads(line)
                                except ValueError:
                                    continue
                                if item.get("name") == name:
                                    row["suite"].append(item["median_s"])
                        elif who == "pk":
                            status, out, err, _ = run([self.pk, "bench", "--model", BENCH_MODEL[key], "--threads", str(t),
                                                       "--runs", str(a.runs), "--warmup", "10", "--json"])
                            if status != 0:
                                self.notes.append(f"proofkit bench {BENCH_MODEL[key]} x{t} failed: {err.strip()[:200]}")
                                continue
                            res = json.loads(out)["results"][0]
                            row["pk"].append(res["latency_s"]["p50"])
                            row["pk_rss"].append(res["memory"]["peak_rss_bytes"] / 1024)
                            row["pk_base"].append(res["memory"]["rss_before_load_bytes"] / 1024)
                            row["pk_load"].append(res["load_s"])
                        elif have_peer:
                            status, out, err, _ = run([self.py, PEER, self.small_photo, "--model",
                                                       os.path.join(MODELS, MODEL_FILES[key]), "--threads", str(t),
                                                       "--mode", "stages", "--runs", str(a.runs), "--warmup", "10"])
                            if status != 0:
                                self.notes.append(f"photo_peer.py {key} x{t} failed: {err.strip()[:200]}")
                                continue
                            res = json.loads(out)
                            row["py"].append(res["inference_ms"]["p50"] / 1000)
                            row["py_rss"].append(res["peak_rss_kib"])
                            row["py_load"].append(res["session_ms"] / 1000)
                    if len(row["pk"]) == len(row["py"]) == r + 1:
                        row["ratio"].append(row["pk"][-1] / row["py"][-1])
                    if row["pk"] and len(row["suite"]) == r + 1 and len(row["pk"]) == r + 1:
                        row["suite_ratio"].append(row["pk"][-1] / row["suite"][-1])
        self.inference = rows

        text = [
            "## 1. Inference: EfficientNet-Lite0 through proofkit vs Python onnxruntime",
            "",
            f"One 224x224 image per run, `logits` fetched, ORT intra-op threads as shown, spinning off on both "
            f"sides, graph optimisation `all`. Each round runs, for every model and thread count, "
            f"`proofkit bench --runs {a.runs} --warmup 10` (a child process per configuration) and "
            f"`photo_peer.py --mode stages --runs {a.runs} --warmup 10` (Python onnxruntime {self.versions.get('onnxruntime', '?')}) "
            f"and the suite's own `proofkit-bench --filter inference.lite0.<model>.t<threads>` (100 runs after 10), "
            f"back to back in an order that rotates every round. Figures are the medians over {a.rounds} rounds of each round's p50; "
            f"ratios are the median of the per-round ratios, with their range.",
            "",
        ]
        body = []
        for (key, t), row in rows.items():
            body.append([f"lite0 {key}", t, fmt(median(row["pk"]) * 1000), fmt(median(row["suite"]) * 1000),
                         fmt(median(row["py"]) * 1000), ratio_cell(row["ratio"]), ratio_cell(row["suite_ratio"]),
                         fmt(median(row["pk_rss"]) / 1024, 1), fmt(median(row["py_rss"]) / 1024, 1),
                         ratio_cell([p / q for p, q in zip(row["pk_rss"], row["py_rss"])])])
        text.append(table(["model", "threads", "proofkit bench p50 ms", "proofkit-bench median ms", "Python ORT p50 ms",
                           "proofkit / Python", "bench / suite", "proofkit peak MiB", "Python peak MiB",
                           "RSS proofkit / Python"], body))
        text.append("")
        int8_vs_fp32 = []
        for t in threads:
            i8, f32 = rows[("int8", t)], rows[("fp32", t)]
            if i8["pk"] and f32["pk"]:
                int8_vs_fp32.append((t, median(i8["pk"]) / median(f32["pk"]),
                                     median(i8["py"]) / median(f32["py"]) if i8["py"] and f32["py"] else None))
        loads = [[f"lite0 {k}", t, fmt(median(r["pk_load"]) * 1000), fmt(median(r["py_load"]) * 1000),
                  ratio_cell([p / q for p, q in zip(r["pk_load"], r["py_load"])])] for (k, t), r in rows.items() if r["pk_load"]]
        if loads:
            text += ["Session creation (model file to a ready session) in the same processes:", "",
                     table(["model", "threads", "proofkit ms", "Python ORT ms", "proofkit / Python"], loads), ""]
        for t, pk_ratio, py_ratio in int8_vs_fp32:
            text.append(f"- int8 / fp32 latency at {t} thread{'s' if t > 1 else ''}: proofkit {pk_ratio:.2f}x"
                        + (f", Python {py_ratio:.2f}x" if py_ratio else "") + ".")
        base = [b for row in rows.values() for b in row["pk_base"]]
        if base:
            text.append(f"- Where proofkit's memory goes: its process with ONNX Runtime loaded and no model is "
                        f"{median(base) / 1024:.1f} MiB resident (`rss_before_load_bytes`); the model, its session and the "
                        f"run buffers add the rest of the peak: "
                        + ", ".join(f"{k} x{t} +{median(r['pk_rss']) / 1024 - median(r['pk_base']) / 1024:.1f} MiB"
                                    for (k, t), r in rows.items() if r["pk_rss"]) + ".")
        text.append("- Peak RSS is each whole process's maximum resident set: `proofkit bench`'s child for that "
                    "configuration (ONNX Runtime + model + buffers), and the Python process (interpreter, numpy, PIL, "
                    "onnxruntime, model).")
        self.sections.append("\n".join(text))

        for (key, t), row in rows.items():
            if row["ratio"]:
                m = median(row["ratio"])
                self.summary.append((f"inference lite0 {key}, {t} thread{'s' if t > 1 else ''}: proofkit / Python ORT",
                                     "<= 1.05x", f"{m:.2f}x", "met" if m <= 1.05 else "NOT met"))
        for (key, t), row in rows.items():
            if row["suite_ratio"]:
                m = median(row["suite_ratio"])
                lo, hi = min(row["suite_ratio"]), max(row["suite_ratio"])
                self.summary.append((f"`proofkit bench` vs the suite's own figure, lite0 {key} x{t}",
                                     "agree within noise (about +-10 %)", f"{m:.2f}x ({lo:.2f}-{hi:.2f})",
                                     "met" if 0.9 <= m <= 1.1 else "NOT met"))
        for t, pk_ratio, _ in int8_vs_fp32:
            self.summary.append((f"int8 faster than fp32 at {t} thread{'s' if t > 1 else ''} (int8 / fp32)", "< 1x",
                                 f"{pk_ratio:.2f}x", "met" if pk_ratio < 1 else "NOT met"))
        rss = [p / q for row in rows.values() for p, q in zip(row["pk_rss"], row["py_rss"])]
        if rss:
            self.summary.append(("peak RSS, inference processes: proofkit / Python", "<= 0.5x",
                                 f"{median(rss):.2f}x", "met" if median(rss) <= 0.5 else "NOT met"))

    # --- 0. proofkit bench with its defaults -----------------------------------------------
    def defaults_section(self):
        title = "## 0. `proofkit bench --model all --json` with its defaults"
        log("proofkit bench --model all --json (defaults)")
        status, out, err, wall = run([self.pk, "bench", "--model", "all", "--json"])
        if status != 0:
            self.sections.append(f"{title}\n\nFailed (exit {status}): {err.strip()[-300:]}")
            self.summary.append(("`proofkit bench --model all --json` completes", "< 120 s", f"exit {status}", "NOT met"))
            return
        report = json.loads(out)
        self.summary.append(("`proofkit bench --model all --json` with defaults, wall time", "< 120 s", f"{wall:.1f} s",
                             "met" if wall < 120 else "NOT met"))
        rows = []
        for r in report["results"]:
            l = r["latency_s"]
            rows.append([r["model"], r["threads"], fmt(r["load_s"] * 1000), fmt(l["min"] * 1000), fmt(l["p50"] * 1000),
                         fmt(l["p90"] * 1000), fmt(l["p99"] * 1000), fmt(l["max"] * 1000), fmt(r["throughput_per_s"]),
                         fmt(r["memory"]["peak_rss_bytes"] / 1048576, 1), "noisy" if r["noisy"] else ""])
        skipped = "\n" + "".join(f"\n- skipped {s['model']}: {s['reason']}" for s in report["skipped"])
        s = report["settings"]
        self.sections.append("\n".join([
            title, "",
            f"{wall:.1f} s of wall time for {len(report['results'])} configurations ({s['runs']} runs after {s['warmup']} "
            f"warm-ups each, threads {s['threads']}, memory isolation `{s['isolation']}`). `noisy`: p90 more than 25 % "
            "above the median.", "",
            table(["model", "threads", "load ms", "min ms", "p50 ms", "p90 ms", "p99 ms", "max ms", "runs/s", "peak MiB", ""],
                  rows) + skipped]))

    # --- 2. decode + preprocess ------------------------------------------------------------
    def image_section(self):
        title = "## 2. Photo decode + preprocess vs Pillow + numpy"
        if not os.path.exists(IMAGE_BENCH):
            self.sections.append(f"{title}\n\nSkipped: Benchmarks/image_preprocess_bench.py is not in this tree.")
            return
        if not self.py:
            self.sections.append(f"{title}\n\nSkipped: no Python venv for Pillow.")
            return
        log("image decode + preprocess")
        status, out, err, _ = run([self.py, IMAGE_BENCH, "--binary", self.pkbench, "--rounds", str(self.args.rounds)])
        if status != 0:
            self.sections.append(f"{title}\n\nFailed: {err.strip()[:400]}")
            return
        items = []
        for line in out.splitlines():
            try:
                items.append(json.loads(line))
            except ValueError:
                pass
        peers = {i["photo"]: i["median_s"] for i in items if i.get("name") == "peer.pillow_numpy.decode_preprocess"}
        drafts = {i["photo"]: i["median_s"] for i in items if i.get("name") == "peer.pillow_draft_numpy.decode_preprocess"}
        descriptions = {i["photo"]: i.get("description", "") for i in items if "description" in i}
        rows = []
        for item in items:
            name = item.get("name", "?")
            if name.startswith("peer."):
                continue
            ratio = item.get("ratio_to_pillow")
            lo, hi = (item.get("ratio_range") or [None, None])[:2]
            draft = item.get("ratio_to_pillow_draft")
            dlo, dhi = (item.get("ratio_draft_range") or [None, None])[:2]
            rows.append([item["photo"], name, fmt(item["median_s"] * 1000), fmt(peers.get(item["photo"], float("nan")) * 1000),
                         ratio_cell([lo, ratio, hi]) if ratio is not None and lo is not None else "-",
                         fmt(drafts.get(item["photo"], float("nan")) * 1000),
                         ratio_cell([dlo, draft, dhi]) if draft is not None and dlo is not None else "-"])
            if name == "image.decode_preprocess.fast" and ratio is not None:
                self.summary.append((f"decode + preprocess, {item['photo']}: proofkit / Pillow", "<= 0.3x",
                                     f"{ratio:.2f}x", "met" if ratio <= 0.3 else "NOT met"))
                if draft is not None:
                    self.summary.append((f"decode + preprocess, {item['photo']}: proofkit / Pillow with draft() (like for like)",
                                         "reported", f"{draft:.2f}x", ""))
        photos = "; ".join(f"`{k}`: {v}" for k, v in descriptions.items())
        text = [title, "", "From `Benchmarks/image_preprocess_bench.py` (rounds alternate Pillow and proofkit-bench; "
                "ratio = median of per-round ratios). `fast` is the DCT-scaled decode `proofkit mat` uses; `full` decodes "
                "every pixel; `decode.*` and `preprocess*` are the parts. Two peers: Pillow decoding every pixel, and "
                "Pillow with `draft()` (DCT-scaled decoding to the smallest scale that keeps the shorter side >= 256, "
                "what proofkit's `fast` does: the like-for-like column). Photos: " + photos + ".", "",
                table(["photo", "benchmark", "proofkit ms", "Pillow ms", "proofkit / Pillow",
                       "Pillow draft() ms", "proofkit / Pillow draft()"], rows)]
        self.sections.append("\n".join(text))

    # --- 3. one photo end to end, warm ------------------------------------------------------
    def photo_section(self):
        title = "## 3. One photo end to end in a warm process"
        if not self.photo:
            self.sections.append(f"{title}\n\nSkipped: no photo (needs the venv to make it).")
            return
        log("photo end to end (warm)")
        pk_total, py_total = [], []
        note = None
        for r in range(self.args.rounds):
            for who in (["pk", "py"] if r % 2 == 0 else ["py", "pk"]):
                if who == "pk":
                    status, out, err, _ = run([self.pk, "bench", "--model", "lite0", "--threads", "1", "--runs", "20",
                                               "--warmup", "3", "--image", self.photo, "--json"])
                    if status == 0:
                        res = json.loads(out)["results"][0]
                        if res.get("photo"):
                            pk_total.append(res["photo"])
                        else:
                            note = res.get("photo_note")
                else:
                    status, out, err, _ = run([self.py, PEER, self.photo, "--model", os.path.join(MODELS, MODEL_FILES["int8"]),
                                               "--threads", "1", "--mode", "stages", "--runs", "10", "--warmup", "2", "--draft",
                                               "--five-crop"])
                    if status == 0:
                        py_total.append(json.loads(out))
        if not pk_total:
            self.sections.append(f"{title}\n\nSkipped: `proofkit bench --image` gave no photo figure ({note or 'failed'}).")
            return
        pk_med = median([p["total_s"]["p50"] for p in pk_total])
        rows = [["proofkit mat's pipeline (lite0 int8, 1 thread, DCT-scaled decode, five-crop rule)", fmt(median([p["decode_p50_s"] for p in pk_total]) * 1000),
                 fmt(median([p["preprocess_p50_s"] for p in pk_total]) * 1000),
                 fmt(median([p["inference_p50_s"] for p in pk_total]) * 1000), fmt(pk_med * 1000)]]
        if py_total:
            dp = median([p["decode_preprocess_ms"]["p50"] for p in py_total])
            inf = median([p["inference_ms"]["p50"] for p in py_total])
            rows.append(["Python peer (same model, PIL draft decode, five crops)", "-", f"{fmt(dp)} (decode + preprocess)", fmt(inf),
                         fmt(dp + inf)])
            ratio = pk_med * 1000 / (dp + inf)
            rows.append(["proofkit / Python", "", "", "", f"{ratio:.2f}x"])
        self.sections.append("\n".join([title, "", f"The {self.photo_info.get('width')}x{self.photo_info.get('height')} photo "
                                        "judged repeatedly with a loaded model (read + decode, preprocess, inference, verdict): "
                                        "`proofkit bench --image` runs `proofkit mat`'s own pipeline with its defaults, which scores "
                                        "the five crops one at a time and stops at the first that passes (a mat seen in the centre "
                                        "costs one inference); the peer always scores all five in one batch. Medians over rounds of "
                                        f"each run's p50. proofkit's verdict: {pk_total[-1]['verdict']} (score {pk_total[-1]['score']:.3f}).", "",
                                        table(["pipeline", "decode ms", "preprocess ms", "inference ms", "total ms"], rows)]))

    # --- 4. whole process ------------------------------------------------------------------
    def process_section(self):
        title = "## 4. The whole `proofkit mat PHOTO` process vs the Python script"
        if not self.photo or not self.py:
            self.sections.append(f"{title}\n\nSkipped: no photo (needs the venv to make it).")
            return
        self.mat_bench_section(title)

    def mat_bench_section(self, title):
        """Runs Benchmarks/mat_vs_python.py (the mat verb's own comparison) and takes its figures."""
        log("whole process: Benchmarks/mat_vs_python.py")
        figures_path = os.path.join(self.work, "mat_vs_python.json")
        status, out, err, _ = run([self.py, MAT_BENCH, "--proofkit", self.pk, "--python", self.py, "--photo", self.photo,
                                   "--rounds", str(self.args.rounds * 2), "--inference-rounds", str(max(2, self.args.rounds // 2)),
                                   "--json", figures_path])
        if status != 0 or not os.path.exists(figures_path):
            self.sections.append(f"{title}\n\nFailed: Benchmarks/mat_vs_python.py exited {status}: {err.strip()[-300:]}")
            return
        with open(figures_path) as f:
            figures = json.load(f)
        for key, what in (("whole_process_ms", "whole `proofkit mat photo.jpg` process / Python script"),
                          ("peak_rss_kib", "peak RSS, whole `proofkit mat` process / Python script"),
                          ("inference_ms", "inference in `proofkit mat` (batch of 5) / Python ORT")):
            item = figures.get(key, {})
            if "ratio" in item:
                self.summary.append((what, f"<= {item['target']}x", f"{item['ratio']:.2f}x",
                                     "met" if item["ratio"] <= item["target"] else "NOT met"))
        like = figures.get("like_for_like")
        if like:
            spread = like["ratio_range"][1] / like["ratio_range"][0] - 1 if like["ratio_range"][0] > 0 else 0
            self.summary.append(("whole `proofkit mat` process / Python script, like for like (same crop policy, same .ort)",
                                 "reported", f"{like['ratio']:.2f}x" + (" (noisy)" if spread > NOISY_SPREAD else ""), ""))
            self.summary.append(("peak RSS, whole `proofkit mat` process / Python script, like for like",
                                 "reported", f"{like['rss_ratio']:.2f}x", ""))
        body = [line for line in out.splitlines() if not line.startswith("## ")]
        while body and not body[0].strip():
            body.pop(0)
        self.sections.append("\n".join([title, "", "From `Benchmarks/mat_vs_python.py` (the photo-proof verb's own "
                                         "comparison, run here on the same photo):", ""] + body))

    # --- 5. engines ------------------------------------------------------------------------
    def engines_section(self):
        title = "## 5. Engines (proofkit-bench)"
        log("engines (proofkit-bench)")
        # Only the engines: the inference and image benchmarks have sections of their own.
        status, out, err, _ = run([self.pkbench, "--filter", "voicegate,duamatcher,readingproof,silero,squat"])
        items = {}
        for line in out.splitlines():
            try:
                item = json.loads(line)
                items[item["name"]] = item
            except (ValueError, KeyError):
                pass
        rows = []
        targets = {
            "voicegate.energy": ("x real time, one core", 1000),
            "silero.vad": ("x real time, one thread", 50),
            "squat.counter": ("frames/s, one core", 1_000_000),
        }
        for name, item in items.items():
            target = targets.get(name)
            rate = item["rate_per_s"]
            verdict = ""
            if target:
                verdict = "met" if rate >= target[1] else "NOT met"
                self.summary.append((f"{name} ({target[0]})", f">= {target[1]:,}", f"{rate:,.0f}", verdict))
            rows.append([name, item["unit"], fmt(item["median_s"] * 1000, 3), fmt(item["p90_s"] * 1000, 3),
                         f"{rate:,.0f}", f">= {target[1]:,}" if target else "", verdict])
        text = [title, "", "Rates are units per second of wall time at the median (for audio-seconds: x real time).", "",
                table(["benchmark", "unit", "median ms", "p90 ms", "rate /s", "target", ""], rows)]
        if "voicegate.energy" in items and "voicegate.peer.frame-rms" in items:
            r = items["voicegate.energy"]["median_s"] / items["voicegate.peer.frame-rms"]["median_s"]
            text.append("")
            text.append(f"- The voice gate against its peer, a bare frame-RMS loop over the same audio: {r:.2f}x its time "
                        "(the gate adds the floor tracking, hysteresis and hang-over).")
        if not items:
            text.append(f"\nproofkit-bench printed nothing: {err.strip()[:300]}")
        self.sections.append("\n".join(text))

    # --- 5b. squat reading --------------------------------------------------------------------
    def squatread_section(self):
        title = "## 5b. `proofkit squat FILE` reading vs a Python json.loads loop"
        log("squat reading (Benchmarks/squat_read_bench.py)")
        frames = 100_000 if self.args.quick else 400_000
        summary_path = os.path.join(self.work, "squat_read.json")
        status, out, err, _ = run([sys.executable, SQUAT_READ_BENCH, "--bin", self.pk, "--frames", str(frames),
                                   "--rounds", str(self.args.rounds), "--summary-json", summary_path])
        if status != 0:
            self.sections.append(f"{title}\n\nFailed: {err.strip()[:300]}")
            return
        body = out.strip().split("\n", 1)[1] if out.startswith("## ") else out.strip()
        self.sections.append(f"{title}\n\n{body}")
        try:
            with open(summary_path) as f:
                s = json.load(f)
        except (OSError, ValueError):
            return
        def noisy(flag):
            return " (noisy)" if flag else ""
        self.summary.append((f"`proofkit squat FILE` / Python json.loads loop, CPU time ({s['frames']:,} frames)",
                             ">= 3x", f"{s['ratio_cpu']:.1f}x{noisy(s['noisy_cpu'])}",
                             "met" if s["ratio_cpu"] >= 3 else "NOT met"))
        self.summary.append((f"`proofkit squat FILE` / Python json.loads loop, wall time ({s['frames']:,} frames)",
                             ">= 3x", f"{s['ratio_wall']:.1f}x{noisy(s['noisy_wall'])}",
                             "met" if s["ratio_wall"] >= 3 else "NOT met"))
        self.summary.append(("`proofkit squat FILE` frames/s end to end, CPU time", ">= 1,000,000",
                             f"{s['fps_cpu']:,.0f}", "met" if s["fps_cpu"] >= 1e6 else "NOT met"))
        self.summary.append(("`proofkit squat FILE` frames/s end to end, wall time", ">= 1,000,000",
                             f"{s['fps_wall']:,.0f}", "met" if s["fps_wall"] >= 1e6 else "NOT met"))
        self.summary.append((f"`proofkit squat FILE` peak RSS ({s['frames']:,} and {s['frames'] // 8:,} frames)",
                             "< 32 MiB", f"{s['rss_mib']:.1f} and {s['rss_small_mib']:.1f} MiB",
                             "met" if max(s["rss_mib"], s["rss_small_mib"]) < 32 else "NOT met"))

    # --- 6. trim ---------------------------------------------------------------------------
    def trim_section(self):
        title = "## 6. `proofkit trim` vs sox and ffmpeg"
        if not shutil.which("sox"):
            self.sections.append(f"{title}\n\nSkipped: sox is missing (it makes the inputs).")
            return
        log("trim vs sox/ffmpeg")
        env = dict(os.environ, PROOFKIT_BIN=self.pk)
        status, out, err, _ = run(["bash", TRIM_BENCH, str(self.args.trim_runs)], env=env)
        if status != 0:
            self.sections.append(f"{title}\n\nFailed: {err.strip()[-400:]}")
            return
        lines = out.splitlines()
        body = [l for l in lines if not l.startswith("## ")]
        while body and not body[0].strip():
            body.pop(0)
        for line in lines:
            cells = [c.strip() for c in line.strip("|").split("|")]
            # | input | output | tool | median ms | min ms | x sox (median) | x like for like | peak RSS MiB |
            if len(cells) != 8 or cells[2] not in ("proofkit", "proofkit-sync"):
                continue
            try:
                x_sox, like = float(cells[5]), float(cells[6].split()[0])
            except ValueError:
                continue
            if cells[0] in ("in3min.mp3", "in5min.wav"):
                if cells[2] == "proofkit":
                    self.summary.append((f"trim {cells[0]} ({cells[1]} output) / sox", "<= 0.7x", f"{x_sox:.2f}x",
                                         "met" if x_sox <= 0.7 else "NOT met"))
                else:
                    self.summary.append((f"trim --sync {cells[0]} ({cells[1]} output) / sox + sync --data (like for like)",
                                         "<= 0.7x", f"{like:.2f}x", "met" if like <= 0.7 else "NOT met"))
            if cells[2] == "proofkit" and cells[0] == "in1h.wav" and cells[-1]:
                rss = float(cells[-1])
                self.summary.append(("trim peak RSS on a one-hour WAV", "< 32 MiB", f"{rss:.1f} MiB",
                                     "met" if rss < 32 else "NOT met"))
        self.sections.append("\n".join([title, "", f"From `Benchmarks/trim_vs_peers.sh {self.args.trim_runs}`:", ""] + body))

    # --- 7. Whisper ---------------------------------------------------------------------------
    def whisper_section(self):
        title = "## 7. `proofkit transcribe` vs faster-whisper"
        if not self.py:
            self.sections.append(f"{title}\n\nSkipped: no .deps/venv (the peer needs ctranslate2).")
            return
        if not os.path.exists(os.path.join(MODELS, "whisper_base_decoder.onnx")):
            self.sections.append(f"{title}\n\nSkipped: the Whisper models are not built (bash .ci/setup).")
            return
        log("whisper vs faster-whisper (Benchmarks/whisper_vs_faster_whisper.py)")
        rounds = 2 if self.args.quick else 3
        status, out, err, _ = run([sys.executable, WHISPER_BENCH, "--proofkit", self.pk, "--rounds", str(rounds), "--json"])
        if status != 0:
            self.sections.append(f"{title}\n\nFailed or skipped: {(err or out).strip()[-300:]}")
            return
        r = json.loads(out)
        for what, key, target in (("transcribe time / faster-whisper (same clips, 2 threads)", "time_ratio", r["time_target"]),
                                  ("transcribe peak RSS / faster-whisper (whole processes)", "rss_ratio", r["rss_target"])):
            self.summary.append((what, f"<= {target}x", f"{r[key]:.2f}x", "met" if r[key] <= target else "NOT met"))
        rows = []
        for i, rr in enumerate(r["per_round"], 1):
            a, b = rr["proofkit"], rr["peer"]
            rows.append([str(i), fmt(a["transcribe_s"], 2), fmt(b["transcribe_s"], 2), f"{rr['time_ratio']:.2f}x",
                         fmt(a["rss_mib"], 0), fmt(b["rss_mib"], 0), f"{rr['rss_ratio']:.2f}x"])
        audio = r["audio_seconds"]
        self.sections.append("\n".join([
            title, "",
            f"{len(r['clips'])} clips, {audio:.1f} s of real Arabic speech ({', '.join(os.path.basename(c) for c in r['clips'])}), "
            f"{r['threads']} threads each, peer {r['peer']}; load {r['load_before']} before, {r['load_after']} after. "
            "Transcribe time = features + encoder + decoder as each process reports it (no model load, no audio decoding); "
            "peak RSS = wait4 ru_maxrss of the whole process.", "",
            table(["round", "proofkit s", "faster-whisper s", "time ratio", "proofkit MiB", "faster-whisper MiB", "RSS ratio"], rows), "",
            f"Median of per-round ratios: time {r['time_ratio']:.2f}x, peak RSS {r['rss_ratio']:.2f}x. Per 10 s of speech: "
            f"proofkit {statistics.median(x['proofkit']['transcribe_s'] for x in r['per_round']) / audio * 10:.2f} s, "
            f"faster-whisper {statistics.median(x['peer']['transcribe_s'] for x in r['per_round']) / audio * 10:.2f} s.",
        ]))

    def resampler_section(self):
        title = "## 8. Resampling to 16 kHz: proofkit against sox and libsoxr"
        if not self.py:
            self.sections.append(f"{title}\n\nSkipped: no .deps/venv (the quality figures need numpy).")
            return
        log("resampler vs sox (Benchmarks/resampler_bench.py)")
        status, out, err, _ = run([self.py, RESAMPLER_BENCH, "--rounds", str(self.args.rounds * 2), "--json"])
        if status != 0:
            self.sections.append(f"{title}\n\nFailed or skipped: {(err or out).strip()[-300:]}")
            return
        r = json.loads(out)
        for label, ratio in r["ratios"].items():
            if label.endswith("300 s"):
                rate = label.split(",")[0]
                self.summary.append((f"resample {rate} -> 16 kHz (300 s) / sox rate, conversion CPU time", "<= 1.0x",
                                     f"{ratio['conversion']:.2f}x", "met" if ratio["conversion"] <= 1.0 else "NOT met"))
        self.sections.append(title + "\n\n" + r["markdown"].split("\n", 2)[2])

    def voiceproof_section(self):
        title = "## 9. `proofkit voice REC` vs its Python peer"
        if not self.py or not os.path.exists(os.path.join(MODELS, "whisper_base_decoder.onnx")):
            self.sections.append(f"{title}\n\nSkipped: needs .deps/venv and the Whisper models (bash .ci/setup).")
            return
        log("voice REC vs Python (Benchmarks/voice_vs_python.py)")
        status, out, err, _ = run([sys.executable, VOICE_BENCH, "--binary", self.pk, "--rounds", str(self.args.rounds),
                                   "--json"])
        if status != 0:
            self.sections.append(f"{title}\n\nFailed or skipped: {(err or out).strip()[-300:]}")
            return
        r = json.loads(out)
        for label, ratio in r["ratios"].items():
            self.summary.append((f"`proofkit voice REC` / Python (Silero + faster-whisper), wall time, {label}", "<= 0.8x",
                                 f"{ratio['time']:.2f}x", "met" if ratio["time"] <= 0.8 else "NOT met"))
            self.summary.append((f"`proofkit voice REC` / Python, peak RSS, {label}", "<= 1.0x",
                                 f"{ratio['rss']:.2f}x", "met" if ratio["rss"] <= 1.0 else "NOT met"))
        self.sections.append(title + "\n\n" + r["markdown"].split("\n", 2)[2])

    # --- report ----------------------------------------------------------------------------
    def versions_of_tools(self):
        v = {}
        status, out, _, _ = run([self.pk, "--version"])
        v["proofkit"] = out.strip()
        status, out, _, _ = run([self.pk, "bench", "--model", "silero", "--threads", "1", "--runs", "1", "--warmup", "0", "--json"])
        try:
            v["ort"] = json.loads(out)["onnxruntime"]["version"]
        except (ValueError, KeyError, TypeError):
            v["ort"] = "?"
        if self.py:
            status, out, _, _ = run([self.py, "-c", "import onnxruntime, PIL, numpy, sys; "
                                     "print(onnxruntime.__version__, PIL.__version__, numpy.__version__, sys.version.split()[0])"])
            parts = out.split()
            if len(parts) == 4:
                v["onnxruntime"], v["pillow"], v["numpy"], v["python"] = parts
        return v

    def write(self, started, load_before):
        a = self.args
        mem = 0
        try:
            with open("/proc/meminfo") as f:
                mem = int(f.readline().split()[1]) // 1024
        except (OSError, ValueError, IndexError):
            pass
        uname = platform.uname()
        osname = "unknown"
        try:
            with open("/etc/os-release") as f:
                for line in f:
                    if line.startswith("PRETTY_NAME="):
                        osname = line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
        v = self.versions
        head = [
            "# proofkit benchmark report",
            "",
            f"Made by `Benchmarks/run_all.sh --rounds {a.rounds} --runs {a.runs} --trim-runs {a.trim_runs}` on "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(started))}, in {fmt((time.time() - started) / 60, 1)} minutes.",
            "",
            f"**Machine:** {cpu_model()}, {os.cpu_count()} cores, {uname.machine}, {mem // 1024} GiB, kernel {uname.release}, {osname}. "
            f"**Load average** (1, 5, 15 min) before: {load_before}; after: {loadavg()}.",
            "",
            f"**Software:** {v.get('proofkit', 'proofkit ?')} (release build, static Swift runtime as set-up makes it), ONNX Runtime {v.get('ort', '?')} (C API through proofkit's wrapper); "
            f"peer: Python {v.get('python', '-')}, onnxruntime {v.get('onnxruntime', '-')}, Pillow {v.get('pillow', '-')}, numpy {v.get('numpy', '-')}.",
            "",
            f"**Photo:** {self.photo_info.get('width', '-')}x{self.photo_info.get('height', '-')} JPEG, "
            f"{fmt(self.photo_info.get('bytes', 0) / 1024, 0)} KiB, 4:2:0, quality 92, made by "
            f"`Benchmarks/python/make_phone_photo.py` from {self.photo_info.get('source', '-')}.",
            "",
            "This machine is shared with other engineers who build and test at the same time (2 cores for "
            "about 8 people), so absolute times here are pessimistic and vary from run to run. Each benchmark runs "
            "side by side with its peer, alternating, and the ratios are what to read. On a quiet board, run "
            "`Benchmarks/run_all.sh` again, and `proofkit bench --json` to compare boards (see "
            "Benchmarks/RASPBERRY_PI.md). A ratio whose range over the rounds spreads more than "
            f"{NOISY_SPREAD:.0%} (max/min - 1) is marked **noisy**: read it as a rough figure.",
            "",
            "## Summary: targets",
            "",
            table(["what", "target", "measured", ""], self.summary) if self.summary else "(no targets measured)",
            "",
        ]
        if self.notes:
            head += ["Notes:", ""] + [f"- {n}" for n in self.notes] + [""]
        text = "\n".join(head) + "\n" + "\n\n".join(self.sections) + "\n"
        # Paths inside the clone are written relative to it (the report is checked in), and the
        # temporary folder's name is dropped.
        text = text.replace(ROOT + "/", "").replace(self.work + "/", "")
        with open(a.output + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.output + ".tmp", a.output)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per comparison (default 5)")
    parser.add_argument("--runs", type=int, default=100, help="timed inference runs per measurement (default 100)")
    parser.add_argument("--trim-runs", type=int, default=5, help="runs per tool for trim_vs_peers.sh (default 5)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, 30 runs, 3 trim runs (a smoke test)")
    parser.add_argument("--output", default=os.path.join(ROOT, "Benchmarks", "REPORT.md"))
    parser.add_argument("--only", default="", help="comma list of sections: defaults,inference,image,photo,process,engines,squatread,trim,whisper,"
                        "resampler,voiceproof")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.runs, args.trim_runs = 2, 30, 3
    started = time.time()
    load_before = loadavg()
    suite = Suite(args)
    suite.build()
    suite.versions = suite.versions_of_tools()
    suite.make_photos()
    only = set(filter(None, args.only.split(",")))
    for name in ("defaults", "inference", "image", "photo", "process", "engines", "squatread", "trim", "whisper",
                 "resampler", "voiceproof"):
        if not only or name in only:
            getattr(suite, f"{name}_section")()
    suite.write(started, load_before)
    shutil.rmtree(suite.work, ignore_errors=True)
    if os.path.abspath(args.output) == os.path.join(ROOT, "Benchmarks", "REPORT.md"):
        # The README's headline figures are rows of this report: copy them over.
        subprocess.call([sys.executable, os.path.join(ROOT, "Benchmarks", "readme_rows.py"), "--update"])
    print(args.output)


if __name__ == "__main__":
    main()
