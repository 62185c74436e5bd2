#!/usr/bin/env python3
"""`proofkit mat` against the Python peer (onnxruntime + PIL + numpy), side by side in one run.

    .deps/venv/bin/python Benchmarks/mat_vs_python.py [--rounds 15] [--threads 1] [--photo P.jpg]
                                                      [--proofkit .build/release/proofkit] [--json OUT]

Both sides do the same job: the default engine (EfficientNet-Lite0 int8,
Models/generated/efficientnet_lite0_int8.onnx), DCT-scaled JPEG decode (PIL's draft mode on the
Python side), the five-crop rule (one batch of 5), softmax, the verdict. The photo is a 2 MP
phone-like JPEG made deterministically by Benchmarks/python/make_phone_photo.py, unless --photo.

Three comparisons, each alternating proofkit and Python round by round (so machine noise hits
both alike); the ratio reported is the median of the per-round ratios:
  (a) whole process: wall time from spawn to exit of `proofkit mat PHOTO` vs
      `python Benchmarks/python/photo_peer.py PHOTO --model int8 --five-crop --draft` (target <= 0.25x);
  (b) peak RSS of those same processes (wait4's ru_maxrss; target <= 0.5x);
      proofkit is measured twice: as it runs by default (the crops one at a time, stopping at
      the first that passes) and with --all-crops (one batch of 5, the peer's exact work);
      For reference, in the same rounds: Benchmarks/c/ort_floor.c, a bare C program that does
      only what proofkit does with ONNX Runtime (same library, same mapped .ort model and session
      settings, pages dropped after the session, one 224x224 run; no Swift, no image): the part
      of the peak that is ONNX Runtime's own (skipped when there is no C compiler or no .ort);
  (c) inference alone at the same thread count: proofkit's per-photo inference time from
      `proofkit mat --all-crops --json --timings PHOTO x N` (one session, the first --warmup photos dropped)
      vs photo_peer.py --mode stages (ORT session.run on the same batch of 5) (target <= 1.05x).
Prints a markdown report on stdout (and JSON with --json). Exits 1 when a peer is missing.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEER = os.path.join(ROOT, "Benchmarks", "python", "photo_peer.py")
MAKER = os.path.join(ROOT, "Benchmarks", "python", "make_phone_photo.py")
INT8 = os.path.join(ROOT, "Models", "generated", "efficientnet_lite0_int8.onnx")
INT8_ORT = os.path.join(ROOT, "Models", "generated", "efficientnet_lite0_int8.ort")


def spawn(argv: list[str], env: dict | None = None) -> tuple[float, int, str, int]:
    """Runs argv; returns (wall seconds, peak RSS KiB, stdout, exit status)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out_file, tempfile.TemporaryFile() as err_file:
        proc = subprocess.Popen(argv, stdout=out_file, stderr=err_file, env=env)
        # Reap with wait4 for the child's own rusage (its peak RSS).
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read().decode(), err_file.read().decode(errors="replace")
    if code != 0:
        sys.stderr.write(f"{argv[0]} exited {code}: {err}\n")
    return wall, usage.ru_maxrss, out, code


