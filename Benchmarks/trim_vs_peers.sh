#!/usr/bin/env bash
# proofkit trim against its peers, side by side in one run (markdown report on stdout).
#
#   Benchmarks/trim_vs_peers.sh [RUNS]          (default RUNS=9; run from anywhere)
#
# Inputs are made from real recitations with sox (../shared/data/audio when present, else the
# test fixture rec_001.mp3): a 3-minute MP3 (44.1 kHz stereo, 128 kb/s, lame), a 5-minute WAV
# (44.1 kHz stereo 16-bit) and a one-hour WAV (44.1 kHz stereo 16-bit, memory only).
# Each run cuts the first 29 s to a 16-bit file:
#   proofkit trim IN -o OUT.caf                      (the default: atomic, no wait for the disk,
#                                                     like the plain peers)
#   proofkit trim --sync IN -o OUT.caf               (the complete file is fdatasync'ed before
#                                                     the rename)
#   sox IN -b 16 OUT.caf trim 0 29
#   sox IN -b 16 OUT.caf trim 0 29 && sync --data OUT.caf   (sox made durable: like proofkit's default)
#   ffmpeg -y -i IN -t 29 -c:a pcm_s16le OUT.caf
# The tools alternate within every round, so machine noise hits them alike. Reported: median and
# min wall time, the ratio to plain sox's median (the issue's target: proofkit <= 0.7x), the ratio
# like for like (--sync against durable sox, the default against plain sox), and peak RSS
# from /usr/bin/time -v (target: proofkit < 32 MiB whatever the input's length).
# Peers that are missing are skipped, not failed. Set PROOFKIT_BIN to skip the release build.
set -euo pipefail

RUNS="${1:-9}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SHARED="$ROOT/../shared/data/audio"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/proofkit-trim-bench.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

if [[ -z "${PROOFKIT_BIN:-}" ]]; then
    # The same build as .ci/setup makes (see .ci/build-release).
    "$ROOT/.ci/build-release" proofkit >&2
    PROOFKIT_BIN="$ROOT/.build/release/proofkit"
fi
have() { command -v "$1" >/dev/null 2>&1; }
have sox || { echo "sox is needed to make the inputs" >&2; exit 69; }

# --- Inputs from real audio ----------------------------------------------------------------
SOURCES=()
if [[ -d "$SHARED/recitation" ]]; then
    for f in rec_002.mp3 rec_006.mp3 rec_005.mp3 rec_004.wav; do
        [[ -f "$SHARED/recitation/$f" ]] && SOURCES+=("$SHARED/recitation/$f")
    done
fi
[[ ${#SOURCES[@]} -gt 0 ]] || SOURCES=("$ROOT/Tests/TestSupport/Fixtures/rec_001.mp3")
i=0
for s in "${SOURCES[@]}"; do
    sox "$s" -r 44100 -c 2 -b 16 "$WORK/part$i.wav" 2>/dev/null
    i=$((i + 1))
done
sox "$WORK"/part*.wav "$WORK/real.wav"                       # a few minutes of real recitation
sox "$WORK/real.wav" "$WORK/loop.wav" repeat 30 2>/dev/null  # long enough for an hour
sox "$WORK/loop.wav" "$WORK/in5min.wav" trim 0 300
sox "$WORK/loop.wav" "$WORK/in3min.wav" trim 0 180
sox "$WORK/loop.wav" "$WORK/in1h.wav" trim 0 3600
if have lame; then
    lame --quiet -b 128 "$WORK/in3min.wav" "$WORK/in3min.mp3"
else
    sox "$WORK/in3min.wav" -C 128 "$WORK/in3min.mp3"
fi
rm -f "$WORK"/part*.wav "$WORK/loop.wav" "$WORK/real.wav" "$WORK/in3min.wav"
# Let the ~700 MB just written reach the disk first: otherwise its writeback competes with the
# timed runs, and most of all with the ones that sync their output.
sync -f "$WORK/in1h.wav"

# --- Timing --------------------------------------------------------------------------------
# Wall time from bash's own clock ($EPOCHREALTIME, microseconds, read without starting a process).
run_tool() { # tool input output
    case "$1" in
        proofkit) "$PROOFKIT_BIN" trim "$2" -o "$3" >/dev/null 2>&1 ;;
        proofkit-sync) "$PROOFKIT_BIN" trim --sync "$2" -o "$3" >/dev/null 2>&1 ;;
        sox) sox "$2" -b 16 "$3" trim 0 29 2>/dev/null ;;
        sox-sync) sox "$2" -b 16 "$3" trim 0 29 2>/dev/null && sync --data "$3" ;;
        ffmpeg) ffmpeg -nostdin -v error -y -i "$2" -t 29 -c:a pcm_s16le "$3" ;;
    esac
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { sort -n | head -1; }
peak_rss_kib() { # tool input output
    local log="$WORK/time.log"
    case "$1" in
        proofkit) /usr/bin/time -v "$PROOFKIT_BIN" trim "$2" -o "$3" >/dev/null 2>"$log" ;;
        proofkit-sync) /usr/bin/time -v "$PROOFKIT_BIN" trim --sync "$2" -o "$3" >/dev/null 2>"$log" ;;
        sox | sox-sync) /usr/bin/time -v sox "$2" -b 16 "$3" trim 0 29 2>"$log" ;;
        ffmpeg) /usr/bin/time -v ffmpeg -nostdin -v error -y -i "$2" -t 29 -c:a pcm_s16le "$3" 2>"$log" ;;
    esac
    awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$log"
}

