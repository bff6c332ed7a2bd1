#!/usr/bin/env bash
# two-step-phase (and batch-reuse) at their --full sizes (N = D = M = 4000) on a lent GPU.
# Run from the repository root:   bash benchmarks/gpu_two_step.sh [extra gpu_two_step.py options]
# Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out.
# Expected: ~1 min of imports and a 3-cell probe, then the --full grid (300 cells) if the
# probe predicts it fits in --budget-s (default 200 s), then batch-reuse --full with the time
# left (--reuse): give the command a timeout of about 300 s.
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/two-step-gpu"
. benchmarks/_gpu_env.sh
gpu_device gpu_two_step >/dev/null
exec "$PY" benchmarks/gpu_two_step.py --out "$OUT_DIR" --budget-s 200 --reuse "$@"
