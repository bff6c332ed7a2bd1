#!/usr/bin/env bash
# SpectrumTracker on a lent GPU: the per-record cost table, the A/B overhead, a GPT-2-small-size
# transformer during training, and (two GPUs or more) the DDP/FSDP tests and the DDP A/B.
# Run from the repository root:   bash benchmarks/gpu_tracker.sh [extra tracker.py options]
# Parts (SPECDYN_GPU_PARTS, comma-separated; default all):
#   record  one record of the width-512 CharTransformer (--wide), part by part, the per-matrix
#           reference against the batched float32 code, best of 3 interleaved rounds (~20 s)
#   ab      its A/B overhead over 2000 steps (blocks of 250, tracker.flush() charged to the
#           tracked block), default schedule and policy (~2-3 min; bare ~22 ms a step)
#   gpt2    benchmarks/tracker_gpt2.py: a ~124M-parameter GPT-2-small-size transformer, batch
#           8 x 256 tokens, AdamW, 3 interleaved rounds of 100 steps an arm, a record every 50
#           steps: overhead and per-record cost as ratios (~3 min expected; not yet measured)
#   ddp     with 2+ GPUs: tests/measure/test_tracker_distributed.py with each rank on its own
#           GPU (SPECDYN_RANKS_DEVICE=cuda, nccl) and benchmarks/tracker_ddp.py under torchrun
# Writes under $OUT (the device tool's result folder) or ./specdyn-gpu-out. Imports and warm-up
# ~30 s. With every part give the command a timeout of about 600 s, or run the parts apart.
# CPU smoke test (tiny; every part but ddp):  SPECDYN_GPU_SMOKE=1 bash benchmarks/gpu_tracker.sh
set -euo pipefail
OUT_DIR="${OUT:-specdyn-gpu-out}/tracker-gpu"
mkdir -p "$OUT_DIR"
. benchmarks/_gpu_env.sh
DEVICE=$(gpu_device gpu_tracker)
PARTS=",${SPECDYN_GPU_PARTS:-record,ab,gpt2,ddp},"
if [ "${SPECDYN_GPU_SMOKE:-0}" = "1" ]; then
  # tiny everything: checks the script end to end on a CPU in a few minutes
  SIZE=(--width 64 --layers 2 --heads 2 --batch 8 --max-samples 256)
  RECORD=(--rounds 1 --warm-steps 1)
  AB=(--steps 40 --block 20)
  GPT2=(--smoke --device cpu --threads 1)
elif [ "$DEVICE" != "cuda" ]; then
  echo "gpu_tracker: no CUDA device (set SPECDYN_GPU_SMOKE=1 for the CPU smoke test)" >&2
  exit 2
else
  SIZE=(--wide)
  RECORD=(--rounds 3)
  AB=(--steps 2000 --block 250)
  GPT2=(--device cuda)
fi
if [[ "$PARTS" == *,record,* ]]; then
  echo "== one record, part by part (device $DEVICE) =="
  "$PY" benchmarks/tracker.py "${SIZE[@]}" --device "$DEVICE" --threads 4 --record-only \
    "${RECORD[@]}" --json "$OUT_DIR/record.json" "$@"
  echo
fi
if [[ "$PARTS" == *,ab,* ]]; then
  echo "== A/B inside the training loop (device $DEVICE) =="
  "$PY" benchmarks/tracker.py "${SIZE[@]}" --device "$DEVICE" --threads 4 "${AB[@]}" \
    --json "$OUT_DIR/ab.json" "$@"
  echo
fi
if [[ "$PARTS" == *,gpt2,* ]]; then
  echo "== GPT-2-small-size transformer, A/B and per-record cost (device $DEVICE) =="
  "$PY" benchmarks/tracker_gpt2.py "${GPT2[@]}" --json "$OUT_DIR/gpt2.json"
  echo
fi
if [[ "$PARTS" == *,ddp,* ]]; then
  NGPU=$("$PY" -c "import torch; print(torch.cuda.device_count())")
  if [ "$DEVICE" = "cuda" ] && [ "$NGPU" -ge 2 ]; then
    echo "== DDP and FSDP tests, one GPU a rank ($NGPU GPUs) =="
    if "$PY" -c "import pytest" 2>/dev/null; then
      SPECDYN_RANKS_DEVICE=cuda "$PY" -m pytest -q -p no:cacheprovider \
        tests/measure/test_tracker_distributed.py
    else
      echo "gpu_tracker: pytest is not installed here; skipped the DDP/FSDP tests" >&2
    fi
    echo
    echo "== DDP A/B, $NGPU ranks =="
    "$PY" -m torch.distributed.run --nproc_per_node "$NGPU" benchmarks/tracker_ddp.py \
      --device cuda --width 512 --layers 8 --heads 8 --batch 32 --rounds 3 --block 100 \
      --every 50 --threads 4 --json "$OUT_DIR/ddp.json"
  else
    echo "== ddp: skipped ($NGPU CUDA device(s); it needs two or more) =="
  fi
fi
