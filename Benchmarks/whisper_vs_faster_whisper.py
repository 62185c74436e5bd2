#!/usr/bin/env python3
"""`proofkit transcribe` against faster-whisper (CTranslate2 int8) on the same clips, side by side.

    python3 Benchmarks/whisper_vs_faster_whisper.py [--rounds 3] [--threads 2] [--proofkit PATH]
        [--data ../shared/data] [--json] [--output FILE.md]

Both recognisers run Whisper base from the same pinned model.bin (proofkit: the ONNX graphs the
set-up converted, Models/generated; the peer: Benchmarks/python/whisper_peer.py, CTranslate2 int8,
beam 1, Arabic, without timestamps), with the same number of threads, on the same clips, one
process each per round, the two alternating (the order flips each round) so the load of a shared
machine hits both alike. For each process:
  - transcribe time: features + encoder + decoder over all clips, as each reports it
    (`timing.transcribe_seconds` of `proofkit transcribe --json`, the peer's `transcribe_s`):
    neither audio decoding nor model loading;
  - per 10 s of speech (transcribe time / audio seconds x 10) and the real-time factor;
  - load time and the whole process's wall time;
  - peak RSS of the whole process (ru_maxrss from wait4), Python interpreter included for the peer.
The ratios proofkit / faster-whisper are taken per round; the report gives their median (and the
range). Targets (issue 12): transcribe time <= 1.5x, peak RSS <= 1x.

Clips: real Arabic speech from ../shared/data/audio (recitations and speech; see CLIPS) and, when
../shared/data/dua_audio is there, DUA_CLIPS of its recordings (evaluation only, read in place).
Missing clips are skipped and the report lists what was used. Needs .deps/venv (ctranslate2,
numpy) for the peer and ffmpeg (the peer decodes with it).
"""
import argparse
import json
import os
import platform
import selectors
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = os.path.join(ROOT, ".deps", "venv", "bin", "python")
PEER = os.path.join(ROOT, "Benchmarks", "python", "whisper_peer.py")
CLIPS = ["audio/speech/speech_ar_001.wav", "audio/speech/speech_ar_002.wav", "audio/speech/speech_ar_004.wav",
         "audio/recitation/rec_001.mp3", "audio/recitation/rec_004.wav", "audio/recitation/rec_005.mp3",
         "audio/odd/odd_midframe_001.mp3"]
DUA_CLIPS = ["dua_audio/5hm.mp3", "dua_audio/18hm.mp3", "dua_audio/34hm.mp3", "dua_audio/102hm.mp3",
             "dua_audio/230hm.mp3"]
TIME_TARGET, RSS_TARGET = 1.5, 1.0


def run_measured(cmd, env=None):
    """Runs cmd, returns (status, stdout, stderr, wall s, peak RSS MiB) with wait4's rusage."""
    started = time.monotonic()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        try:
            os.execvpe(cmd[0], cmd, env or os.environ)
        finally:
            os._exit(127)
    os.close(out_w)
    os.close(err_w)
    chunks = {out_r: [], err_r: []}
    sel = selectors.DefaultSelector()
    for fd in chunks:
        sel.register(fd, selectors.EVENT_READ)
    open_fds = set(chunks)
    while open_fds:
        for key, _ in sel.select():
            data = os.read(key.fd, 65536)
            if data:
                chunks[key.fd].append(data)
            else:
                sel.unregister(key.fd)
                os.close(key.fd)
                open_fds.discard(key.fd)
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    return code, b"".join(chunks[out_r]).decode(), b"".join(chunks[err_r]).decode(), wall, usage.ru_maxrss / 1024


def proofkit_round(pk, clips, threads, env):
    code, out, err, wall, rss = run_measured([pk, "transcribe", "--json", "--threads", str(threads)] + clips, env)
    if code != 0:
        raise RuntimeError(f"proofkit transcribe exited {code}: {err.strip()[-300:]}")
    files = [json.loads(line) for line in out.splitlines() if line.strip()]
    return {"transcribe_s": sum(f["timing"]["transcribe_seconds"] for f in files),
            "audio_s": sum(f["seconds"] for f in files), "load_s": files[0]["timing"]["load_seconds"],
            "wall_s": wall, "rss_mib": rss, "transcripts": [f["transcript"] for f in files]}


def peer_round(clips, threads, env):
    code, out, err, wall, rss = run_measured([VENV_PY, PEER, "--threads", str(threads)] + clips, env)
    if code != 0:
        raise RuntimeError(f"whisper_peer.py exited {code}: {err.strip()[-300:]}")
    r = json.loads(out)
    return {"transcribe_s": r["total_transcribe_s"], "audio_s": r["total_audio_s"], "load_s": r["load_s"],
            "wall_s": wall, "rss_mib": rss, "transcripts": [f["transcript"] for f in r["files"]],
            "peer": r["peer"], "compute_type": r["compute_type"]}


