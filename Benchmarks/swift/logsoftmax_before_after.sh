#!/usr/bin/env bash
# Instructions of WhisperTranscriber.logSoftmax at two commits (Benchmarks/BEFORE_AFTER.md):
#   bash Benchmarks/swift/logsoftmax_before_after.sh [BEFORE=72f14d2] [AFTER=HEAD]
# For each commit: the engine's SpeechMath.swift and the logSoftmax functions of its
# WhisperDecoding.swift (in a bare WhisperTranscriber enum), compiled with logsoftmax_driver.swift
# by `swiftc -O -wmo`, run under valgrind --tool=callgrind; prints both totals and the driver's sums.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for rev in "${1:-72f14d2}" "${2:-HEAD}"; do
    dir="$work/$rev"
    mkdir -p "$dir"
    git show "$rev:Sources/Engines/SpeechRecognition/SpeechMath.swift" >"$dir/math.swift"
    {
        echo "enum WhisperTranscriber {"
        git show "$rev:Sources/Engines/SpeechRecognition/WhisperDecoding.swift" |
            awk '/    \/\/\/ `log softmax\(row\)\[index\]`/,/    \/\/\/ When `tokens` ends with a group/' |
            grep -v 'When `tokens` ends'
        echo "}"
    } >"$dir/lsm.swift"
    cp Benchmarks/swift/logsoftmax_driver.swift "$dir/main.swift"
    (cd "$dir" && swiftc -O -wmo math.swift lsm.swift main.swift -o driver)
    sum=$("$dir/driver")
    total=$(valgrind --tool=callgrind --callgrind-out-file="$dir/out" "$dir/driver" 2>&1 | sed -n 's/.*Collected : //p')
    echo "$rev: $total instructions, sum $sum"
done
