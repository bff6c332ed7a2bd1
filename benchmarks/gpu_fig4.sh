#!/usr/bin/env bash
# Fig. 4 at the paper's sizes on a lent GPU, plus the engine-vs-autograd table.
# Run from the repository root:   bash benchmarks/gpu_fig4.sh [extra gpu_fig4.py options]
# Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out.
# Expected: ~1-2 min of imports/probes, the fig4 run capped at --budget-s (default 240 s),
# then ~1 min of benchmark table: give the command a timeout of about 480 s.
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/fig4-gpu"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export MPLBACKEND=Agg TQDM_DISABLE=1
PY="${PYTHON:-python3}"
if [ -x /work/venv/bin/python ] && [ -z "${PYTHON:-}" ]; then PY=/work/venv/bin/python; fi
"$PY" - <<'PYEOF'
import importlib.util, sys
missing = [m for m in ("torch", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "tqdm")
           if importlib.util.find_spec(m) is None]
if missing:
    sys.exit(f"gpu_fig4: missing Python packages: {', '.join(missing)}")
import torch
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, "
      f"cuda available: {torch.cuda.is_available()}", flush=True)
PYEOF
exec "$PY" benchmarks/gpu_fig4.py --out "$OUT_DIR" "$@"
