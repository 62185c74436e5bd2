#!/usr/bin/env python3
"""Voice-gate evaluation on real speech mixed into real room noises, source-disjoint.

What it measures: for each gate (`proofkit voice FILE --json --vad MODE`), the voiced seconds it
finds in real speech mixed into real noise at 20, 10 and 5 dB SNR, against a reference measured on
the clean speech, and the voiced seconds it finds in noise alone. Issue 14's targets:
  default gate, unseen noise sources: noise alone <= 0.5 s per file; voiced-seconds error median
    <= 10 % and every file <= 25 % at SNR >= 10 dB; median <= 15 % at 5 dB;
  --vad energy: noise alone <= 1.0 s per file (ticking clocks included); median <= 15 % at >= 10 dB.

Sources (nothing here is committed to the repository; the clips are made in --work):
- speech: ../shared/data/audio/speech (the TUNING speech: six clips, several speakers; since the
  end-of-reading work also ten other du'as of the dua_audio reader, not the held-out ten), and the
  HELD-OUT speech: the read basmala of ../shared/data/audio/recitation (the other files there are
  sung adhans, not reading) and ten of ../shared/data/dua_audio (one reader; no licence:
  evaluation only, never copied).
- noise, TUNING sources: ../shared/data/audio/noise (air conditioner, fan, fridge, night insects)
  and the Debian package tuxpaint-data/tuxpaint-plugins-default (recorded key clicks typed at
  3-9 per second, a drip at ~1.5 per second, rain, the key click sequenced as a clock at 2 and 6
  per second).
- noise, HELD-OUT sources (never used while tuning): Debian pingus-data (a recorded tick, sequenced
  as a clock at 1, 4 and 8 per second), lmms-common (a drum side-stick sequenced as a clock at 2 per
  second, a shaker at 3 per second), lincity-ng-data (recorded water, fire, a train, a windmill, a
  blacksmith's hammer, a coal mine, a dirt track, heavy industry).
  Since the steady-pitch work (2026-12-01, second pass) hedgewars' bee over water and lincity's
  Water1 are TUNING sources (tuned against).
- noise, former HELD-OUT 2 (chosen by name and never heard before their first figures were taken,
  then studied file by file; TUNING sources since the end-of-reading work, 2026-12-02): Debian
  ufoai-sound (ambience: water, a fountain, hum, a machine, a pump, crickets, steam),
  simutrans-pak64 (water, a diesel engine, tropical insects and birds, steam) and openttd-opensfx
  (a lift's machinery, electric sparking, a helicopter, bubbles, a chainsaw, wind).
- noise, HELD-OUT 3 (split "heldout3", chosen by name only, 2026-12-02, and not run through any
  gate until the end-of-reading work's final figures): Debian openclonk-data (birds, a mosquito,
  rain, a waterfall, a drip at 1 per second, boiling water, a fan, a furnace, wind),
  megaglest-data (an autumn day and night outdoors), gcompris-qt-data (rain in a garden, water
  filling a lock), openarena-data (dripping water), trigger-rally-data (a car engine) and
  supertux-data (a ticking clock at 1 per second). Mixed with the held-out speech.
- noise, HELD-OUT 4 (split "heldout4", the spares named with heldout3 by name only, run through no
  gate before the learned-veto study's final figures, 2026-12-02): openclonk-data (a pumpjack, a
  steam engine, an electrical hum), megaglest-data (a birch forest's night and rain, winter wind),
  supertux-data (rain, a waterfall), trigger-rally-data (wind), openarena-data (wind, a fan).
- noise, HELD-OUT 5 (split "heldout5", chosen by name, credits and duration only after the veto was
  merged, run once, 2026-12-02): endless-sky-data (ambient machinery), tuxpaint-stamps-default (a bee,
  a mosquito, a hornet, a grasshopper, a blackbird), widelands-data (crickets, bubbling in a
  fermenter), flare-game (birds, an owl, a river, cave droplets, rain), cube2-data (a water drip).
- noise, HELD-OUT 6 (split "heldout6", the spares named with heldout5 by name, credits and duration
  only, run through no gate before the veto retrained on all earlier splits was fixed, 2026-12-02):
  flare-game (wind, ravens, wind in a cave), cube2-data (a wind gust, an idling chainsaw motor),
  widelands-data (a bird, a frog, big bubbles on water, a turning mill), tuxpaint-stamps-default (a
  lark, a toilet flush).
- noise, HELD-OUT 7 (split "heldout7", chosen by a helper by name, credits and duration only from
  eight packages nothing else here uses, 2026-12-02, run once): minetest-mod-xdecor (boiling water),
  minetest-mod-nether (a steam vent), minetest-mod-homedecor (a running tap, a shower),
  sonic-pi-samples (record-surface hiss, a 3D printer's motors), warzone2100-data (an oil pump),
  gnome-shell-pomodoro-data (a ticking clock, a kitchen timer, woodland birds), btanks-data (a swamp,
  the countryside, a city street), frozen-bubble-data (a typewriter key, sequenced as typing).
- noise, HELD-OUT 8 (split "heldout8", the spares named with heldout7 by name, credits and duration
  only, run through no gate before the veto retrained on heldout6 and heldout7 was fixed, 2026-12-02):
  btanks-data (a forest, a passing train), sonic-pi-samples (an electric hum), minetest-mod-homedecor
  (a toilet flush, a small fire), heroes-sound-effects (a clock), enigma-data (a timer),
  tuxtype-data (a tock, sequenced as a clock at 1 per second), tuxmath-data (a tower clock).
- noise, HELD-OUT 9 (split "heldout9", chosen by a helper by name, credits and duration only from
  packages nothing else here uses, 2026-12-02 session 11, run once after the Silero edge rule was
  fixed): bucklespring-data (a keyboard's key, sequenced as typing), crossfire-client (a drip, 1.5
  per second), neverball-common (a tick and a tock, a clock at 1 per second), plee-the-bear-data
  (rain), minetest-mod-unified-inventory (birds), pachi-data (a storm), freedink-data (a fire),
  libreoffice-common (a train), trophy-data (a car engine), crrcsim-data (an electric motor),
  caveexpress-data (a waterfall), vodovod (bubbles). A thirteenth pick, micropolis-data's "heavy
  traffic", turned out to be talk and is left out (see the sources).
- noise, HELD-OUT 10 (split "heldout10", the spares named with heldout9 by name, credits and duration
  only, 2026-12-02 session 11, each checked for talk first (Whisper base: no-speech probability
  0.58 or more, no language over 0.6), run once with the gates fixed): hannah-data (a drip),
  vodovod (a water drop), plee-the-bear-data (a tick, a clock at 2 per second),
  minetest-mod-unified-inventory (an owl), libreoffice-common (nature), crrcsim-data (a glider's
  rushing air), caveexpress-data (a geyser), crossfire-client (a tower clock).
- noise, HELD-OUT 11 (split "heldout11", chosen by a helper by name, credits and duration only from
  nine packages nothing else here uses, 2026-12-02 session 12, checked for talk first, run once with
  the periodic-train rule fixed): supertuxkart-data (a recorded ticking clock, a machine), eboard (a
  chess clock's tick, 1 per second), focuswriter (a typewriter key, as typing), scratch (a water drop,
  1.5 per second; crickets), ardentryst (footsteps on concrete, in walks; rain), orage-data (a knock
  every 5 s; a boiling kettle), redeclipse-data (a forest at dawn, distant traffic), csoundqt-examples
  (a seashore), qtmultimedia5-examples (an engine drone).
- noise, HELD-OUT 12 (split "heldout12", chosen by a helper by name, credits and duration only from
  thirteen packages nothing else here uses, weighted to periodic and impulsive sounds, 2026-12-02
  session 12, checked for talk first, run once with the level-periodicity rule fixed): elpa-redtick (a
  recorded tock-tick, looped), jag (a timer clock), natbraille (a tick, 1 per second), triplea (a
  typewriter), libmlv3-dev (footsteps, in walks), rockdodger (a drip, 1.5 per second), tuxfootball (a
  ball bounced in runs), planetblupi-common (sawing wood in bouts; a fire), hyperrogue-music (a steam
  hiss), netpanzer-data (an idling engine), trackballs-data (a machine), displaycal (a hum),
  dopewars-data (a train). triplea's marching column was left out before the run (see the sources).
- noise, HELD-OUT 13 (split "heldout13", chosen by a helper by name, credits and duration only from
  ten packages nothing else here uses, 2026-12-02 session 12; checked for talk and run once in session
  13): qabcs-data (a wristwatch, typing), muse (a metronome, 2 per second in bars of four),
  teeworlds-data (footsteps, in walks), castle-game-engine-doc (steps on grass; a cricket), kanagram
  (chalk on a board, in bouts), 7kaa-data (rain, wind), colobot-common-sounds (burning, a rumble),
  searchandrescue-data (inside a jet), extremetuxracer-data (sliding through leaves), pushover
  (tapping). basic256's bouncing ball was left out before the run (see the sources).
  The packages are fetched with `apt-get download` and unpacked with `dpkg -x` into --work.
  Clocks, typing and drips are real recordings of single events placed at the stated rates (with a
  few per cent jitter) over -70 dBFS white noise (a microphone's self-noise).
- mixtures: 1.5 s of noise, the speech (at -26 dBFS active level), 2 s of noise; the noise's RMS
  over the whole file is SNR dB below the speech's active level. Noise alone: 15 s at the level
  of the 10 dB mixtures.

Reference (stated in the report): `proofkit voice --vad silero --no-veto` on the clean speech clip,
placed as in the mixtures over -80 dBFS dither (what a careful detector says without the room):
Silero's own segments, so the reference does not move when the veto or its edge rule change (until
2026-12-02 session 13 it was `--vad silero` of a build before the edge rule, given with
--reference-binary; on all 27 clean clips the two give the same segments, so earlier figures stand
as they are). So the
Silero figures measure how much the room changes Silero's answer, and the energy figures include
the two gates' different conventions (the energy gate bridges pauses up to 300 ms). As a check, a
plain energy reference on the clean speech (20 ms frames at least max(p10 + 15 dB, p95 - 35 dB,
-65 dBFS), gaps up to 200 ms bridged, runs under 60 ms dropped) is compared with it per clip.

Error = (voiced - reference) / reference, per file. Results are printed as a table and written as
JSON (--out).

Usage: python3 Benchmarks/voice_gate_eval.py [--binary .build/release/proofkit]
         [--modes energy,silero,both] [--split tune|heldout|heldout3|heldout4|heldout5|heldout6|heldout7|heldout8|heldout9|heldout10|heldout11|heldout12|heldout13|all] [--noise SUBSTRING]
         [--work /tmp/proofkit-voice-eval] [--jobs 2] [--out report.json] [--per-file]
Needs numpy, ffmpeg, apt-get/dpkg (for the Debian noises) and a built proofkit.
"""
import argparse
import concurrent.futures
import glob
import gzip
import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import struct
import wave
import zipfile
import zlib