def median(values):
    return statistics.median(values) if values else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proofkit", default=os.path.join(ROOT, ".build", "release", "proofkit"))
    ap.add_argument("--python", default=os.path.join(ROOT, ".deps", "venv", "bin", "python"))
    ap.add_argument("--photo", help="the JPEG to judge (default: a 2 MP photo from make_phone_photo.py)")
    ap.add_argument("--rounds", type=int, default=15, help="alternating rounds for (a) and (b) (default 15)")
    ap.add_argument("--inference-rounds", type=int, default=3, help="alternating rounds for (c) (default 3)")
    ap.add_argument("--runs", type=int, default=30, help="inference runs per round after warm-up (default 30)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", help="also write the figures as JSON here")
    a = ap.parse_args()

    missing = [p for p in (a.proofkit, a.python, INT8) if not os.path.exists(p)]
    if missing:
        print(f"mat_vs_python.py: missing {', '.join(missing)} (run bash .ci/setup, then "
              "swift build -c release --product proofkit)", file=sys.stderr)
        return 1
    scratch = tempfile.mkdtemp(prefix="proofkit-mat-bench-")
    atexit.register(shutil.rmtree, scratch, True)  # the photo and ort_floor, however this ends
    photo = a.photo
    source = "given"
    if photo is None:
        photo = os.path.join(scratch, "phone_2mp.jpg")
        made = subprocess.run([a.python, MAKER, photo], check=True, capture_output=True, text=True)
        source = json.loads(made.stdout).get("source", "?")
    env = dict(os.environ)
    env.pop("PROOFKIT_MODELS", None)
    env.pop("PROOFKIT_ORT_LIBRARY", None)
    # The ONNX Runtime 1.32 library carries Microsoft's telemetry (a device id and an SQLite event
    # queue under ~/.cache, uploads when online); proofkit always turns it off, so the Python peer
    # runs with it off too (same work on both sides, and nothing sent from this machine).
    env["ORT_DISABLE_TELEMETRY"] = "1"
    threads = str(a.threads)
    pk_cmd = [a.proofkit, "mat", "--threads", threads, photo]
    # The same work as the peer: all five crops in one batch (proofkit's default stops at the
    # first crop that passes, which a mat photo usually does on the centre crop).
    pk_all_cmd = [a.proofkit, "mat", "--all-crops", "--threads", threads, photo]
    py_cmd = [a.python, PEER, photo, "--model", INT8, "--five-crop", "--draft", "--threads", threads]
    # Like for like with proofkit's default: the same pre-optimised .ort (no graph optimisation at
    # start-up) and the same crop policy (centre first, then the corners, stopping at the first
    # crop that passes).
    py_like_cmd = ([a.python, PEER, photo, "--model", INT8_ORT, "--five-crop", "--crop-policy", "first-pass",
                    "--graph-optimization", "disabled", "--draft", "--threads", threads]
                   if os.path.exists(INT8_ORT) else None)

    # Warm the page cache and check both agree on the verdict.
    _, _, pk_out, pk_status = spawn([a.proofkit, "mat", "--json", "--threads", threads, photo], env)
    _, _, py_out, py_status = spawn(py_cmd, env)
    if pk_status != 0 or py_status != 0:
        return 1
    pk_first = json.loads(pk_out.splitlines()[0])
    py_first = json.loads(py_out)
    agree = (pk_first["verdict"] == "accepted") == (py_first["verdict"] == "pass")

    floor_cmd = build_floor(scratch, a.threads)

    # (a) + (b): whole processes, alternating.
    print(f"(a, b) whole process x {a.rounds} rounds...", file=sys.stderr)
    pk_wall, py_wall, pk_rss, py_rss, wall_ratios, rss_ratios = [], [], [], [], [], []
    all_wall, all_rss, all_wall_ratios, all_rss_ratios = [], [], [], []
    like_wall, like_rss, like_wall_ratios, like_rss_ratios = [], [], [], []
    floor_rss, floor_ratios = [], []
    for _ in range(a.rounds):
        w1, r1, _, s1 = spawn(pk_cmd, env)
        w2, r2, _, s2 = spawn(py_cmd, env)
        w3, r3, _, s3 = spawn(pk_all_cmd, env)
        if s1 or s2 or s3:
            return 1
        pk_wall.append(w1), py_wall.append(w2), pk_rss.append(r1), py_rss.append(r2)
        all_wall.append(w3), all_rss.append(r3)
        wall_ratios.append(w1 / w2)
        rss_ratios.append(r1 / r2)
        all_wall_ratios.append(w3 / w2)
        all_rss_ratios.append(r3 / r2)
        if py_like_cmd:
            w5, r5, _, s5 = spawn(py_like_cmd, env)
            if s5:
                return 1
            like_wall.append(w5), like_rss.append(r5)
            like_wall_ratios.append(w1 / w5)
            like_rss_ratios.append(r1 / r5)
        if floor_cmd:
            _, r4, _, s4 = spawn(floor_cmd, env)
            if s4 == 0:
                floor_rss.append(r4)
                floor_ratios.append(r4 / r2)

    # (c): inference alone, same threads, one session per side, alternating rounds.
    print(f"(c) inference x {a.inference_rounds} rounds of {a.runs} runs...", file=sys.stderr)
    pk_inf, py_inf, inf_ratios, pk_load, py_session, py_import = [], [], [], [], [], []
    for _ in range(a.inference_rounds):
        _, _, out, s = spawn([a.proofkit, "mat", "--json", "--timings", "--all-crops", "--threads", threads]
                             + [photo] * (a.warmup + a.runs), env)
        if s:
            return 1
        rows = [json.loads(line) for line in out.splitlines()]
        times = [r["timings_ms"]["inference"] for r in rows if "file" in r][a.warmup:]
        load = rows[-1]["summary"]["load_ms"]
        pk_load.append(load["read_verify"] + load["session"])
        _, _, out, s = spawn(py_cmd[:-2] + ["--threads", threads, "--mode", "stages", "--runs", str(a.runs),
                                            "--warmup", str(a.warmup)], env)
        if s:
            return 1
        peer = json.loads(out)
        pk_inf.append(median(times))
        py_inf.append(peer["inference_ms"]["p50"])
        py_session.append(peer["session_ms"])
        py_import.append(peer["import_ms"])
        inf_ratios.append(pk_inf[-1] / py_inf[-1])

    figures = {
        "photo": {"path": photo, "source": source, "bytes": os.path.getsize(photo)},
        "threads": a.threads, "rounds": a.rounds, "inference_rounds": a.inference_rounds, "runs": a.runs,
        "verdicts_agree": agree, "proofkit_score": pk_first["score"], "python_score": py_first["score"],
        "whole_process_ms": {"proofkit": median(pk_wall) * 1000, "python": median(py_wall) * 1000,
                             "ratio": median(wall_ratios), "target": 0.25},
        "peak_rss_kib": {"proofkit": median(pk_rss), "python": median(py_rss), "ratio": median(rss_ratios),
                         "target": 0.5},
        "all_crops": {"whole_process_ms": median(all_wall) * 1000, "ratio": median(all_wall_ratios),
                      "peak_rss_kib": median(all_rss), "rss_ratio": median(all_rss_ratios)},
        "like_for_like": ({"python_whole_process_ms": median(like_wall) * 1000, "ratio": median(like_wall_ratios),
                           "ratio_range": [min(like_wall_ratios), max(like_wall_ratios)],
                           "python_peak_rss_kib": median(like_rss), "rss_ratio": median(like_rss_ratios),
                           "rss_ratio_range": [min(like_rss_ratios), max(like_rss_ratios)]} if like_wall else None),
        "ort_floor": ({"peak_rss_kib": median(floor_rss), "rss_ratio": median(floor_ratios)} if floor_rss else None),
        "inference_ms": {"proofkit": median(pk_inf), "python": median(py_inf), "ratio": median(inf_ratios),
                         "target": 1.05},
        "proofkit_load_ms": median(pk_load), "python_session_ms": median(py_session),
        "python_import_ms": median(py_import),
        "machine": {"cpu": cpu_model(), "cores": os.cpu_count(), "arch": platform.machine(),
                    "kernel": platform.release(), "load_average": os.getloadavg()},
    }
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
        os.replace(a.json + ".tmp", a.json)
    w, r, i = figures["whole_process_ms"], figures["peak_rss_kib"], figures["inference_ms"]
    ok = lambda ratio, target: "yes" if ratio <= target else "NO"
    print(f"""## proofkit mat vs Python (onnxruntime + PIL + numpy)

Photo: {source} 2 MP JPEG ({figures['photo']['bytes']} bytes); EfficientNet-Lite0 int8, DCT-scaled decode,
five crops, {a.threads} thread(s), ONNX Runtime telemetry off on both sides. Verdicts agree:
{agree} (proofkit {pk_first['score']:.3f}, Python {py_first['score']:.3f}; proofkit stops at the first
crop that passes unless --all-crops, so its score is the centre crop's here).
Machine: {figures['machine']['cpu']}, {os.cpu_count()} cores, {platform.machine()}, load average
{os.getloadavg()[0]:.1f} at the end. Ratio = median of per-round ratios (alternating rounds).

| measure | proofkit | Python | ratio | target | met |
| --- | ---: | ---: | ---: | ---: | --- |
| (a) whole process, wall (ms, median of {a.rounds}) | {w['proofkit']:.1f} | {w['python']:.1f} | {w['ratio']:.3f}x | <= 0.25x | {ok(w['ratio'], 0.25)} |
| (a) same, `proofkit mat --all-crops` (one batch of 5, the peer's work) | {figures['all_crops']['whole_process_ms']:.1f} | {w['python']:.1f} | {figures['all_crops']['ratio']:.3f}x | <= 0.25x | {ok(figures['all_crops']['ratio'], 0.25)} |
| (b) peak RSS (MiB) | {r['proofkit'] / 1024:.1f} | {r['python'] / 1024:.1f} | {r['ratio']:.3f}x | <= 0.5x | {ok(r['ratio'], 0.5)} |
| (b) same, `--all-crops` | {figures['all_crops']['peak_rss_kib'] / 1024:.1f} | {r['python'] / 1024:.1f} | {figures['all_crops']['rss_ratio']:.3f}x | <= 0.5x | {ok(figures['all_crops']['rss_ratio'], 0.5)} |
{like_rows(figures, w, r)}{floor_row(figures, r)}| (c) inference, batch of 5 (ms, median) | {i['proofkit']:.2f} | {i['python']:.2f} | {i['ratio']:.3f}x | <= 1.05x | {ok(i['ratio'], 1.05)} |

Model load: proofkit {figures['proofkit_load_ms']:.1f} ms (read, SHA-256 check and session); Python
session {figures['python_session_ms']:.1f} ms after {figures['python_import_ms']:.1f} ms of imports.""")
    return 0


