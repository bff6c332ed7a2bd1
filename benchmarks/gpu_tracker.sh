#!/usr/bin/env bash
# SpectrumTracker on a lent GPU (issue 31): the per-record cost table and the A/B overhead.
# Run from the repository root:   bash benchmarks/gpu_tracker.sh [extra tracker.py options]
# Model: the example's CharTransformer at width 512, 8 layers, 8 heads, batch 64 x 64
# tokens, AdamW (--wide). Prints (1) one record part by part, the per-matrix reference
# against the batched float32 code, best of 3 interleaved rounds; (2) the A/B overhead over
# 2000 steps (blocks of 250, tracker.flush() charged to the tracked block), default schedule
# and policy. Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out.
# Expected on an H200: ~30 s imports and warm-up, ~20 s the record table, ~2-3 min the A/B
# (bare ~22 ms a step): give the command a timeout of about 420 s.
# CPU smoke test (tiny):  SPECDYN_GPU_SMOKE=1 bash benchmarks/gpu_tracker.sh
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/tracker-gpu"
mkdir -p "$OUT_DIR"
. benchmarks/_gpu_env.sh
DEVICE=$(gpu_device gpu_tracker)
if [ "${SPECDYN_GPU_SMOKE:-0}" = "1" ]; then
  # tiny everything: checks the script end to end on a CPU in about a minute
  SIZE=(--width 64 --layers 2 --heads 2 --batch 8 --max-samples 256)
  RECORD=(--rounds 1 --warm-steps 1)
  AB=(--steps 40 --block 20)
elif [ "$DEVICE" != "cuda" ]; then
  echo "gpu_tracker: no CUDA device (set SPECDYN_GPU_SMOKE=1 for the CPU smoke test)" >&2
  exit 2
else
  SIZE=(--wide)
  RECORD=(--rounds 3)
  AB=(--steps 2000 --block 250)
fi
echo "== one record, part by part (device $DEVICE) =="
"$PY" benchmarks/tracker.py "${SIZE[@]}" --device "$DEVICE" --threads 4 --record-only \
  "${RECORD[@]}" --json "$OUT_DIR/record.json" "$@"
echo
echo "== A/B inside the training loop (device $DEVICE) =="
"$PY" benchmarks/tracker.py "${SIZE[@]}" --device "$DEVICE" --threads 4 "${AB[@]}" \
  --json "$OUT_DIR/ab.json" "$@"
