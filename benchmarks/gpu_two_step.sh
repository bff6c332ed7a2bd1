#!/usr/bin/env bash
# two-step-phase's chosen cells at widths no CPU reaches (N = D = M = 8000, 16000, 32000,
# each only if it fits the device's memory and the time left), then two-step-phase (and
# batch-reuse) at their --full sizes (N = D = M = 4000) on a lent GPU.
# Run from the repository root:   bash benchmarks/gpu_two_step.sh [extra gpu_two_step.py options]
# Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out.
# Expected: ~1 min of imports, the chosen cells within --cells-budget-s (200 s: 8000 and
# 16000 on an H100; 32000, about 100 GB of float64 matrices, on an H200 only), a 3-cell
# probe, then the --full grid (300 cells) if the probe predicts it fits in --budget-s
# (200 s), then batch-reuse --full with the time left (--reuse): give the command a timeout
# of about 560 s. Each chosen-cell run prints its step-2 outliers beside floor and the
# finite-N theory's count.
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/two-step-gpu"
. benchmarks/_gpu_env.sh
gpu_device gpu_two_step >/dev/null
exec "$PY" benchmarks/gpu_two_step.py --out "$OUT_DIR" --budget-s 200 --reuse \
    --cells-N 8000,16000,32000 --cells-budget-s 200 "$@"