import numpy as np

RATE = 16000
FRAME = 320  # 20 ms
SPEECH_LEVEL = -26.0
SNRS = [20, 10, 5]
MAX_SPEECH_SECONDS = 20.0

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "data"))
PACKAGES = ["tuxpaint-data", "tuxpaint-plugins-default", "pingus-data", "lmms-common", "lincity-ng-data",
            "minetest-data", "lugaru-data", "scorched3d-data", "wesnoth-1.16-data", "hedgewars-data",
            "ufoai-sound", "simutrans-pak64", "openttd-opensfx",
            "openclonk-data", "gcompris-qt-data", "openarena-data", "trigger-rally-data", "supertux-data", "megaglest-data",
            "tuxpaint-stamps-default", "flare-game", "endless-sky-data", "cube2-data", "widelands-data",
            "gnome-shell-pomodoro-data", "btanks-data", "minetest-mod-xdecor", "minetest-mod-nether",
            "minetest-mod-homedecor", "sonic-pi-samples", "frozen-bubble-data", "warzone2100-data",
            "heroes-sound-effects", "enigma-data", "tuxtype-data", "tuxmath-data",
            "bucklespring-data", "crossfire-client", "neverball-common", "plee-the-bear-data",
            "minetest-mod-unified-inventory", "pachi-data", "freedink-data", "libreoffice-common",
            "trophy-data", "crrcsim-data", "caveexpress-data", "vodovod", "hannah-data",
            "supertuxkart-data", "eboard", "focuswriter", "scratch", "ardentryst", "orage-data", "redeclipse-data",
            "csoundqt-examples", "qtmultimedia5-examples",
            "elpa-redtick", "jag", "natbraille", "triplea", "rockdodger", "tuxfootball", "planetblupi-common",
            "hyperrogue-music", "netpanzer-data", "trackballs-data", "displaycal", "dopewars-data", "libmlv3-dev",
            "qabcs-data", "muse", "teeworlds-data", "castle-game-engine-doc", "kanagram", "7kaa-data",
            "colobot-common-sounds", "searchandrescue-data", "extremetuxracer-data", "pushover"]
# Held-out noise splits: "heldout" (the first two passes) and "heldout3" (added with the end-of-reading
# work, 2026-12-02, never run through a gate before its figures were taken). Both use the held-out
# speech. The former "heldout2" sources were studied file by file in the 2026-12-02 end-of-reading
# work, so they are tuning sources since then (mixed with the tuning speech). "heldout4" (2026-12-02,
# session 9): the spares named when heldout3 was chosen, run once for the learned-veto study's final
# figures (VOICE_GATE_EVAL.md). "heldout5" (2026-12-02, session 9): chosen by name only after the veto was
# merged, run once.
SPLITS = ["tune", "heldout", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7", "heldout8", "heldout9",
          "heldout10", "heldout11", "heldout12", "heldout13"]


def speech_split(noise_split):
    return "tune" if noise_split == "tune" else "heldout"


# ---------------------------------------------------------------------------------------------
# Audio helpers


def decode(path):
    """Any audio file -> mono float32 at 16 kHz (ffmpeg)."""
    out = subprocess.run(
        ["ffmpeg", "-v", "error", "-i", path, "-ac", "1", "-ar", str(RATE), "-f", "f32le", "-"],
        capture_output=True, check=True).stdout
    return np.frombuffer(out, dtype=np.float32).astype(np.float64)


def write_wav(path, samples):
    pcm = np.clip(np.round(samples * 32767), -32768, 32767).astype("<i2")
    tmp = path + ".tmp"
    with wave.open(tmp, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())
    os.replace(tmp, path)


def frame_levels(x):
    n = len(x) // FRAME
    frames = x[: n * FRAME].reshape(n, FRAME)
    frames = frames - frames.mean(axis=1, keepdims=True)
    return 10 * np.log10(np.maximum((frames ** 2).mean(axis=1), 1e-12))


def reference_segments(x):
    """The clean speech's active stretches, in seconds (see the module doc)."""
    levels = frame_levels(x)
    p10, p95 = np.percentile(levels, 10), np.percentile(levels, 95)
    threshold = max(p10 + 15, p95 - 35, -65)
    active = levels >= threshold
    runs = []
    start = None
    for i, on in enumerate(active):
        if on and start is None:
            start = i
        if not on and start is not None:
            runs.append([start, i])
            start = None
    if start is not None:
        runs.append([start, len(active)])
    bridged = []
    for run in runs:
        if bridged and run[0] - bridged[-1][1] <= 10:  # 200 ms
            bridged[-1][1] = run[1]
        else:
            bridged.append(run)
    return [(a * FRAME / RATE, b * FRAME / RATE) for a, b in bridged if b - a >= 3]


def rms_db(x):
    return 10 * np.log10(max(np.mean(x ** 2), 1e-20))


def active_level(x, segments):
    parts = [x[int(a * RATE): int(b * RATE)] for a, b in segments]
    return rms_db(np.concatenate(parts)) if parts else rms_db(x)


