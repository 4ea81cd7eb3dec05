#!/usr/bin/env bash
# Train on a CUDA machine in resumable chunks, then export the model (README: "Training on a GPU").
#
#   scripts/train_gpu.sh PUZZLE RUN_DIR [TOTAL_MINUTES] [CHUNK_MINUTES] [-- extra puzzlezero train args]
#
# Runs `puzzlezero train PUZZLE --out RUN_DIR --max-minutes CHUNK_MINUTES` again and again, each
# chunk resuming the checkpoint of the one before (the first resumes too if RUN_DIR already holds a
# run), until TOTAL_MINUTES (default 60; chunks of 5) of wall time are spent or the run's own limits
# are reached; then writes the model folder RUN_DIR/model. With several GPUs visible each chunk runs
# under torchrun, one process per GPU (puzzlezero.train.ddp). Settings, from the environment:
#
#   DEVICE=cuda             cpu to try it out on a CPU
#   AMP=bf16                (off on cpu)      bfloat16 autocast of the forward passes
#   BATCH=10000             (1000 on cpu)     B, training states per gradient step and process
#   INFERENCE_BATCH=65536   (2048 on cpu)     children per target-network call
#   THREADS=cores/NPROC                       torch threads per process
#   LABEL_WORKERS=0                           label-making processes beside each trainer, one core
#                                             each, evaluating on the GPU too: the trainer's own
#                                             NumPy work then no longer bounds it (e.g. 12 of 16
#                                             cores, with THREADS=2)
#   NPROC=number of GPUs    (1 on cpu)        processes; > 1 runs torchrun (gloo on cpu)
#   PRESET=                                   network preset of a new run (tiny, small, medium, paper)
#   INIT_FROM=                                a new run starts from this model (e.g. the shipped cube3)
#   PYTHON=python3                            a python3 whose torch sees CUDA is used as it is
#   VENV=.venv-gpu                            else this virtual environment, made if missing
#
# lr_decay is per iteration: with label workers one H200 made about 70 iterations of 10,000 a second
# (docs/training.md, "GPUs"), so a tenfold decay over M minutes is lr_decay = 0.1 ** (1 / (4200 * M)).
#
# Example: THREADS=2 LABEL_WORKERS=13 scripts/train_gpu.sh cube3 runs/cube3-gpu 30 5 -- \
#     --set objective=qlearning --set lr=3e-4 --set lr_decay=0.99998 --set check_every=40
set -euo pipefail

