#!/usr/bin/env bash
# The one prepared GPU check (gpu/README.md): < 8 minutes on one GPU.
#   1. the GPU tests (codec bytes on the device, the greedy rule and the probe on CUDA);
#   2. `lam-ref determinism probe --device cuda` on the shared trajectories with the float16-stored
#      MiniLM weights (6 batch sizes x 2 thresholds), compared with the committed CPU reference made
#      from the same weights;
#   3. GPU throughput of verification and of the codec (gpu/throughput.py).
# Reports go to determinism/reports/ (LAM_REPORTS overrides; copied to $OUT when the caller provides one).
# Environment: PYTHON (default python3), LAM_SHARED_DATA (default: shared/data/swe-agent-trajectories
# in the checkout, then ../shared/...), LAM_WEIGHTS (default determinism/weights/all-MiniLM-L6-v2-f16).
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false HYPOTHESIS_PROFILE=ci
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
REPORTS=${LAM_REPORTS:-determinism/reports}
WEIGHTS=${LAM_WEIGHTS:-determinism/weights/all-MiniLM-L6-v2-f16}
DATA=${LAM_SHARED_DATA:-}
for d in "$DATA" shared/data/swe-agent-trajectories ../shared/data/swe-agent-trajectories; do
  if [ -n "$d" ] && [ -d "$d" ]; then DATA=$d; break; fi
done
export LAM_SHARED_DATA=$DATA
TAG=$(date -u +%Y%m%dT%H%M%SZ)
LOG=$REPORTS/gpu-run-$TAG.log
mkdir -p "$REPORTS"
status=0
step() { echo; echo "== $* ($(date -u +%T))" | tee -a "$LOG"; }

step "machine"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || echo "nvidia-smi: not found"
  "$PY" - <<'PYEOF'
import importlib
for m in ("numpy", "torch", "cupy", "sentence_transformers", "transformers", "tiktoken", "lam_ref"):
    try:
        mod = importlib.import_module(m)
        extra = ""
        if m == "torch":
            extra = f" cuda={mod.version.cuda} available={mod.cuda.is_available()}"
        print(f"{m} {getattr(mod, '__version__', '?')}{extra}")
    except Exception as exc:
        print(f"{m}: MISSING ({type(exc).__name__}: {exc})")
PYEOF
  echo "shared data: ${DATA:-NOT FOUND}"; echo "weights: $WEIGHTS $( [ -d "$WEIGHTS" ] && echo present || echo MISSING)"
} 2>&1 | tee -a "$LOG"

step "GPU tests (timeout 150 s)"
timeout 150 "$PY" -m pytest -q -p no:cacheprovider -rs -m gpu tests/test_codec_gpu.py determinism/test_gpu.py 2>&1 | tail -25 | tee -a "$LOG"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

OUTREP=$REPORTS/gpu-shared-f16w-$TAG.json
if [ -n "$DATA" ] && [ -d "$WEIGHTS" ]; then
  step "probe --device cuda, shared trajectories, float16-stored weights (timeout 200 s)"
  timeout 200 "$PY" -m lam_ref.cli determinism probe "$DATA" --device cuda --encoder "$WEIGHTS" \
      --json "$OUTREP" --no-progress 2>&1 | tail -20 | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  step "compare with the CPU reference made from the same weights"
  REF=$(ls determinism/reports/cpu-shared-f16w*.json 2>/dev/null | head -1)
  if [ -f "$OUTREP" ] && [ -n "$REF" ]; then
    "$PY" -m lam_ref.cli determinism compare "$REF" "$OUTREP" --json "$REPORTS/gpu-compare-$TAG.json" 2>&1 | tail -30 | tee -a "$LOG"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    echo "no GPU report or no CPU reference (cpu-shared-f16w*.json): nothing compared" | tee -a "$LOG"; status=1
  fi
else
  step "probe skipped: shared data (${DATA:-none}) or weights ($WEIGHTS) missing"; status=1
fi

step "throughput of verification and codec (timeout 120 s)"
timeout 120 "$PY" gpu/throughput.py --out "$REPORTS/gpu-throughput-$TAG.json" 2>&1 | tail -25 | tee -a "$LOG"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "done: status $status"
if [ -n "${OUT:-}" ] && [ -d "${OUT:-}" ]; then cp "$REPORTS"/gpu-*"$TAG"* "$OUT"/ 2>/dev/null; fi
exit $status
