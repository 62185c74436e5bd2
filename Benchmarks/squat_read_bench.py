#!/usr/bin/env python3
"""`proofkit squat FILE` end to end against a plain Python `json.loads` loop, side by side.

    Benchmarks/squat_read_bench.py [--bin .build/release/proofkit] [--frames 400000] [--rounds 5]
                                   [--data ../shared/data/squat] [--keep]

Makes one large pose file in a temporary folder: the shared recordings (or the fixtures) one after
another, times shifted so time keeps growing, until --frames lines. Then, alternating in every round:

* proofkit: `proofkit squat FILE --json --target 1000000` (read, decode, count, print one object);
* peer: Python reading the same file line by line, `json.loads` on each line and extracting the 8
  joints' [x, y, conf] into a tuple (the same work as the decoding, without any counting);
* stdin: `proofkit squat - --json ... < FILE` (the live path), for the record.

Wall time, CPU time (user + sys) and peak RSS of each child (GNU time, else wait4). Reports frames/s, the median ratio of peer time over
proofkit time (>1 = proofkit faster) with its range over rounds, and peak RSS. Targets (issue 17):
>= 3x the peer, >= 1M frames/s, peak RSS < 32 MiB whatever the file's length (checked at 2
lengths). A spread (max/min - 1) over 20% is marked noisy.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOINTS = ["left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle",
          "left_shoulder", "right_shoulder"]
PEER = r'''
import json, sys
JOINTS = %r
n = 0
acc = 0.0
with open(sys.argv[1], "rb") as f:
    for line in f:
        if not line.strip():
            continue
        d = json.loads(line)
        t = d["t"]
        k = d["keypoints"]
        pts = tuple(k.get(j) for j in JOINTS)
        acc += t
        n += 1
print(n)
''' % (JOINTS,)


def make_file(folder, frames, data):
    """Streams the recordings into one file (the parent stays small: a child's peak RSS as the
    kernel reports it includes what its parent had mapped when it forked)."""
    import json
    files = sorted(f for f in os.listdir(data) if f.endswith(".jsonl"))
    path = os.path.join(folder, f"poses_{frames}.jsonl")
    written, offset = 0, 0.0
    with open(path, "w") as out:
        while written < frames:
            for name in files:
                last = 0.0
                with open(os.path.join(data, name)) as f:
                    for line in f:
                        if written >= frames:
                            break
                        if not line.strip():
                            continue
                        row = json.loads(line)
                        last = row["t"]
                        t = round(offset + last, 4)
                        out.write(json.dumps({"t": t, "keypoints": row["keypoints"]}, separators=(",", ":")) + "\n")
                        written += 1
                offset = round(offset + last + 1.0, 4)
    return path


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def measure(cmd, stdin=None):
    """Wall seconds (this process's clock around the child), peak RSS in MiB and stdout. The RSS
    comes from GNU time when installed (it forks the command from its own small process), else
    from wait4 (which then also counts this Python's pages at fork)."""
    rss_file = tempfile.NamedTemporaryFile(prefix="rss-", delete=False)
    rss_file.close()
    full = [TIME, "-f", "%M %U %S", "-o", rss_file.name] + cmd if TIME else cmd
    start = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        proc = subprocess.Popen(full, stdin=source, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate()
        _, status, usage = os.wait4(proc.pid, 0) if proc.returncode is None else (0, proc.returncode, None)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"squat_read_bench: {cmd} failed: {err.decode()[:300]}")
    rss, cpu = float("nan"), float("nan")
    if TIME:
        with open(rss_file.name) as f:
            fields = f.read().split()[-3:]
        rss, cpu = int(fields[0]) / 1024.0, float(fields[1]) + float(fields[2])
    os.unlink(rss_file.name)
    return wall, rss, cpu, out


def spread(values):
    return max(values) / min(values) - 1 if values and min(values) > 0 else 0


def cell(values, digits=2, unit=""):
    text = f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}-{max(values):.{digits}f})"
    return text + (" **noisy**" if spread(values) > 0.2 else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, ".build", "release", "proofkit"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--frames", type=int, default=400_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", default=os.path.join(os.path.dirname(ROOT), "shared", "data", "squat"))
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--summary-json", help="also write the medians here (for run_all.py's summary)")
    args = parser.parse_args()
    if not os.path.isdir(args.data):
        args.data = os.path.join(ROOT, "Tests", "TestSupport", "Fixtures", "squat")
    folder = tempfile.mkdtemp(prefix="squat-read-bench-")
    try:
        big = make_file(folder, args.frames, args.data)
        small = make_file(folder, args.frames // 8, args.data)
        peer = os.path.join(folder, "peer.py")
        with open(peer, "w") as f:
            f.write(PEER)
        with open("/proc/loadavg") as f:
            load_before = " ".join(f.read().split()[:3])
        squat = [args.bin, "squat", big, "--json", "--target", "1000000"]
        rows = {"proofkit": [], "peer": [], "stdin": [], "rss_proofkit": [], "rss_peer": [], "rss_small": [],
                "ratio": [], "cpu_proofkit": [], "cpu_peer": [], "cpu_stdin": [], "cpu_ratio": []}
        for r in range(args.rounds):
            order = ["proofkit", "peer", "stdin"] if r % 2 == 0 else ["peer", "stdin", "proofkit"]
            times, cpus = {}, {}
            for name in order:
                if name == "proofkit":
                    wall, rss, cpu, out = measure(squat)
                    rows["rss_proofkit"].append(rss)
                elif name == "stdin":
                    wall, rss, cpu, out = measure([args.bin, "squat", "-", "--json", "--target", "1000000"], stdin=big)
                else:
                    wall, rss, cpu, out = measure([args.python, peer, big])
                    rows["rss_peer"].append(rss)
                    assert int(out.split()[0]) == args.frames
                times[name] = wall
                cpus[name] = cpu
                rows[name].append(wall)
                rows["cpu_" + name].append(cpu)
            rows["ratio"].append(times["peer"] / times["proofkit"])
            rows["cpu_ratio"].append(cpus["peer"] / max(cpus["proofkit"], 0.005))
            _, rss, _, _ = measure([args.bin, "squat", small, "--json", "--target", "1000000"])
            rows["rss_small"].append(rss)
        with open("/proc/loadavg") as f:
            load_after = " ".join(f.read().split()[:3])
        cpu = "unknown"
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        fps = [args.frames / t for t in rows["proofkit"]]
        fps_peer = [args.frames / t for t in rows["peer"]]
        fps_stdin = [args.frames / t for t in rows["stdin"]]
        print(f"## squat pose-line reading: {args.frames} frames, {os.path.getsize(big) / 1e6:.1f} MB, {args.rounds} rounds")
        print(f"CPU {cpu}; load average before {load_before}, after {load_after}. Median (min-max); a spread over 20% is marked noisy.\n")
        def per_cpu(name):
            return [args.frames / max(c, 0.005) / 1e6 for c in rows["cpu_" + name]]
        print("| what | frames/s (wall) | frames/s (CPU) | wall s | CPU s | peak RSS MiB |")
        print("|---|---:|---:|---:|---:|---:|")
        print(f"| `proofkit squat FILE --json` | {cell([f / 1e6 for f in fps], 2, 'M')} | {cell(per_cpu('proofkit'), 2, 'M')} | {cell(rows['proofkit'], 3)} | {cell(rows['cpu_proofkit'], 2)} | {cell(rows['rss_proofkit'], 1)} |")
        print(f"| `proofkit squat - < FILE` | {cell([f / 1e6 for f in fps_stdin], 2, 'M')} | {cell(per_cpu('stdin'), 2, 'M')} | {cell(rows['stdin'], 3)} | {cell(rows['cpu_stdin'], 2)} | - |")
        print(f"| peer: Python json.loads loop | {cell([f / 1e6 for f in fps_peer], 2, 'M')} | {cell(per_cpu('peer'), 2, 'M')} | {cell(rows['peer'], 3)} | {cell(rows['cpu_peer'], 2)} | {cell(rows['rss_peer'], 1)} |")
        print(f"| proofkit, {args.frames // 8} frames (RSS vs length) | - | - | - | - | {cell(rows['rss_small'], 1)} |")
        print(f"\nproofkit vs peer, per round: wall {cell(rows['ratio'], 2, 'x')}, CPU {cell(rows['cpu_ratio'], 2, 'x')} "
              f"(peer / proofkit; > 1 = proofkit faster). Targets: >= 3x, >= 1M frames/s, RSS < 32 MiB. "
              f"On a loaded machine (load average above the core count, {os.cpu_count()} here) wall time "
              f"includes waiting for a core; CPU time (GNU time's user + sys) does not.")
        if args.summary_json:
            import json
            summary = {
                "frames": args.frames,
                "fps_wall": statistics.median(fps), "fps_cpu": statistics.median(per_cpu("proofkit")) * 1e6,
                "ratio_wall": statistics.median(rows["ratio"]), "ratio_cpu": statistics.median(rows["cpu_ratio"]),
                "rss_mib": max(rows["rss_proofkit"]), "rss_small_mib": max(rows["rss_small"]),
                "noisy_wall": spread(rows["ratio"]) > 0.2, "noisy_cpu": spread(rows["cpu_ratio"]) > 0.2,
                "load_before": load_before, "load_after": load_after,
            }
            with open(args.summary_json, "w") as f:
                json.dump(summary, f)
    finally:
        if args.keep:
            print(f"files kept in {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
