#!/usr/bin/env bash
# Fig. 4 at the paper's sizes on a lent GPU, plus the engine-vs-autograd table.
# Run from the repository root:   bash benchmarks/gpu_fig4.sh [extra gpu_fig4.py options]
# Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out.
# Expected: ~1-2 min of imports/probes, the fig4 run capped at --budget-s (default 240 s),
# then ~1 min of benchmark table: give the command a timeout of about 480 s.
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/fig4-gpu"
. benchmarks/_gpu_env.sh
gpu_device gpu_fig4 >/dev/null
exec "$PY" benchmarks/gpu_fig4.py --out "$OUT_DIR" "$@"
