# Shared set-up of the prepared GPU scripts (sourced by benchmarks/gpu_*.sh, run from the
# repository root): the project's sources on the path, no display, no progress bars, the
# interpreter in $PY, and `gpu_device NAME`, which checks the packages, prints the Python,
# torch and CUDA versions to stderr and echoes the device to use ("cuda" or "cpu").
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export MPLBACKEND=Agg TQDM_DISABLE=1
PY="${PYTHON:-python3}"
if [ -x /work/venv/bin/python ] && [ -z "${PYTHON:-}" ]; then PY=/work/venv/bin/python; fi

gpu_device() {
  "$PY" - "$1" <<'PYEOF'
import importlib.util, sys
missing = [m for m in ("torch", "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "tqdm")
           if importlib.util.find_spec(m) is None]
if missing:
    sys.exit(f"{sys.argv[1]}: missing Python packages: {', '.join(missing)}")
import torch
print(f"python {sys.version.split()[0]}, torch {torch.__version__}, "
      f"cuda available: {torch.cuda.is_available()}", file=sys.stderr, flush=True)
print("cuda" if torch.cuda.is_available() else "cpu")
PYEOF
}