# Two passes per input: the tools that leave the data to the kernel, then the ones that sync it.
# Mixing them in one round lets a sync (an ext4 journal commit, which also writes the other tools'
# freshly allocated data) slow down whichever plain tool runs next.
PLAIN=(proofkit sox)
have ffmpeg && PLAIN+=(ffmpeg)
SYNCED=(proofkit-sync sox-sync)
TOOLS=("${PLAIN[@]}" "${SYNCED[@]}")
# Like for like: each proofkit mode against sox with the same durability.
declare -A PEER=([proofkit]=sox [proofkit-sync]=sox-sync [sox]=sox [sox-sync]=sox-sync [ffmpeg]=sox)

echo "## proofkit trim vs sox and ffmpeg (first 29 s to 16-bit CAF)"
echo
echo "Machine: $(uname -m), $(nproc) cores, $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//'), kernel $(uname -r)."
echo "Tools: $("$PROOFKIT_BIN" --version), $(sox --version 2>&1 | head -1 | sed 's/.*SoX/SoX/'), $(have ffmpeg && ffmpeg -version | head -1 | cut -d' ' -f1-3)."
echo "Runs: $RUNS per tool and input, alternating in a rotating order within two passes (plain tools, then syncing ones); wall time from bash's \$EPOCHREALTIME; peak RSS from /usr/bin/time -v."
have ffmpeg || echo "ffmpeg is missing: skipped."
echo
echo "Output: 'replace' writes over the previous run's output (as re-making an alarm sound does; the"
echo "file system frees the old file's blocks inside the timed command), 'new' removes it first (outside"
echo "the timed region)."
echo
echo "| input | output | tool | median ms | min ms | x sox (median) | x like for like | peak RSS MiB |"
echo "|---|---|---|---:|---:|---:|---:|---:|"

for input in in3min.mp3 in5min.wav in1h.wav; do
  for output in replace new; do
    declare -A times=()
    for tool in "${TOOLS[@]}"; do times[$tool]=""; run_tool "$tool" "$WORK/$input" "$WORK/out-$tool.caf"; done  # warm-up
    rounds=$RUNS
    [[ $input == in1h.wav ]] && rounds=$(( RUNS < 5 ? RUNS : 5 ))
    for pass in plain synced; do
        if [[ $pass == plain ]]; then group=("${PLAIN[@]}"); else group=("${SYNCED[@]}"); fi
        sync -f "$WORK/$input"  # start each pass with nothing left to write
        for ((r = 0; r < rounds; r++)); do
            # The order rotates every round, so each tool follows each other one equally often
            # (a tool that writes a lot, like ffmpeg, leaves the disk busy for whoever comes next).
            for ((k = 0; k < ${#group[@]}; k++)); do
                tool=${group[$(( (k + r) % ${#group[@]} ))]}
                [[ $output == new ]] && rm -f "$WORK/out-$tool.caf"
                t0=${EPOCHREALTIME/./}
                run_tool "$tool" "$WORK/$input" "$WORK/out-$tool.caf"
                t1=${EPOCHREALTIME/./}
                times[$tool]+="$(( t1 - t0 )) "
            done
        done
    done
    sox_median=$(echo "${times[sox]}" | tr ' ' '\n' | grep . | median)
    for tool in "${TOOLS[@]}"; do
        med=$(echo "${times[$tool]}" | tr ' ' '\n' | grep . | median)
        min=$(echo "${times[$tool]}" | tr ' ' '\n' | grep . | minimum)
        peer=$(echo "${times[${PEER[$tool]}]}" | tr ' ' '\n' | grep . | median)
        like="${PEER[$tool]}"
        rss=""
        [[ $output == replace ]] && rss=$(peak_rss_kib "$tool" "$WORK/$input" "$WORK/out-$tool.caf")
        awk -v i="$input" -v o="$output" -v t="$tool" -v m="$med" -v n="$min" -v s="$sox_median" -v p="$peer" -v l="$like" -v r="$rss" \
            'BEGIN { printf "| %s | %s | %s | %.1f | %.1f | %.2f | %.2f (vs %s) | %s |\n", i, o, t, m/1000, n/1000, m/s, m/p, l, (r == "" ? "" : sprintf("%.1f", r/1024)) }'
    done
    unset times
  done
done
echo
echo "Targets: proofkit <= 0.70x sox's median wall time; proofkit peak RSS < 32 MiB on every input."
echo "proofkit's default writes the output atomically (temporary file, check, rename) without waiting for"
echo "the disk, like plain sox; --sync also fdatasyncs the complete file before the rename, and sox-sync"
echo "(sox followed by 'sync --data OUT', one more process start) is its durable equivalent."
echo
echo "Process start-up alone (no audio work), median of $RUNS:"
echo
echo "| command | median ms |"
echo "|---|---:|"
for cmd in "$PROOFKIT_BIN --version" "sox --version"; do
    t=""
    for ((r = 0; r < RUNS; r++)); do t0=${EPOCHREALTIME/./}; $cmd >/dev/null 2>&1; t1=${EPOCHREALTIME/./}; t+="$(( t1 - t0 )) "; done
    med=$(echo "$t" | tr ' ' '\n' | grep . | median)
    awk -v c="${cmd##*/}" -v m="$med" 'BEGIN { printf "| %s | %.1f |\n", c, m/1000 }'
done