def loop_to(x, n):
    """Loops a recording to n samples with 50 ms crossfades."""
    fade = min(800, len(x) // 4)
    out = np.array(x[:n], dtype=np.float64)
    ramp = np.linspace(0, 1, fade)
    while len(out) < n:
        head = x[:fade] * ramp + out[-fade:] * (1 - ramp)
        out = np.concatenate([out[:-fade], head, x[fade:]])
    return out[:n]


def sequence(event, n, rate_per_second, seed, jitter=0.03, accent=(1.0, 0.8), burst=False):
    """Places a recorded event (a tick, a key click, a drip) at `rate_per_second` over -70 dBFS
    white noise. `burst`: typing (random gaps, pauses between words)."""
    rng = random.Random(seed)
    out = np.random.default_rng(seed).normal(0, 10 ** (-70 / 20), n)
    period = RATE / rate_per_second
    t = rng.uniform(0, period)
    k = 0
    while t < n - len(event):
        i = int(t)
        gain = accent[k % len(accent)] * (rng.uniform(0.6, 1.0) if burst else 1.0)
        out[i: i + len(event)] += event * gain
        k += 1
        if burst:
            t += period * rng.uniform(0.4, 1.6) + (RATE * rng.uniform(0.2, 0.6) if rng.random() < 0.15 else 0)
        else:
            t += period * (1 + rng.uniform(-jitter, jitter))
    return out


# ---------------------------------------------------------------------------------------------
# Sources


def fetch_packages(work):
    """Downloads and unpacks the Debian packages not unpacked yet (the marker lists those done)."""
    root = os.path.join(work, "debian")
    marker = os.path.join(root, ".unpacked")
    done = set(open(marker).read().split()) if os.path.exists(marker) else set()
    if len(done) == 0 and os.path.exists(marker):
        done = set(PACKAGES[:5])  # an older marker (empty) was written after the first five
    missing = [p for p in PACKAGES if p not in done]
    if not missing:
        return os.path.join(root, "x")
    os.makedirs(root, exist_ok=True)
    fetch = [p for p in missing if not glob.glob(os.path.join(root, p + "_*.deb"))]
    if fetch:
        subprocess.run(["apt-get", "download"] + fetch, cwd=root, check=True, capture_output=True)
    for package in missing:
        for deb in glob.glob(os.path.join(root, package + "_*.deb")):
            subprocess.run(["dpkg", "-x", deb, os.path.join(root, "x")], check=True)
    with open(marker + ".tmp", "w") as f:
        f.write("\n".join(sorted(done | set(missing))) + "\n")
    os.replace(marker + ".tmp", marker)
    return os.path.join(root, "x")


def noise_sources(work):
    """(name, split, generator(n samples) -> array) for every noise source."""
    deb = fetch_packages(work)
    shared = os.path.join(SHARED, "audio", "noise")
    tux = os.path.join(deb, "usr/share/tuxpaint/sounds")
    lin = os.path.join(deb, "usr/share/games/lincity-ng/sounds")
    lmms = os.path.join(deb, "usr/share/lmms/samples")
    pingus = os.path.join(deb, "usr/share/games/pingus/data/sounds")
    cache = {}

    def load(path):
        if path not in cache:
            cache[path] = decode(path)
        return cache[path]

    def looped(path):
        return lambda n, seed: loop_to(load(path), n)

    def joined(paths):
        """Several takes of one sound (a stream's four recordings), end to end, looped."""
        return lambda n, seed: loop_to(np.concatenate([load(p) for p in paths]), n)

    def seq(path, rate, burst=False):
        return lambda n, seed: sequence(load(path), n, rate, seed, burst=burst)

    sources = []
    for name in ["noise_ac_001.wav", "noise_fan_001.mp3", "noise_fridge_001.wav", "noise_night_001.ogg"]:
        sources.append(("shared:" + name.split(".")[0], "tune", looped(os.path.join(shared, name))))
    sources += [
        ("tuxpaint:typing", "tune", seq(os.path.join(tux, "keyclick.wav"), 6, burst=True)),
        ("tuxpaint:drip", "tune", seq(os.path.join(tux, "magic/drip.wav"), 1.5)),
        ("tuxpaint:rain", "tune", looped(os.path.join(tux, "magic/rain.ogg"))),
        # (tuxpaint's click.wav is a synthetic 160 ms tone, not a tick: not used.)
        ("tuxpaint:keyclick-clock-2/s", "tune", seq(os.path.join(tux, "keyclick.wav"), 2)),
        ("tuxpaint:keyclick-clock-6/s", "tune", seq(os.path.join(tux, "keyclick.wav"), 6)),
        ("pingus:tick-clock-1/s", "heldout", seq(os.path.join(pingus, "tick.wav"), 1)),
        ("pingus:tick-clock-4/s", "heldout", seq(os.path.join(pingus, "tick.wav"), 4)),
        ("pingus:tick-clock-8/s", "heldout", seq(os.path.join(pingus, "tick.wav"), 8)),
        ("lmms:sidestick-clock-2/s", "heldout", seq(os.path.join(lmms, "drums/sidestick01.ogg"), 2)),
        ("lmms:shaker-3/s", "heldout", seq(os.path.join(lmms, "drums/shaker01.ogg"), 3)),
    ]
    mt = os.path.join(deb, "usr/share/games/minetest/games/minetest_game/mods/env_sounds/sounds")
    sources += [
        # Added for the running-water work: flowing water, bubbling lava and wind (tuning only).
        ("minetest:stream", "tune", joined([os.path.join(mt, f"env_sounds_water.{i}.ogg") for i in range(1, 5)])),
        ("minetest:lava-bubbling", "tune", joined([os.path.join(mt, f"env_sounds_lava.{i}.ogg") for i in range(1, 3)])),
        ("lugaru:wind", "tune", looped(os.path.join(deb, "usr/share/games/lugaru/Sounds/Wind.ogg"))),
    ]
    s3d = os.path.join(deb, "usr/share/games/scorched3d/data/globalmods/none/data/wav/misc")
    wes = os.path.join(deb, "usr/share/games/wesnoth/1.16/data/core/sounds/ambient")
    sources += [
        # Held out, added with them (never looked at while tuning): rain, ocean waves, a ship's
        # creak and sea, a campfire, water under a bee.
        ("scorched3d:rain", "heldout", looped(os.path.join(s3d, "rain.wav"))),
        ("scorched3d:oceanwaves", "heldout", looped(os.path.join(s3d, "oceanwaves.wav"))),
        ("wesnoth:ship", "heldout", looped(os.path.join(wes, "ship.ogg"))),
        ("wesnoth:campfire", "heldout", looped(os.path.join(wes, "campfire.ogg"))),
        # Moved to tuning with the steady-pitch veto (2026-12-01, second pass): tuned against.
        ("hedgewars:beewater", "tune", looped(os.path.join(deb, "usr/share/games/hedgewars/Data/Sounds/beewater.ogg"))),
    ]

    def member(kind, archive, name):
        """Extracts `name` from an archive once (into work/debian/extracted/) and returns its path.
        kind: "zip" (zip/pk3); "cat" (openttd-opensfx's catalogue of named WAV files: `name` is the
        entry's index; entry k is a name (length byte + text) followed by the WAV); "c4group"
        (OpenClonk .ocg: gzip with magic 1e 8c, then a 204-byte header scrambled by swapping bytes 0/2
        of each triple and xor 237, then 316-byte entry records (name[260], packed, child, size,
        reserved, offset); child groups nest the same way, uncompressed); "qrc" (Qt .rcc v2/3:
        22-byte tree nodes, entries zlib-compressed (flag 1) or stored)."""
        path = os.path.join(work, "debian", "extracted", os.path.basename(archive) + "." + name.replace("/", "_"))
        if os.path.exists(path):
            return path
        raw = open(archive, "rb").read()
        if kind == "zip":
            with zipfile.ZipFile(archive) as z:
                data = z.read(name)
        elif kind == "cat":
            index = int(name)
            offset, size = struct.unpack("<II", raw[index * 8: index * 8 + 8])
            offset &= 0x7FFFFFFF
            data = raw[offset + 1 + raw[offset]: offset + size]
        elif kind == "c4group":
            raw = gzip.decompress(b"\x1f\x8b" + raw[2:])

            def find(base, parts):
                h = bytearray(raw[base: base + 204])
                for i in range(0, len(h) - 2, 3):
                    h[i], h[i + 2] = h[i + 2], h[i]
                h = bytes(b ^ 237 for b in h)
                assert h.startswith(b"RedWolf Design GrpFolder"), archive
                count = struct.unpack("<i", h[36:40])[0]
                table, start = base + 204, base + 204 + count * 316
                for k in range(count):
                    e = raw[table + k * 316: table + (k + 1) * 316]
                    _, child, size, _, offset = struct.unpack("<5i", e[260:280])
                    if e[:260].split(b"\0")[0].decode("latin-1") == parts[0]:
                        return find(start + offset, parts[1:]) if child else raw[start + offset: start + offset + size]
                raise KeyError(name)
            data = find(0, name.split("/"))
        else:  # qrc
            version, tree, blobs, names = struct.unpack(">4I", raw[4:20])
            node = 22 if version >= 2 else 14

            def label(offset):
                n = struct.unpack(">H", raw[names + offset: names + offset + 2])[0]
                return raw[names + offset + 6: names + offset + 6 + 2 * n].decode("utf-16-be")

            i = 0
            for part in name.strip("/").split("/"):
                count, first = struct.unpack(">II", raw[tree + i * node + 6: tree + i * node + 14])
                i = next(c for c in range(first, first + count)
                         if label(struct.unpack(">I", raw[tree + c * node: tree + c * node + 4])[0]) == part)
            flags = struct.unpack(">H", raw[tree + i * node + 4: tree + i * node + 6])[0]
            offset = blobs + struct.unpack(">I", raw[tree + i * node + 10: tree + i * node + 14])[0]
            data = raw[offset + 4: offset + 4 + struct.unpack(">I", raw[offset: offset + 4])[0]]
            if flags & 1:
                data = zlib.decompress(data[4:])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
        return path

    def looped_in(kind, archive, name):
        return lambda n, seed: loop_to(load(member(kind, archive, name)), n)

    def seq_in(kind, archive, name, rate):
        return lambda n, seed: sequence(load(member(kind, archive, name)), n, rate, seed)

    # The former heldout2: real recordings chosen by name (water, insects, hum, buzz, motors) before any
    # gate heard them; tuning sources since the end-of-reading work (see SPLITS).
    # ufoai-sound (GPL-2+): ambience loops inside a zip (0snd.pk3). openttd-opensfx (each sound
    # CC-BY 3.0, CC-BY-SA 3.0 or CC0, credited in the file): one catalogue of named WAV files.
    pk3 = os.path.join(deb, "usr/share/games/ufoai/base/0snd.pk3")
    cat = os.path.join(deb, "usr/share/games/openttd/baseset/opensfx/opensfx.cat")
    simutrans = os.path.join(deb, "usr/share/games/simutrans/pak/sound")
    for sound in ["water", "waterfontain", "hum", "machine1", "minepump03", "cricket_loop", "steam"]:
        sources.append(("ufoai:" + sound, "tune", looped_in("zip", pk3, f"sound/ambience/{sound}.ogg")))
    for name in ["Water", "diesel", "tropic", "steam"]:
        sources.append(("simutrans:" + name, "tune", looped(os.path.join(simutrans, name + ".wav"))))
    for index, name in [(11, "mining-machinery"), (12, "electric-sparking"), (24, "helicopter"),
                        (46, "bubble-generated"), (51, "plastic-mine-bubbles"), (56, "chainsaw"), (52, "wind")]:
        sources.append((f"opensfx:{name}", "tune", looped_in("cat", cat, str(index))))
    for name in ["Water1", "Fire1", "RailTrain1", "WindMill1", "Blacksmith3", "CoalMine2", "DirtTrack1", "IndustryHigh1"]:
        # Water1 moved to tuning with the steady-pitch veto (2026-12-01, second pass).
        sources.append(("lincity:" + name, "tune" if name == "Water1" else "heldout", looped(os.path.join(lin, name + ".wav"))))
    # heldout3: real recordings chosen by name (birds, night, insect, rain, running/dripping water, a kettle,
    # a fan, a burner, an engine, a clock, wind) before any gate heard them (2026-12-02). Licences and credits:
    # CC0: mosquito (Zywx, freesound 188708), boiling (fryzu82, 142333), furnace (tc630, 47835); CC-BY 3.0:
    # birds (dobroide, 54746), rain, water-fill (inchadney, 34681), waterfall (volivieri, 38390), waterdrop,
    # fan (Cambra, 102710), wind (ERH, 34338); CC-BY-SA 3.0: megaglest (Elimnator, soundbible.com); Free Art
    # License: gcompris rain (Lionel Allorge, Yves Combe); GPL-2+: openarena drops, trigger-rally engine;
    # GPL-3+: supertux ticking. Nothing is redistributed: they are read from the packages at run time.
    oc = os.path.join(deb, "usr/share/games/openclonk/Sound.ocg")
    gc = os.path.join(deb, "usr/share/gcompris-qt/rcc")
    mg = os.path.join(deb, "usr/share/games/megaglest/tilesets")
    sources += [
        ("openclonk:birds", "heldout3", looped_in("c4group", oc, "Environment.ocg/BirdsLoop.ogg")),
        ("megaglest:autumn-day", "heldout3", looped(os.path.join(mg, "autumn/sounds/sunny_day.ogg"))),
        ("megaglest:autumn-night", "heldout3", looped(os.path.join(mg, "autumn/sounds/nightime.ogg"))),
        ("openclonk:mosquito", "heldout3", looped_in("c4group", oc, "Animals.ocg/MosquitoBuzz.ogg")),
        ("openclonk:rain", "heldout3", looped_in("c4group", oc, "Liquids.ocg/StereoRain.ogg")),
        ("gcompris:rain-in-garden", "heldout3", looped_in("qrc", os.path.join(gc, "memory-sound.rcc"),
                                                          "gcompris/src/activities/memory-sound/resource/LRRain_in_garden_01_LA_cut.ogg")),
        ("gcompris:water-fill", "heldout3", looped_in("qrc", os.path.join(gc, "canal_lock.rcc"),
                                                      "gcompris/src/activities/canal_lock/resource/water_fill.wav")),
        ("openclonk:waterfall", "heldout3", looped_in("c4group", oc, "Environment.ocg/Waterfall.ogg")),
        ("openarena:drops", "heldout3", looped_in("zip", os.path.join(deb, "usr/share/games/openarena/baseoa/pak0.pk3"),
                                                  "sound/world/drops.wav")),
        ("openclonk:waterdrop-1/s", "heldout3", seq_in("c4group", oc, "Liquids.ocg/Waterdrop1.wav", 1)),
        ("openclonk:boiling", "heldout3", looped_in("c4group", oc, "Liquids.ocg/Boiling.ogg")),
        ("openclonk:fan", "heldout3", looped_in("c4group", oc, "Structures.ocg/FanLoop.ogg")),
        ("openclonk:furnace", "heldout3", looped_in("c4group", oc, "Structures.ocg/Furnace.ocg/Loop.ogg")),
        ("trigger-rally:engine", "heldout3", looped_in("zip", os.path.join(deb, "usr/share/games/trigger-rally/data.zip"),
                                                       "sounds/engine.wav")),
        ("supertux:ticking-clock-1/s", "heldout3", seq(os.path.join(deb, "usr/share/games/supertux2/sounds/ticking.wav"), 1)),
        ("openclonk:wind", "heldout3", looped_in("c4group", oc, "Environment.ocg/WindLoop.ogg")),
    ]
    # heldout4: the spares named (by name and credits only) when heldout3 was chosen, run through no gate
    # before the learned-veto study's final figures (2026-12-02, session 9): pumps, a steam engine, an
    # electrical hum, night, rain, wind, a waterfall, a fan. Licences: CC0: pumpjack (felix.blume), steam
    # engine (BenNevis), trigger-rally wind; CC-BY: electrical (Halleck); CC-BY-SA 3.0: megaglest-data
    # tilesets; supertux-data (GPL-2+ or CC-BY-SA 3.0), openarena-data (GPL-2+). Read from the packages.
    tux = os.path.join(deb, "usr/share/games/supertux2/sounds")
    pak0 = os.path.join(deb, "usr/share/games/openarena/baseoa/pak0.pk3")
    sources += [
        ("openclonk:pumpjack", "heldout4", looped_in("c4group", oc, "Structures.ocg/Pumpjack.ogg")),
        ("openclonk:steam-engine", "heldout4", looped_in("c4group", oc, "Structures.ocg/SteamEngine.ogg")),
        ("openclonk:electrical", "heldout4", looped_in("c4group", oc, "Objects.ocg/Electrical.ogg")),
        ("megaglest:birch-night", "heldout4", looped(os.path.join(mg, "birch_forest/sounds/night.ogg"))),
        ("megaglest:birch-rain", "heldout4", looped(os.path.join(mg, "birch_forest/sounds/rain.ogg"))),
        ("megaglest:winter-wind", "heldout4", looped(os.path.join(mg, "winter/sounds/wind.ogg"))),
        ("supertux:rain", "heldout4", looped(os.path.join(tux, "rain.wav"))),
        ("supertux:waterfall", "heldout4", looped(os.path.join(tux, "waterfall.wav"))),
        ("trigger-rally:wind", "heldout4", looped_in("zip", os.path.join(deb, "usr/share/games/trigger-rally/data.zip"),
                                                     "sounds/wind.wav")),
        ("openarena:wind1", "heldout4", looped_in("zip", pak0, "sound/world/wind1.wav")),
        ("openarena:fan4", "heldout4", looped_in("zip", pak0, "sound/world/fan4.wav")),
    ]
    # heldout5: real recordings chosen by name, credits and duration only (pitched machinery, insects,
    # crickets, dawn birds, an owl, running and dripping water, bubbling, rain) before any gate heard them
    # (2026-12-02). Licences and credits: public domain: endless-sky machinery (freesound, per the package's
    # copyright/credits.txt); CC0: widelands fermenter bubbles (MentalSanityOff, freesound 338107, per
    # data/sound/wl-sound-docu.csv); CC-BY 3.0: cube2 waterdrip (Yo Frankie!/Apricot project); CC-BY-SA 3.0+:
    # flare-game (Clint Bellanger and others; foley Brandon Morris, Justin Jacobs, rubberduck); GPL-2:
    # tuxpaint-stamps-default (Bill Kendrick and contributors); GPL-2+: widelands crickets (Widelands team).
    # Nothing is redistributed: they are read from the packages at run time.
    wl = os.path.join(deb, "usr/share/games/widelands/data/sound")
    fl = os.path.join(deb, "usr/share/games/flare/mods")
    stamps = os.path.join(deb, "usr/share/tuxpaint/stamps")
    sources += [
        ("endless-sky:machinery", "heldout5", looped(os.path.join(deb, "usr/share/games/endless-sky/sounds/ambient/machinery.mp3"))),
        ("tuxpaint-stamps:bee", "heldout5", looped(os.path.join(stamps, "animals/insects/bee.ogg"))),
        ("tuxpaint-stamps:mosquito", "heldout5", looped(os.path.join(stamps, "animals/insects/mosquito.ogg"))),
        ("tuxpaint-stamps:hornet", "heldout5", looped(os.path.join(stamps, "animals/insects/hornet.ogg"))),
        ("tuxpaint-stamps:grasshopper", "heldout5", looped(os.path.join(stamps, "animals/insects/grasshopper.ogg"))),
        ("widelands:crickets", "heldout5", looped(os.path.join(wl, "animals/crickets1_00.ogg"))),
        ("tuxpaint-stamps:blackbird", "heldout5", looped(os.path.join(stamps, "animals/birds/blackbird.ogg"))),
        ("flare:bird-twitter", "heldout5", looped(os.path.join(fl, "fantasycore/soundfx/environment/bird_twitter_loop.ogg"))),
        ("flare:forest-owl", "heldout5", looped(os.path.join(fl, "fantasycore/soundfx/environment/forest_owl_loop.ogg"))),
        ("flare:river", "heldout5", looped(os.path.join(fl, "fantasycore/soundfx/environment/river_loop.ogg"))),
        ("flare:cave-droplets", "heldout5", looped(os.path.join(fl, "fantasycore/soundfx/environment/cave_droplets_loop.ogg"))),
        ("cube2:waterdrip", "heldout5", looped(os.path.join(deb, "usr/share/games/cube2/packages/sounds/yo_frankie/amb_waterdrip_2.ogg"))),
        ("widelands:fermenter-bubbles", "heldout5", looped(os.path.join(wl, "empire/beerbubble_01.ogg"))),
        ("flare:rain", "heldout5", looped(os.path.join(fl, "empyrean_campaign/soundfx/environment/rain.ogg"))),
    ]
    # heldout6: the spares named, by name, credits and duration only, when heldout5 was chosen; run
    # through no gate before the veto retrained on every earlier split was fixed (2026-12-02, session 10).
    # Licences: CC-BY-SA 3.0+: flare-game (as above); CC-BY-SA 3.0: cube2 windgust (Wildfire Games, 0 A.D.);
    # CC-BY-SA 4.0: cube2 chainsaw idle (Johannes "Hanni" Schneider, audioaugust); CC0: widelands winebubble
    # (Michael Hinze, freesound 275578, per wl-sound-docu.csv); GPL-2+: the other widelands sounds (Widelands
    # team); GPL-2: tuxpaint-stamps-default (Bill Kendrick and contributors).
    env = os.path.join(fl, "fantasycore/soundfx/environment")
    sources += [
        ("flare:wind", "heldout6", looped(os.path.join(env, "wind_loop.ogg"))),
        ("flare:ravens", "heldout6", looped(os.path.join(env, "raven_loop.ogg"))),
        ("flare:cave-wind", "heldout6", looped(os.path.join(env, "cave_wind_loop.ogg"))),
        ("cube2:windgust", "heldout6", looped(os.path.join(deb, "usr/share/games/cube2/packages/sounds/0ad/windgust_11.ogg"))),
        ("cube2:chainsaw-idle", "heldout6",
         looped(os.path.join(deb, "usr/share/games/cube2/packages/sounds/audioaugust/chainsaw/idle.ogg"))),
        ("widelands:bird1", "heldout6", looped(os.path.join(wl, "animals/bird1_00.ogg"))),
        ("widelands:frog", "heldout6", looped(os.path.join(wl, "animals/frog.ogg"))),
        ("widelands:wine-bubbles", "heldout6", looped(os.path.join(wl, "empire/winebubble_00.ogg"))),
        ("widelands:mill-turning", "heldout6", looped(os.path.join(wl, "mill/mill_turning_01.ogg"))),
        ("tuxpaint-stamps:lark", "heldout6", looped(os.path.join(stamps, "animals/birds/lark.ogg"))),
        ("tuxpaint-stamps:toilet", "heldout6", looped(os.path.join(stamps, "household/toilet.ogg"))),
    ]
    # heldout7: real recordings chosen by name, credits and duration only (boiling, a steam vent's hiss,
    # record-surface hiss, a 3D printer's motors, an oil pump, a running tap, a shower, a ticking clock, a
    # kitchen timer, woodland birds, a swamp, the countryside, a city street, typing) before any gate heard
    # them (2026-12-02). Licences and credits: CC0: sonic-pi vinyl_hiss (veezay, freesound 130393); CC-BY 3.0:
    # xdecor boiling water (Audionautics, freesound 133901); CC-BY-SA 4.0: nether fumarole (Treer), homedecor
    # sounds (Vanessa Ezekowitz); MIT (the package default): sonic-pi loop_3d_printer (hullum, freesound 415571,
    # per the samples README); GPL-3+: gnome-pomodoro sounds (tagged freesound cmorris035 202932, MrAuralization
    # 169090, acclivity 19783); GPL-2+: warzone2100 oil pump; GPL-2 with the Battle Tanks exception: btanks
    # ambiences; GPL-2: frozen-bubble typewriter. Nothing is redistributed: they are read from the packages at
    # run time. Chosen by a helper; nobody listened.
    mods = os.path.join(deb, "usr/share/games/minetest/mods")
    spi = os.path.join(deb, "usr/share/sonic-pi/samples")
    pomo = os.path.join(deb, "usr/share/gnome-pomodoro/sounds")
    bt = os.path.join(deb, "usr/share/games/btanks/data/sounds")
    sources += [
        ("xdecor:boiling-water", "heldout7", looped(os.path.join(mods, "xdecor/sounds/xdecor_boiling_water.ogg"))),
        ("nether:fumarole", "heldout7", looped(os.path.join(mods, "nether/sounds/nether_fumarole.ogg"))),
        ("sonic-pi:vinyl-hiss", "heldout7", looped(os.path.join(spi, "vinyl_hiss.flac"))),
        ("sonic-pi:3d-printer", "heldout7", looped(os.path.join(spi, "loop_3d_printer.flac"))),
        ("warzone2100:oilpump", "heldout7", looped_in("zip", os.path.join(deb, "usr/share/games/warzone2100/base.wz"),
                                                      "audio/sfx/building/oilpump.ogg")),
        ("homedecor:faucet", "heldout7", looped(os.path.join(mods, "homedecor/homedecor_common/sounds/homedecor_faucet.ogg"))),
        ("homedecor:shower", "heldout7", looped(os.path.join(mods, "homedecor/homedecor_bathroom/sounds/homedecor_shower.ogg"))),
        ("pomodoro:clock", "heldout7", looped(os.path.join(pomo, "clock.ogg"))),
        ("pomodoro:kitchen-timer", "heldout7", looped(os.path.join(pomo, "timer.ogg"))),
        ("pomodoro:woodland-birds", "heldout7", looped(os.path.join(pomo, "birds.ogg"))),
        ("btanks:swamp", "heldout7", looped(os.path.join(bt, "ambient/swamp.ogg"))),
        ("btanks:country", "heldout7", looped(os.path.join(bt, "ambient/country.ogg"))),
        ("btanks:city", "heldout7", looped(os.path.join(bt, "ambient/city.ogg"))),
        # A single key strike, sequenced as typing (random gaps, pauses between words), as tuxpaint:typing.
        ("frozen-bubble:typewriter-typing", "heldout7",
         seq(os.path.join(deb, "usr/share/games/frozen-bubble/snd/typewriter.ogg"), 6, burst=True)),
    ]
    # heldout8: the spares named, by name, credits and duration only, when heldout7 was chosen (the sauna
    # left out: it could hold talk; the windmill left out: 237 MB for one sound); run through no gate before
    # the veto retrained on heldout6 and heldout7 was fixed (2026-12-02, session 10). Licences: GPL-2 with
    # the Battle Tanks exception: btanks; MIT (the package default): sonic-pi loop_electric (hullum, freesound
    # 415569); CC-BY-SA 4.0: homedecor (Vanessa Ezekowitz); GPL-2+: heroes-sound-effects (Duret-Lutz,
    # Genevois, Liverneaux, Meisburger); GPL-2: enigma-data; GPL: tuxtype-data tock (Bill Kendrick); public
    # domain: tuxmath-data sounds.
    sources += [
        ("btanks:forest", "heldout8", looped(os.path.join(bt, "ambient/forest.ogg"))),
        ("btanks:train", "heldout8", looped(os.path.join(bt, "train.ogg"))),
        ("sonic-pi:electric", "heldout8", looped(os.path.join(spi, "loop_electric.flac"))),
        ("homedecor:toilet-flush", "heldout8",
         looped(os.path.join(mods, "homedecor/homedecor_bathroom/sounds/homedecor_toilet_flush.ogg"))),
        ("homedecor:fire-small", "heldout8", looped(os.path.join(mods, "homedecor/fake_fire/sounds/fire_small.ogg"))),
        ("heroes:clock01", "heldout8", looped(os.path.join(deb, "usr/share/games/heroes/sfx/clock01.wav"))),
        ("enigma:st-timer", "heldout8", looped(os.path.join(deb, "usr/share/games/enigma/soundsets/enigma/st-timer.wav"))),
        ("tuxtype:tock-clock-1/s", "heldout8", seq(os.path.join(deb, "usr/share/tuxtype/sounds/tock.wav"), 1)),
        ("tuxmath:towerclock", "heldout8", looped(os.path.join(deb, "usr/share/tuxmath/sounds/towerclock.wav"))),
    ]
    # heldout9: a helper's picks, by name, credits and duration only, from twelve packages nothing else here
    # uses (2026-12-02, session 11); run once, after the edge rule on Silero's segments was fixed. Licences and
    # credits: GPL-2+: bucklespring (Ico Doornekampt, as its copyright file spells it), crossfire-client, neverball (Robert Kooima and
    # contributors), pachi (Santiago and Nicolas Radeff, Peter Hajba), vodovod (Milan Babuskov); CC-BY-SA 3.0:
    # plee-the-bear (Sebastien Angibaud, Philip Bradbury, Julien Jorge); LGPL-2.1+: unified_inventory
    # (RealBadAngel, VanessaE); CC-BY 3.0: freedink fire (Berklee College of Music Sampling Archive, edited by Sylvain
    # Beucler); MPL-2.0: libreoffice gallery; GPL-2: trophy (Andrew Mustun, Matthieu Lecesne, Colin Pitrat),
    # crrcsim (Jan Edward Kansky, Mark Drela, Bruce Jackson); CC-BY-SA 4.0: caveexpress (Martin Gerhardy).
    # Left out after the run: micropolis-data's heavytraffic.wav (picked as street traffic) is talk, the
    # SimCity helicopter's spoken traffic report (Whisper base: English 0.96, no-speech 0.14, "... heavy
    # traffic"; the twelve others: no-speech >= 0.54 and filler). Both gates rightly counted it (10.7 and
    # 13.1 s alone); its figures are in VOICE_GATE_EVAL.md.
    buckle = os.path.join(deb, "usr/share/buckle/wav")
    nb = os.path.join(deb, "usr/share/games/neverball/snd")

    def seq_pair(first, second, gap_seconds, rate, burst=False):
        """As seq, the event being two recordings: `second` starts gap_seconds after `first` does."""
        def make(n, seed):
            a, b = load(first), load(second)
            gap = int(gap_seconds * RATE)
            event = np.zeros(max(len(a), gap + len(b)))
            event[: len(a)] += a
            event[gap: gap + len(b)] += b
            return sequence(event, n, rate, seed, burst=burst)
        return make

    sources += [
        # One key (a), down then up 100 ms later, sequenced as typing (as tuxpaint:typing).
        ("bucklespring:typing", "heldout9",
         seq_pair(os.path.join(buckle, "1e-0.wav"), os.path.join(buckle, "1e-1.wav"), 0.1, 6, burst=True)),
        ("crossfire:drip-1.5/s", "heldout9", seq(os.path.join(deb, "usr/share/games/crossfire-client/sounds/drip.wav"), 1.5)),
        # A tick and a tock one second apart, the pair every two seconds: a clock at 1 per second.
        ("neverball:tick-tock-1/s", "heldout9", seq_pair(os.path.join(nb, "tick.ogg"), os.path.join(nb, "tock.ogg"), 1.0, 0.5)),
        ("plee:rain", "heldout9", looped(os.path.join(deb, "usr/share/games/plee-the-bear/sound/weather/rain.ogg"))),
        ("unified-inventory:birds", "heldout9", looped(os.path.join(mods, "unified_inventory/sounds/birds.ogg"))),
        ("pachi:storm", "heldout9", looped(os.path.join(deb, "usr/share/pachi/sounds/storm.wav"))),
        ("freedink:fire", "heldout9", looped(os.path.join(deb, "usr/share/games/dink/dink/Sound/fire.wav"))),
        ("libreoffice:train", "heldout9", looped(os.path.join(deb, "usr/lib/libreoffice/share/gallery/sounds/train.wav"))),
        ("trophy:engine", "heldout9", looped(os.path.join(deb, "usr/share/games/trophy/sounds/engine.wav"))),
        ("crrcsim:electric", "heldout9", looped(os.path.join(deb, "usr/share/games/crrcsim/sounds/electric.wav"))),
        ("caveexpress:waterfall", "heldout9",
         looped(os.path.join(deb, "usr/share/games/caveexpress/sounds/tile-waterfall.ogg"))),
        ("vodovod:bubbles", "heldout9", looped(os.path.join(deb, "usr/share/games/vodovod/bubbles.wav"))),
    ]
    # heldout10: the spares named with heldout9 (by name, credits and duration only); each checked for talk
    # before the run (Whisper base language ID: no-speech probability >= 0.58 and no language over 0.6 on
    # every one); run once, with the gates as fixed for heldout9 (2026-12-02, session 11). Licences and
    # credits: GPL-2: hannah (Stephen Branley), crrcsim (Kansky, Drela, Jackson); GPL-2+: vodovod (Milan
    # Babuskov), crossfire-client; CC-BY-SA 3.0: plee-the-bear (its sound team); LGPL-2.1+: unified_inventory
    # (RealBadAngel, VanessaE); MPL-2.0: libreoffice gallery; CC-BY-SA 4.0: caveexpress (Martin Gerhardy).
    sources += [
        ("hannah:drip-1.5/s", "heldout10", seq(os.path.join(deb, "usr/share/games/hannah/sounds/drip.wav"), 1.5)),
        ("vodovod:drop-1.5/s", "heldout10", seq(os.path.join(deb, "usr/share/games/vodovod/drop.wav"), 1.5)),
        ("plee:tick-clock-2/s", "heldout10", seq(os.path.join(deb, "usr/share/games/plee-the-bear/sound/tick.ogg"), 2)),
        ("unified-inventory:owl", "heldout10", looped(os.path.join(mods, "unified_inventory/sounds/owl.ogg"))),
        ("libreoffice:nature1", "heldout10",
         looped(os.path.join(deb, "usr/lib/libreoffice/share/gallery/sounds/nature1.wav"))),
        ("crrcsim:glider", "heldout10", looped(os.path.join(deb, "usr/share/games/crrcsim/sounds/glider.wav"))),
        ("caveexpress:geyser", "heldout10",
         looped(os.path.join(deb, "usr/share/games/caveexpress/sounds/tile-geyser-active.ogg"))),
        ("crossfire:towerclock", "heldout10",
         looped(os.path.join(deb, "usr/share/games/crossfire-client/sounds/TowerClock.wav"))),
    ]

    def walks(paths, rate, walk=(4, 8), pause=(3, 6)):
        """Footsteps: the recordings in turn at `rate` per second (3 % jitter), in walks of `walk`
        seconds with pauses of `pause` seconds, over -70 dBFS white noise."""
        def make(n, seed):
            rng = random.Random(seed)
            out = np.random.default_rng(seed).normal(0, 10 ** (-70 / 20), n)
            t, k = rng.uniform(0, RATE), 0
            while t < n:
                end = t + RATE * rng.uniform(*walk)
                while t < min(end, n):
                    step = load(paths[k % len(paths)])
                    i = int(t)
                    out[i: i + len(step)] += step[: n - i]
                    k += 1
                    t += RATE / rate * (1 + rng.uniform(-0.03, 0.03))
                t += RATE * rng.uniform(*pause)
            return out
        return make

    # heldout11: chosen by a helper by name, credits and duration only from nine packages nothing else
    # here uses (2026-12-02, session 12); each checked for talk before the run (as heldout10); run once,
    # with the energy gate's periodic-train rule and the default gate fixed. Licences and credits: public
    # domain: supertuxkart's clock (Natalie, pdsounds.org); CC-BY 3.0: supertuxkart's machine (Swelk,
    # freesound 12906, edited by Auria), redeclipse's forest1 (dobroide, freesound 34580 and 7292) and
    # distant_cars (fresco, WIM; freesound 34522, 34523, 26173); CC-BY-SA 3.0: scratch (MIT), ardentryst
    # (footsteps: Jordan Trudgett; rain: its sound credits, Freesound users); GPL-2+: eboard (Felipe
    # Bergo), orage (Mickael Graf, Benedikt Meurer, Juha Kautto); GPL-3+: focuswriter (Graeme Gott);
    # LGPL-2.1+: csoundqt-examples; BSD-3-clause: Qt's audioengine example.
    stk = os.path.join(deb, "usr/share/games/supertuxkart/data/sfx")
    ardentryst = os.path.join(deb, "usr/share/games/ardentryst/Sounds")
    ambience = os.path.join(deb, "usr/share/games/redeclipse/data/sounds/ambience")
    qt = sorted(glob.glob(os.path.join(deb, "usr/lib/*/qt5/examples/multimedia/audioengine/qml/content")))
    sources += [
        # A recording of a ticking clock, many ticks long: looped as it is, not re-sequenced.
        ("stk:clock", "heldout11", looped(os.path.join(stk, "clock.ogg"))),
        ("eboard:tick-1/s", "heldout11", seq(os.path.join(deb, "usr/share/games/eboard/Tick1.wav"), 1)),
        ("focuswriter:typewriter", "heldout11",
         seq(os.path.join(deb, "usr/share/focuswriter/sounds/keyany.wav"), 6, burst=True)),
        ("scratch:waterdrop-1.5/s", "heldout11",
         seq(os.path.join(deb, "usr/share/scratch/Media/Sounds/Effects/WaterDrop.mp3"), 1.5)),
        ("ardentryst:footsteps", "heldout11",
         walks([os.path.join(ardentryst, f"NYX/NYX_STEP_CONCRETE{i}.ogg") for i in range(1, 5)], 1.8)),
        # One knock every 5 s (+-1 s).
        ("orage:knock", "heldout11",
         lambda n, seed: sequence(load(os.path.join(deb, "usr/share/orage/sounds/Knock.wav")), n, 0.2, seed,
                                  jitter=0.2)),
        ("redeclipse:forest1", "heldout11", looped(os.path.join(ambience, "forest1.ogg"))),
        ("redeclipse:distant-cars", "heldout11", looped(os.path.join(ambience, "distant_cars.ogg"))),
        ("ardentryst:rain", "heldout11", looped(os.path.join(ardentryst, "Rain_Loop.ogg"))),
        ("scratch:crickets", "heldout11", looped(os.path.join(deb, "usr/share/scratch/Media/Sounds/Animal/Crickets.wav"))),
        ("orage:boiling", "heldout11", looped(os.path.join(deb, "usr/share/orage/sounds/Boiling.wav"))),
        ("csoundqt:seashore", "heldout11",
         looped(os.path.join(deb, "usr/share/csoundqt/Examples/SourceMaterials/Seashore.wav"))),
        ("stk:machine", "heldout11", looped(os.path.join(stk, "machine_sound.ogg"))),
        ("qt:engine-loop", "heldout11", looped(os.path.join(qt[0] if qt else "", "engine-loop.wav"))),
    ]
    # heldout12: chosen by a helper by name, credits and duration only from twelve packages nothing else
    # here uses, weighted to periodic and impulsive sounds (2026-12-02, session 12); checked for talk
    # before the run; run once. Licences and credits: CC0: redtick's work.wav (Alexsani, freesound
    # 117280), hyperrogue's steam hiss; GPL-2: natbraille (Bruno Mascret, Didier Erin, Guillaume
    # Laforge); GPL-2+: triplea (Sean Bridges, ComradeKev, veqryn), rockdodger (Paul Holt, Robert P
    # Krawczyk), tuxfootball (Jason Wood), netpanzer (Matthias Braun), trackballs (Mathias Broxvall; its
    # sound credits), dopewars (Ben Webb); GPL-3: displaycal (Florian Hoech and others), libmlv3-dev's
    # walk.ogg (Jute, from DungeonHack); GPL-3+: jag (XlabSoft, Industrial Infosystems, Carlos Donizete
    # Froes), planetblupi (Mathieu Schroeter, Epsitec).
    triplea = os.path.join(deb, "usr/share/games/triplea/assets/sounds")
    blupi = os.path.join(deb, "usr/share/planetblupi/sound/en")
    sources += [
        # A recorded "tock-tick" that its timer program loops gap-free: looped as it is.
        ("redtick:tock-tick", "heldout12", looped(os.path.join(deb, "usr/share/redtick/resources/work.wav"))),
        ("jag:clock", "heldout12", looped(os.path.join(deb, "usr/share/games/jag/data/sounds/clock.wav"))),
        ("natbraille:tic-1/s", "heldout12", seq(os.path.join(deb, "usr/share/natbraille/ui/sounds/tic.au"), 1)),
        ("triplea:typewriter", "heldout12", looped(os.path.join(
            triplea, "ww2/political_action_successful/political_action_successful_01_typewriter.mp3"))),
        # (triplea's marching column, picked as footsteps, was left out before the run: Whisper's talk
        # check put it at the line, English 0.52-0.58 and no-speech 0.47-0.48, writing "I'm sorry.";
        # a shouted command cannot be ruled out. The named spare stands in.)
        ("libmlv:walk", "heldout12",
         walks([os.path.join(deb, "usr/share/doc/libmlv3-dev/doc/mlv/examples/advanced/walk.ogg")], 1.8)),
        ("rockdodger:drip-1.5/s", "heldout12", seq(os.path.join(deb, "usr/share/rockdodger/drip.wav"), 1.5)),
        # A ball bounced 6-10 times at 1.5 per second, then 3-6 s of rest.
        ("tuxfootball:bounce", "heldout12",
         walks([os.path.join(deb, "usr/share/games/tuxfootball/sound/bounce.wav")], 1.5, walk=(4, 6.7))),
        # Sawing wood: strokes back to back, 1.3 per second, in bouts of 5-10 s.
        ("blupi:saw", "heldout12", walks([os.path.join(blupi, "sound015.wav")], 1.3, walk=(5, 10))),
        ("blupi:fire", "heldout12", looped(os.path.join(blupi, "sound016.wav"))),
        ("hyperrogue:steamhiss", "heldout12", looped(os.path.join(deb, "usr/share/hyperrogue/sounds/steamhiss.ogg"))),
        ("netpanzer:tankidle", "heldout12", looped(os.path.join(deb, "usr/share/games/netpanzer/sound/tankidle.wav"))),
        ("trackballs:machine", "heldout12",
         looped(os.path.join(deb, "usr/share/games/trackballs/sfx/machine_loop.wav"))),
        ("displaycal:engine-hum", "heldout12",
         looped(os.path.join(deb, "usr/share/DisplayCAL/theme/engine_hum_loop.wav"))),
        ("dopewars:train", "heldout12", looped(os.path.join(deb, "usr/share/dopewars/train.wav"))),
    ]
    # heldout13: chosen by a helper by name, credits and duration only from ten packages nothing else
    # here uses (2026-12-02, session 12); checked for talk before the run (session 13); run once.
    # Licences and credits: GPL-2+: muse (its authors), castle-game-engine examples (Michalis
    # Kamburelis; GPL-2+ or LGPL-2+), kanagram (Danny Allen, Debjit Mondal), 7kaa (Enlight Software,
    # Jesse Allen), searchandrescue (WolfPack Entertainment), extremetuxracer (Jasmin F. Patry and the
    # Extreme Tux Racer team); GPL-3+: qabcs (DanSoft), colobot (Daniel Roux, EPSITEC SA,
    # TerranovaTeam), pushover (Andreas Roever, Volker Grabsch); CC-BY-SA 3.0: teeworlds (Magnus
    # Auvinen and contributors).
    qabcs = os.path.join(deb, "usr/share/qabcs/abcs/all/noises")
    muse = os.path.join(deb, "usr/share/muse/metronome")
    tee = os.path.join(deb, "usr/share/games/teeworlds/data/audio")
    castle = os.path.join(deb, "usr/share/doc/castle-game-engine-doc/examples")
    colobot = os.path.join(deb, "usr/share/games/colobot/sounds")

    def metronome(n, seed):
        """A metronome at 2 beats per second in bars of four: the accented click, then three plain ones."""
        accent, plain = load(os.path.join(muse, "klick1.wav")), load(os.path.join(muse, "klick2.wav"))
        bar = np.zeros(int(1.5 * RATE) + len(plain))
        bar[: len(accent)] += accent
        for k in (1, 2, 3):
            bar[int(0.5 * k * RATE): int(0.5 * k * RATE) + len(plain)] += plain
        return sequence(bar, n, 0.5, seed, jitter=0.005, accent=(1.0,))

    sources += [
        # Recordings of a wristwatch ticking and of typing, many events long: looped as they are.
        ("qabcs:watch", "heldout13", looped(os.path.join(qabcs, "watch.ogg"))),
        ("qabcs:keyboard", "heldout13", looped(os.path.join(qabcs, "keyboard.ogg"))),
        ("muse:metronome-2/s", "heldout13", metronome),
        ("teeworlds:footsteps", "heldout13",
         walks([os.path.join(tee, f"foley_foot_{side}-0{i}.wv") for i in range(1, 5) for side in ("left", "right")],
               1.8)),
        # A 1.1 s recording of steps on grass, back to back in walks.
        ("castle:footsteps-grass", "heldout13",
         walks([os.path.join(castle, "fps_game/data/sounds/footsteps_grass.wav")], 0.9)),
        ("castle:cricket", "heldout13", looped(os.path.join(castle, "audio/game_3d_sound/data/sounds/cricket.wav"))),
        # A chalk stroke (2 s), back to back in bouts of 4-8 s.
        ("kanagram:chalk", "heldout13", walks([os.path.join(deb, "usr/share/kanagram/ui/sounds/chalk.wav")], 0.5)),
        ("7kaa:rain", "heldout13", looped(os.path.join(deb, "usr/share/games/7kaa/SOUND/RAIN.WAV"))),
        ("7kaa:wind", "heldout13", looped(os.path.join(deb, "usr/share/games/7kaa/SOUND/WIND.WAV"))),
        ("colobot:burning", "heldout13", looped(os.path.join(colobot, "sound021.wav"))),
        ("colobot:rumble", "heldout13", looped(os.path.join(colobot, "sound038.wav"))),
        ("sar:jet-engine-inside", "heldout13",
         looped(os.path.join(deb, "usr/share/games/searchandrescue/sounds/jet_engine_inside.wav"))),
        ("etr:leaves-slide", "heldout13", looped(os.path.join(deb, "usr/share/games/etr/sounds/leaves_slide.wav"))),
        # (basic256's bounce.mp3, picked as a bouncing ball, was left out before the run: Whisper's talk
        # check gave no-speech 0.18 and wrote a repeated word; a voiced "boing" cannot be ruled out. The
        # named spare, pushover's tapping, stands in: one tap, 4 per second in bursts.)
        ("pushover:tapping", "heldout13", seq(os.path.join(deb, "usr/share/pushover/sounds/0E_Tapping.ogg"), 4, burst=True)),
    ]
    return sources


def speech_sources():
    """(name, split, path): the tuning speech and the held-out speech (see the module doc)."""
    tune = [("speech:" + os.path.basename(p), "tune", p) for p in sorted(glob.glob(os.path.join(SHARED, "audio/speech/*")))]
    held = []
    # The recitation folder is mostly adhans (sung calls, not reading; Silero rightly hears the
    # singing as not speech, so there is no reference): only the read basmala is used.
    held.append(("recitation:rec_001.mp3", "heldout", os.path.join(SHARED, "audio/recitation/rec_001.mp3")))
    duas = sorted(glob.glob(os.path.join(SHARED, "dua_audio/*.mp3")))
    stride = max(1, len(duas) // 10)
    for p in duas[::stride][:10]:
        held.append(("dua:" + os.path.basename(p), "heldout", p))
    # Ten other recordings of the same reader, for tuning since the end-of-reading work (2026-12-02):
    # the tuning speech above ends its words unlike this reader (Silero's over-counted ends were
    # his), so tuning needs his readings too. Disjoint from the held-out ten by recording, not by
    # person.
    for p in duas[stride // 2::stride][:10]:
        tune.append(("dua-tune:" + os.path.basename(p), "tune", p))
    return tune + held


# ---------------------------------------------------------------------------------------------
# Building the set


def build(work, split, binary, noise_filter=None, speech=None):
    """The clips of a noise split (made in work/clips when missing) and their speech. `speech`
    ("tune" or "heldout") mixes the split's noises with that speech instead of the split's own."""
    clips = os.path.join(work, "clips")
    os.makedirs(clips, exist_ok=True)
    items = []
    speeches = []
    wanted = speech or speech_split(split)
    for name, s_split, path in speech_sources():
        if (split != "all" or speech) and s_split != wanted:
            continue
        try:
            x = decode(path)
        except subprocess.CalledProcessError:
            print(f"skipping {name}: ffmpeg cannot decode it", file=sys.stderr)
            continue
        x = x[: int(MAX_SPEECH_SECONDS * RATE)]
        # The reference: Silero on the clean clip (placed as in the mixtures, over -80 dBFS
        # dither), shifted to clip time.
        x = x * 10 ** ((SPEECH_LEVEL - rms_db(x)) / 20)
        clean = os.path.join(clips, f"clean__{name.replace(':', '_')}.wav")
        padded = np.concatenate([np.zeros(int(1.5 * RATE)), x, np.zeros(2 * RATE)])
        write_wav(clean, padded + np.random.default_rng(1).normal(0, 10 ** (-80 / 20), len(padded)))
        _, found, *_ = run_one(binary, clean, "silero", veto=False)
        segments = [(a - 1.5, b - 1.5) for a, b in found]
        if sum(b - a for a, b in segments) < 1.0:
            print(f"skipping {name}: under 1 s of speech", file=sys.stderr)
            continue
        x = x * 10 ** ((SPEECH_LEVEL - active_level(x, segments)) / 20)
        speeches.append((name, s_split, x, segments, reference_segments(x)))
    for index, (n_name, n_split, make) in enumerate(noise_sources(work)):
        if split != "all" and n_split != split:
            continue
        if noise_filter and noise_filter not in n_name:
            continue
        key = n_name.replace(":", "_").replace("/", "per")
        # Noise alone.
        path = os.path.join(clips, f"noise__{key}.wav")
        if not os.path.exists(path):
            noise = make(15 * RATE, index)
            noise = noise * 10 ** ((SPEECH_LEVEL - 10 - rms_db(noise)) / 20)
            write_wav(path, noise)
        items.append({"file": path, "split": n_split, "noise": n_name, "speech": None, "snr": None,
                      "reference": 0.0, "span": None})
        # Each speech of the same split over this noise at each SNR.
        for s_index, (s_name, s_split, x, segments, _) in enumerate(speeches):
            if s_split != (speech or speech_split(n_split)):
                continue
            pre, post = int(1.5 * RATE), int(2.0 * RATE)
            n = pre + len(x) + post
            noise = make(n, index * 1000 + s_index)
            noise_db = rms_db(noise)
            for snr in SNRS:
                path = os.path.join(clips, f"mix__{key}__{s_name.replace(':', '_')}__{snr}dB.wav")
                if not os.path.exists(path):
                    mixed = noise * 10 ** ((SPEECH_LEVEL - snr - noise_db) / 20)
                    mixed[pre: pre + len(x)] += x
                    write_wav(path, mixed)
                items.append({
                    "file": path, "split": n_split, "noise": n_name, "speech": s_name, "snr": snr,
                    "reference": sum(b - a for a, b in segments),
                    "span": [1.5, 1.5 + len(x) / RATE]})
    return items, speeches


# ---------------------------------------------------------------------------------------------
# Running proofkit


def run_one(binary, path, mode, veto=True):
    # Only the gate is measured: no recogniser (Whisper would transcribe every file).
    env = dict(os.environ)
    command = [binary, "voice", path, "--json", "--vad", mode, "--recognizer", "none"] + ([] if veto else ["--no-veto"])
    out = subprocess.run(command, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{path} --vad {mode}: exit {out.returncode}: {out.stderr.strip()}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return (result["voiced_seconds"], result["voiced_segments"], result.get("silero_segments"),
            result.get("veto_segments"), result.get("silero_likeness"))


def summarise(rows, modes):
    report = {}
    for split in SPLITS:
        for mode in modes:
            mine = [r for r in rows if r["split"] == split and mode in r["voiced"]]
            if not mine:
                continue
            entry = {}
            alone = [r["voiced"][mode] for r in mine if r["speech"] is None]
            worst = max(((r["voiced"][mode], r["noise"]) for r in mine if r["speech"] is None), default=None)
            entry["noise_alone"] = {"files": len(alone), "max_s": round(max(alone), 2) if alone else None,
                                    "median_s": round(statistics.median(alone), 2) if alone else None,
                                    "worst": worst[1] if worst else None}
            for snr in SNRS:
                errors = [(r["voiced"][mode] - r["reference"]) / r["reference"] for r in mine if r["snr"] == snr]
                if not errors:
                    continue
                absolute = sorted(abs(e) for e in errors)
                worst_row = max((r for r in mine if r["snr"] == snr),
                                key=lambda r: abs(r["voiced"][mode] - r["reference"]) / r["reference"])
                entry[f"{snr}dB"] = {
                    "files": len(errors),
                    "median_abs_error_pct": round(100 * statistics.median(absolute), 1),
                    "p90_abs_error_pct": round(100 * absolute[min(len(absolute) - 1, int(0.9 * len(absolute)))], 1),
                    "max_abs_error_pct": round(100 * absolute[-1], 1),
                    "median_signed_error_pct": round(100 * statistics.median(errors), 1),
                    "worst": f"{worst_row['noise']} + {worst_row['speech']}",
                }
            report[f"{split}/{mode}"] = entry
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_binary = os.path.join(ROOT, ".build/release/proofkit")
    if not os.path.exists(default_binary):
        default_binary = os.path.join(ROOT, ".build/debug/proofkit")
    parser.add_argument("--binary", default=default_binary)
    parser.add_argument("--reference-binary", help="the build whose `--vad silero --no-veto` on the clean speech is "
                        "the reference (default --binary); give a fixed build when comparing builds that change "
                        "Silero itself (its model or hysteresis), so that every build is judged against the same "
                        "reference")
    parser.add_argument("--modes", default="energy,silero,both")
    parser.add_argument("--split", default="all", choices=SPLITS + ["all"])
    parser.add_argument("--noise", help="only noises whose name contains this")
    parser.add_argument("--work", default="/tmp/proofkit-voice-eval")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out")
    parser.add_argument("--per-file", action="store_true", help="print every file's figures")
    args = parser.parse_args()
    if not os.path.isdir(SHARED):
        sys.exit(f"voice_gate_eval: {SHARED} is missing (the shared data folder beside the package)")
    modes = args.modes.split(",")
    items, speeches = build(args.work, args.split, args.reference_binary or args.binary, args.noise)
    print(f"{len(items)} files ({sum(1 for i in items if i['speech'] is None)} noise alone), "
          f"{len(speeches)} speech clips; binary {args.binary}", file=sys.stderr)

    rows = [dict(item, voiced={}, segments={}, silero={}, veto={}, likeness={}) for item in items]
    jobs = [(row, mode) for row in rows for mode in modes]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_one, args.binary, row["file"], mode): (row, mode) for row, mode in jobs}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            row, mode = futures[future]
            (row["voiced"][mode], row["segments"][mode], row["silero"][mode], row["veto"][mode],
             row["likeness"][mode]) = future.result()
            if done % 50 == 0:
                print(f"  {done}/{len(jobs)}", file=sys.stderr)

    # The reference against a plain energy reference on the clean speech (a check).
    check = []
    for name, split, x, segments, energy_segments in speeches:
        reference = sum(b - a for a, b in segments)
        energy = sum(b - a for a, b in energy_segments)
        check.append({"speech": name, "silero_on_clean_s": round(reference, 2), "energy_reference_s": round(energy, 2),
                      "difference_pct": round(100 * (energy - reference) / reference, 1)})
    report = {
        "reference": "proofkit voice --vad silero --no-veto on the clean speech (same placement, -80 dBFS dither); check: energy reference = active 20 ms frames >= max(p10 + 15 dB, p95 - 35 dB, -65 dBFS), gaps <= 200 ms bridged, runs < 60 ms dropped",
        "summary": summarise(rows, modes),
        "reference_check": check,
    }
    if args.per_file:
        for row in sorted(rows, key=lambda r: (r["split"], r["noise"], r["snr"] or 0)):
            figures = " ".join(f"{m}={row['voiced'][m]:.2f}" for m in modes)
            print(f"{row['split']:8} {row['noise']:28} {str(row['speech']):34} {str(row['snr']):>4} ref={row['reference']:.2f} {figures}")
    print("per noise: noise alone (s) | median / worst |error| at 20, 10, 5 dB (%)")
    for split in SPLITS:
        for mode in modes:
            for noise in sorted({r["noise"] for r in rows if r["split"] == split}):
                mine = [r for r in rows if r["split"] == split and r["noise"] == noise]
                alone = [r["voiced"][mode] for r in mine if r["speech"] is None]
                cells = []
                for snr in SNRS:
                    errors = sorted(abs(r["voiced"][mode] - r["reference"]) / r["reference"] for r in mine if r["snr"] == snr)
                    cells.append(f"{100 * statistics.median(errors):5.1f} / {100 * errors[-1]:5.1f}" if errors else "  -  ")
                print(f"  {split:8} {mode:7} {noise:32} {alone[0] if alone else float('nan'):5.2f} s | " + " | ".join(cells))
    for key, entry in report["summary"].items():
        print(key)
        for sub, values in entry.items():
            print(f"  {sub:12} {json.dumps(values)}")
    if check:
        differences = [abs(c["difference_pct"]) for c in check]
        print(f"energy reference vs Silero on the clean speech: median |diff| {statistics.median(differences):.1f} %, max {max(differences):.1f} % over {len(check)} clips")
    if args.out:
        with open(args.out + ".tmp", "w") as f:
            json.dump(dict(report, files=[{k: v for k, v in r.items()} for r in rows]), f, indent=1)
        os.replace(args.out + ".tmp", args.out)


if __name__ == "__main__":
    main()