usage() {
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2
    exit 2
}
[[ $# -ge 2 ]] || usage
PUZZLE=$1 RUN_DIR=$2
shift 2
TOTAL_MINUTES=60 CHUNK_MINUTES=5
if [[ $# -gt 0 && $1 != -- ]]; then TOTAL_MINUTES=$1; shift; fi
if [[ $# -gt 0 && $1 != -- ]]; then CHUNK_MINUTES=$1; shift; fi
if [[ $# -gt 0 ]]; then [[ $1 == -- ]] || usage; shift; fi
EXTRA=("$@")

REPO=$(cd "$(dirname "$0")/.." && pwd)
DEVICE=${DEVICE:-cuda}
VENV=${VENV:-$REPO/.venv-gpu}
PYTHON=${PYTHON:-python3}
log() { echo "train_gpu: $*" >&2; }

# ---- the Python -----------------------------------------------------------------------------------
# A GPU machine's own python3 with a CUDA torch (often itself a virtual environment, and often
# offline) is used as it is, with this checkout's src/ on PYTHONPATH; else a virtual environment.
if [[ ! -x $VENV/bin/python ]] && [[ $DEVICE == cuda* ]] &&
    "$PYTHON" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
    PY=$(command -v "$PYTHON")
    export PYTHONPATH=$REPO/src${PYTHONPATH:+:$PYTHONPATH}
    "$PY" -c 'import puzzlezero.cli.main' || {
        log "$PY has a CUDA torch but lacks some of puzzlezero's requirements (pyproject.toml)"
        exit 1
    }
else
    if [[ ! -x $VENV/bin/python ]]; then
        if [[ $DEVICE == cpu ]]; then
            log "making $VENV with the CPU torch of constraints.txt"
            "$PYTHON" -m venv "$VENV"
            "$VENV/bin/pip" install -q -c "$REPO/constraints.txt" -e "$REPO"
        else
            log "making $VENV (no python3 with a CUDA torch here: pip installs torch)"
            "$PYTHON" -m venv "$VENV"
            "$VENV/bin/pip" install -q -e "$REPO"
        fi
    fi
    PY=$VENV/bin/python
fi
if [[ $DEVICE == cuda* ]] && ! "$PY" -c 'import torch, sys; sys.exit(not torch.cuda.is_available())'; then
    log "the torch of $PY sees no CUDA GPU (use another VENV or PYTHON, or DEVICE=cpu)"
    exit 1
fi

# ---- settings ------------------------------------------------------------------------------------
if [[ $DEVICE == cuda* ]]; then
    NPROC=${NPROC:-$("$PY" -c 'import torch; print(torch.cuda.device_count())')}
    AMP=${AMP:-bf16} BATCH=${BATCH:-10000} INFERENCE_BATCH=${INFERENCE_BATCH:-65536}
else
    NPROC=${NPROC:-1}
    AMP=${AMP:-off} BATCH=${BATCH:-1000} INFERENCE_BATCH=${INFERENCE_BATCH:-2048}
fi
THREADS=${THREADS:-$(($(nproc) / NPROC > 0 ? $(nproc) / NPROC : 1))}
export OMP_NUM_THREADS=$THREADS  # NumPy/BLAS too (and torchrun then sets nothing itself)
SETTINGS=(--set "device=$DEVICE" --set "amp=$AMP" --set "batch_size=$BATCH"
    --set "inference_batch=$INFERENCE_BATCH" --set "threads=$THREADS")
[[ -n ${LABEL_WORKERS:-} ]] && SETTINGS+=(--set "label_workers=$LABEL_WORKERS")
[[ -n ${PRESET:-} ]] && SETTINGS+=(--preset "$PRESET")
if [[ $NPROC -gt 1 ]]; then
    TRAIN=("$PY" -m torch.distributed.run --standalone --nproc_per_node "$NPROC" -m puzzlezero train)
else
    TRAIN=("$PY" -m puzzlezero train)
fi
log "$PUZZLE in $RUN_DIR: $TOTAL_MINUTES min in chunks of $CHUNK_MINUTES min; $NPROC x $DEVICE," \
    "amp $AMP, batch $BATCH per process, $THREADS threads"

# ---- the chunks ----------------------------------------------------------------------------------
start=$SECONDS
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
chunk=0
while :; do
    # minutes for this chunk: CHUNK_MINUTES, or what is left of TOTAL_MINUTES (stop below 0.1)
    minutes=$(awk -v total="$TOTAL_MINUTES" -v chunk="$CHUNK_MINUTES" -v spent=$((SECONDS - start)) \
        'BEGIN { left = total - spent / 60; m = chunk < left ? chunk : left; if (m >= 0.1) printf "%.2f", m }')
    [[ -n $minutes ]] || break
    chunk=$((chunk + 1))
    if [[ -f $RUN_DIR/checkpoint.pt ]]; then
        start_args=(--resume)
    else
        start_args=()
        [[ -n ${INIT_FROM:-} ]] && start_args=(--init-from "$INIT_FROM")
    fi
    log "chunk $chunk: ${start_args[*]:-new run} --max-minutes $minutes"
    "${TRAIN[@]}" "$PUZZLE" --out "$RUN_DIR" "${start_args[@]}" --max-minutes "$minutes" \
        "${SETTINGS[@]}" "${EXTRA[@]}" | tee -i "$summary"
    # the last line reads "finished: ...", "interrupted: ..." or "time limit: ..."
    if grep -q -E '^(finished|interrupted):' "$summary"; then
        break
    fi
done

"$PY" -m puzzlezero export "$RUN_DIR" "$RUN_DIR/model"
log "done after $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