def like_rows(figures: dict, w: dict, r: dict) -> str:
    """The like-for-like rows: proofkit's default against the peer with the same crop policy and
    the same pre-optimised .ort (reported beside the default rows, no target of their own)."""
    like = figures.get("like_for_like")
    if not like:
        return "| (a, b) like for like | skipped: no .ort model | | | | |\n"
    def spread(lo_hi):
        lo, hi = lo_hi
        return f" ({lo:.3f}-{hi:.3f})" + (" **noisy**" if lo > 0 and hi / lo - 1 > 0.2 else "")
    return (f"| (a) like for like: Python with proofkit's crop policy (first crop that passes) and the same .ort, no "
            f"graph optimisation at start-up | {w['proofkit']:.1f} | {like['python_whole_process_ms']:.1f} | "
            f"{like['ratio']:.3f}x{spread(like['ratio_range'])} | reported | |\n"
            f"| (b) like for like, peak RSS (MiB) | {r['proofkit'] / 1024:.1f} | {like['python_peak_rss_kib'] / 1024:.1f} | "
            f"{like['rss_ratio']:.3f}x{spread(like['rss_ratio_range'])} | reported | |\n")


def build_floor(scratch: str, threads: int) -> list[str] | None:
    """Compiles Benchmarks/c/ort_floor.c; returns its command line, or None when it cannot run."""
    model = os.path.join(ROOT, "Models", "generated", "efficientnet_lite0_int8.ort")
    # The copy set-up installed: the one proofkit finds here (the runs unset PROOFKIT_ORT_LIBRARY).
    folder = os.path.join(ROOT, ".deps", "onnxruntime")
    found = sorted(f for f in os.listdir(folder) if f.startswith("libonnxruntime.so")) if os.path.isdir(folder) else []
    library = os.path.join(folder, found[-1]) if found else None
    compiler = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if not (library and os.path.exists(model) and compiler):
        print("ort_floor skipped: needs a C compiler, ONNX Runtime and the .ort model", file=sys.stderr)
        return None
    binary = os.path.join(scratch, "ort_floor")
    built = subprocess.run([compiler, "-O2", "-I", os.path.join(ROOT, "CSupport", "COnnxRuntime", "include"),
                            os.path.join(ROOT, "Benchmarks", "c", "ort_floor.c"), "-ldl", "-o", binary],
                           capture_output=True, text=True)
    if built.returncode != 0:
        print(f"ort_floor skipped: it does not compile: {built.stderr.strip()[:200]}", file=sys.stderr)
        return None
    return [binary, library, model, str(threads)]


def floor_row(figures: dict, rss: dict) -> str:
    floor = figures.get("ort_floor")
    if not floor:
        return ""
    return (f"| (b) reference: bare C over the same ONNX Runtime and .ort model, one run, no image "
            f"(Benchmarks/c/ort_floor.c) | {floor['peak_rss_kib'] / 1024:.1f} | {rss['python'] / 1024:.1f} "
            f"| {floor['rss_ratio']:.3f}x | | |\n")


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


if __name__ == "__main__":
    sys.exit(main())
