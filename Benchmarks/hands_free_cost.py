#!/usr/bin/env python3
"""What hands-free listening costs the alarm service while nobody speaks (issue 35: at most 5 % of
one core on this machine).

It runs the real service (`proofkit alarm run`, the release build) on a store of its own with the
file-plugin speaker and a virtual microphone playing silence forever (ALSA's file plugin with
infile /dev/zero; the service paces capture by the clock, as a real microphone is paced), books a
chain whose first ring is 2 s ahead with a 1 s ring and its backup far off, waits for the
service's `listen` line, lets it settle, and then reads the service's CPU time (utime + stime in
/proc/PID/stat) and resident memory over --seconds of listening. The same is measured over the
same time with nothing due (the service idle, waiting for its timer) for comparison.

Usage: python3 Benchmarks/hands_free_cost.py [--proofkit PATH] [--seconds 60]
Prints one line per phase and a JSON line; needs the Whisper and Silero models (the service loads
the recogniser at start, so memory includes it).
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14 and 15)


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def wait_for(path, text, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with open(path, encoding="utf-8", errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.1)
    return False


def measure(pid, seconds):
    start_cpu, start = cpu_seconds(pid), time.time()
    time.sleep(seconds)
    used, elapsed = cpu_seconds(pid) - start_cpu, time.time() - start
    return {"cpu_seconds": round(used, 3), "wall_seconds": round(elapsed, 2),
            "percent_of_one_core": round(100 * used / elapsed, 2), "rss_mib": round(rss_mib(pid), 1)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--proofkit", default=os.path.join(ROOT, ".build/release/proofkit"))
    parser.add_argument("--seconds", type=float, default=60)
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="proofkit-hands-free-cost-")
    try:
        conf = os.path.join(folder, "asound.conf")
        with open(conf, "w") as f:
            f.write(f'pcm.speaker {{ type file slave.pcm {{ type null }} file "{folder}/OUT.raw" format "raw" }}\n'
                    'pcm.vmic { type file slave.pcm { type null } file "/dev/null" infile "/dev/zero" format "raw" }\n')
        sound = os.path.join(folder, "tone.wav")
        subprocess.run(["sox", "-n", "-r", "16000", "-b", "16", "-c", "1", sound, "synth", "1", "sine", "440",
                        "vol", "0.5"], check=True)
        env = dict(os.environ, PROOFKIT_ALSA_CONFIG=conf)
        store = os.path.join(folder, "store")
        log_path = os.path.join(folder, "service.log")
        with open(log_path, "w") as log:
            service = subprocess.Popen([options.proofkit, "alarm", "run", "--store", store, "--device", "speaker",
                                        "--mic", "vmic", "--ring-seconds", "1"], env=env, stderr=log,
                                       stdout=subprocess.DEVNULL)
        try:
            if not wait_for(log_path, "recognizer-loaded", 120):
                sys.exit("the service did not load the recogniser: " + open(log_path).read())
            time.sleep(2)
            idle = measure(service.pid, options.seconds)
            print(f"idle (nothing due):        {idle['percent_of_one_core']:5.2f} % of one core, "
                  f"{idle['rss_mib']:.0f} MiB resident", file=sys.stderr)
            first = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=2)
            subprocess.run([options.proofkit, "alarm", "add", "--store", store, "--at",
                            first.isoformat(timespec="seconds"), "--sound", sound, "--window",
                            f"{int(options.seconds) + 60}s", "--gap", f"{int(options.seconds) + 40}s",
                            "--proof", "voice"], env=env, check=True, capture_output=True)
            if not wait_for(log_path, "listening on vmic", 30):
                sys.exit("the service did not start listening: " + open(log_path).read())
            time.sleep(3)
            listening = measure(service.pid, options.seconds)
            print(f"listening to silence:      {listening['percent_of_one_core']:5.2f} % of one core, "
                  f"{listening['rss_mib']:.0f} MiB resident (target: at most 5 %)", file=sys.stderr)
            print(json.dumps({"idle": idle, "listening_to_silence": listening, "target_percent": 5,
                              "meets_target": listening["percent_of_one_core"] <= 5}))
        finally:
            service.terminate()
            service.wait(timeout=10)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
