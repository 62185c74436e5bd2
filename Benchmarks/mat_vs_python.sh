#!/usr/bin/env bash
# proofkit mat vs the Python peer, side by side (see Benchmarks/mat_vs_python.py --help).
# Builds the release binary if needed; extra arguments go to the script.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .build/release/proofkit ] || swift build -c release --product proofkit >&2
exec .deps/venv/bin/python Benchmarks/mat_vs_python.py "$@"