def loadavg():
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def fmt_range(values, digits=2):
    med = statistics.median(values)
    return f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--proofkit", default=os.environ.get("PROOFKIT_BIN") or os.path.join(ROOT, ".build", "release", "proofkit"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ap.add_argument("--no-warmup", action="store_true", help="skip the untimed first run of each (a busy machine)")
    ap.add_argument("--output", help="also write the markdown report there")
    a = ap.parse_args(argv)
    if not os.path.exists(VENV_PY):
        sys.exit("no .deps/venv: run the set-up first (the peer needs ctranslate2)")
    if not os.path.exists(a.proofkit):
        sys.exit(f"no proofkit binary at {a.proofkit} (.ci/build-release proofkit)")
    used = [c for c in CLIPS + DUA_CLIPS if os.path.exists(os.path.join(a.data, c))]
    if not used:
        sys.exit(f"no clips under {a.data}")
    clips = [os.path.join(a.data, c) for c in used]
    env = dict(os.environ, ORT_DISABLE_TELEMETRY="1")
    load_before, started = loadavg(), time.time()
    rounds = []
    # one untimed pass each: page cache warm for both models and the clips
    if not a.no_warmup:
        print("warming up (one untimed run each)", file=sys.stderr)
        proofkit_round(a.proofkit, clips, a.threads, env)
        peer_round(clips, a.threads, env)
    for i in range(a.rounds):
        order = ("proofkit", "peer") if i % 2 == 0 else ("peer", "proofkit")
        r = {}
        for who in order:
            r[who] = proofkit_round(a.proofkit, clips, a.threads, env) if who == "proofkit" else peer_round(clips, a.threads, env)
        r["time_ratio"] = r["proofkit"]["transcribe_s"] / r["peer"]["transcribe_s"]
        r["rss_ratio"] = r["proofkit"]["rss_mib"] / r["peer"]["rss_mib"]
        print(f"round {i + 1}/{a.rounds}: transcribe {r['proofkit']['transcribe_s']:.2f} s vs "
              f"{r['peer']['transcribe_s']:.2f} s ({r['time_ratio']:.2f}x), peak RSS {r['proofkit']['rss_mib']:.0f} vs "
              f"{r['peer']['rss_mib']:.0f} MiB ({r['rss_ratio']:.2f}x)", file=sys.stderr)
        rounds.append(r)
    load_after = loadavg()
    audio = rounds[0]["proofkit"]["audio_s"]
    time_ratio = statistics.median(r["time_ratio"] for r in rounds)
    rss_ratio = statistics.median(r["rss_ratio"] for r in rounds)
    same = sum(a_ == b_ for a_, b_ in zip(rounds[0]["proofkit"]["transcripts"], rounds[0]["peer"]["transcripts"]))
    result = {
        "clips": used, "audio_seconds": audio, "threads": a.threads, "rounds": a.rounds,
        "peer": f"{rounds[0]['peer']['peer']} {rounds[0]['peer']['compute_type']}",
        "time_ratio": time_ratio, "rss_ratio": rss_ratio,
        "time_target": TIME_TARGET, "rss_target": RSS_TARGET,
        "same_transcripts": same, "load_before": load_before, "load_after": load_after,
        "cpu": cpu_model(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "per_round": [{k: {kk: vv for kk, vv in v.items() if kk != "transcripts"} if isinstance(v, dict) else v
                       for k, v in r.items()} for r in rounds],
    }
    if a.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0
    rows = []
    for who, label in (("proofkit", "proofkit transcribe (ONNX Runtime)"), ("peer", f"faster-whisper ({result['peer']})")):
        xs = [r[who] for r in rounds]
        rows.append(f"| {label} | {fmt_range([x['transcribe_s'] for x in xs])} | "
                    f"{fmt_range([x['transcribe_s'] / audio * 10 for x in xs])} | "
                    f"{fmt_range([x['transcribe_s'] / audio for x in xs], 3)} | {fmt_range([x['load_s'] for x in xs])} | "
                    f"{fmt_range([x['wall_s'] for x in xs])} | {fmt_range([x['rss_mib'] for x in xs], 0)} |")
    lines = [
        "## `proofkit transcribe` vs faster-whisper (Whisper base, same model.bin)",
        "",
        f"{len(used)} clips, {audio:.1f} s of real Arabic speech ({', '.join(os.path.basename(c) for c in used)}; "
        f"from ../shared/data/{{audio,dua_audio}}), {a.threads} threads each, {a.rounds} alternating rounds"
        f"{' (no warm-up run)' if a.no_warmup else ' after one untimed run each'}. {result['date']}, {result['cpu']}, {os.cpu_count()} CPUs, load average "
        f"{load_before} before and {load_after} after (1/5/15 min).",
        "",
        "Median (min-max) over rounds:",
        "",
        "| recogniser | transcribe s | s per 10 s of speech | real-time factor | load s | process wall s | peak RSS MiB |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "| ratio proofkit / faster-whisper (median of per-round ratios) | measured | target | |",
        "|---|---|---|---|",
        f"| transcribe time | {time_ratio:.2f}x ({min(r['time_ratio'] for r in rounds):.2f}-{max(r['time_ratio'] for r in rounds):.2f}) "
        f"| <= {TIME_TARGET}x | {'met' if time_ratio <= TIME_TARGET else 'NOT met'} |",
        f"| peak RSS (whole process) | {rss_ratio:.2f}x ({min(r['rss_ratio'] for r in rounds):.2f}-{max(r['rss_ratio'] for r in rounds):.2f}) "
        f"| <= {RSS_TARGET}x | {'met' if rss_ratio <= RSS_TARGET else 'NOT met'} |",
        "",
        f"Transcripts identical to the peer's on {same} of {len(used)} clips (proofkit runs the set-up's int8 "
        "graphs, the peer CTranslate2's int8; both greedy).",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.output:
        with open(a.output + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(a.output + ".tmp", a.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
