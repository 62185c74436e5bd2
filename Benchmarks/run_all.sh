#!/usr/bin/env bash
# proofkit's benchmark suite: every benchmark side by side with its peer, one markdown report.
#
#   Benchmarks/run_all.sh [--rounds 5] [--runs 100] [--trim-runs 5] [--quick] [--only inference,image,...]
#
# Builds proofkit and proofkit-bench in release mode (unless PROOFKIT_BIN and PROOFKIT_BENCH_BIN
# are set), then writes Benchmarks/REPORT.md. Missing peers are noted and skipped. Details:
# Benchmarks/run_all.py --help. Needs python3 (stdlib) for the orchestration; the Python peers run
# in .deps/venv, which the set-up makes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="$(command -v python3 || true)"
[[ -n "$PYTHON" ]] || PYTHON="$ROOT/.deps/venv/bin/python"
exec "$PYTHON" "$ROOT/Benchmarks/run_all.py" "$@"
