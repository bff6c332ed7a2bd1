#!/usr/bin/env bash
# two-step-phase (and batch-reuse) at their --full sizes (N = D = M = 4000) on a lent GPU.
# Run from the repository root:   bash benchmarks/gpu_two_step.sh [extra gpu_two_step.py options]
# Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out.
# Expected: ~1 min of imports and a 3-cell probe, then the --full grid (300 cells) if the
# probe predicts it fits in --budget-s (default 200 s), then batch-reuse --full with the time
# left (--reuse): give the command a timeout of about 300 s.
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/two-step-gpu"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export MPLBACKEND=Agg TQDM_DISABLE=1
PY="${PYTHON:-python3}"
if [ -x /work/venv/bin/python ] && [ -z "${PYTHON:-}" ]; then PY=/work/venv/bin/python; fi
"$PY" - <<'PYEOF'
import importlib.util, sys
missing = [m for m in ("torch", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "tqdm")
           if importlib.util.find_spec(m) is None]
if missing:
    sys.exit(f"gpu_two_step: missing Python packages: {', '.join(missing)}")
import torch
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, "
      f"cuda available: {torch.cuda.is_available()}", flush=True)
PYEOF
exec "$PY" benchmarks/gpu_two_step.py --out "$OUT_DIR" --budget-s 200 --reuse "$@"
