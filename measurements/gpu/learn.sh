#!/usr/bin/env bash
# The learning recipe on the GPU machine: several `learn-demo` runs at once on its one GPU (each
# run's kernels are small: one run leaves most of an H100 idle), each in its own folder, under one
# deadline. Run from the checkout's root:
#
#   bash measurements/gpu/learn.sh [options] NAME='learn-demo options' [NAME='...' ...]
#
#   --deadline SECONDS  the whole run's wall-clock budget (default 540; RUN_SECONDS too; above 45): each run
#                       is stopped this many seconds after the start, less 45 s for packing,
#                       and what it finished (every evaluation's report) still comes back
#   --parity            the CUDA parity checks too, beside the runs (they hold little of the GPU)
#   --self-test         here, without a GPU: the same on the CPU (give tiny runs: --preset tiny ...)
#
# e.g. bash measurements/gpu/learn.sh --parity a='--context self --preset 10m --batch 64 --lr 1e-3 --questions 60000 --sft-steps 3000 --grpo-steps 0'
#
# It uses what measurements/gpu/pack.sh packed into .device/ here (carry it: dist/, the addon built
# with nvcc for sm_90, a node binary, the packages dist/ imports outside the command line's bundle,
# and ToMi val and ParaphrasedToMi val_600 in .device/data, passed as --val and --paraphrased: the
# GPU machine has none of them). Each run passes --device cuda (cpu with --self-test) and writes
# to /tmp/socialworld-learn/NAME. To $OUT: env.log, parity.log and parity.json (with --parity), and
# learn.tar.xz (.gz without xz): each run's log, results.md, evaluation reports and store (every reply), training
# logs and stage records (not the models nor the generated data), and runs.md, every run's results
# one after another (also printed last).
set -uo pipefail
# $OUT as the caller meant it, before the script moves to the checkout's root.
[ -n "${OUT:-}" ] && OUT=$(realpath -m "$OUT")
cd "$(dirname "$0")/../.."

SELF_TEST=0
PARITY=0
BUDGET=${RUN_SECONDS:-540}
RUNS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --self-test) SELF_TEST=1 ;;
    --parity) PARITY=1 ;;
    --deadline) BUDGET=${2:-}; shift ;;
    [A-Za-z0-9]*=*) RUNS+=("$1") ;;
    *) echo "learn.sh: unknown argument $1 (--self-test, --parity, --deadline SECONDS, NAME='learn-demo options')" >&2; exit 2 ;;
  esac
  shift
done
[ ${#RUNS[@]} -gt 0 ] || { echo "learn.sh: no run given (NAME='learn-demo options')" >&2; exit 2; }
# Each run stops 45 s before the deadline, and `timeout 0` would not stop it at all.
[[ "$BUDGET" =~ ^[0-9]+$ ]] && [ "$BUDGET" -gt 45 ] || { echo "learn.sh: --deadline: whole seconds above 45 (each run stops 45 s before it), not '$BUDGET'" >&2; exit 2; }
# A name is a folder under $WORK, removed first: no path, and no two runs in one folder.
NAMES=" "
for spec in "${RUNS[@]}"; do
  name=${spec%%=*}
  [[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "learn.sh: run name '$name': letters, digits, _ and - only (it names the run's folder)" >&2; exit 2; }
  [[ "$NAMES" == *" $name "* ]] && { echo "learn.sh: run name '$name' given twice (each run has its own folder)" >&2; exit 2; }
  NAMES+="$name "
done
OUT="${OUT:-/tmp/socialworld-gpu-learn}"
WORK=/tmp/socialworld-learn
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
START=$(date +%s)
ENV_LOG="$OUT/env.log"
: >"$ENV_LOG"
log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$ENV_LOG"; }

# shellcheck source=measurements/gpu/env.sh
source measurements/gpu/env.sh
[ -e node_modules ] || { [ -d .device/node_modules ] && ln -s .device/node_modules node_modules; }
[ -f dist/measurements/learn-demo.js ] || { log "no dist/: run measurements/gpu/pack.sh here and carry .device"; exit 2; }
DATA=()
if [ -d .device/data ]; then DATA=(--val .device/data/fb_all_val.txt --paraphrased .device/data/val_600.txt); fi
DEVICE=cuda
[ "$SELF_TEST" = 1 ] && DEVICE=cpu
if [ "$SELF_TEST" = 0 ] && [ "$PROBE_RC" -ne 0 ]; then log "the CUDA device is not available: nothing to run"; exit 1; fi

if [ "$PARITY" = 1 ]; then
  P_ARGS=()
  [ "$SELF_TEST" = 1 ] && P_ARGS=(--quick --presets tiny)
  (timeout --kill-after=5 200 "$NODE" measurements/gpu/parity.mjs --addon "$ADDON" --json "$OUT/parity.json" "${P_ARGS[@]}" >"$OUT/parity.log" 2>&1
   log "parity: exit $? ($(grep -cE '^FAIL' "$OUT/parity.log") failed; $(grep -E 'checks pass' "$OUT/parity.log" | tail -1))") &
fi

# Each run stops where packing must start: 45 s before the deadline.
LIMIT=$((BUDGET - 45))
for spec in "${RUNS[@]}"; do
  name=${spec%%=*}
  rm -rf "${WORK:?}/$name"
  mkdir -p "$WORK/$name"
  # shellcheck disable=SC2086
  (log "$name: node dist/measurements/learn-demo.js --out $WORK/$name --device $DEVICE ${spec#*=}"
   timeout --kill-after=5 "$LIMIT" "$NODE" dist/measurements/learn-demo.js --out "$WORK/$name" --device "$DEVICE" "${DATA[@]}" ${spec#*=} >"$WORK/$name/run.log" 2>&1
   log "$name: exit $? after $(($(date +%s) - START)) s") &
done
wait
# `nvidia-smi` once more: what the runs left on the device (none should be left).
[ "$SELF_TEST" = 0 ] && nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv >>"$ENV_LOG" 2>&1

# Every run's results (or its log's end where it did not finish), one after another.
for spec in "${RUNS[@]}"; do
  name=${spec%%=*}
  echo "## $name: ${spec#*=}"
  echo
  if [ -f "$WORK/$name/results.md" ]; then cat "$WORK/$name/results.md"; else echo "(not finished: the end of its log)"; echo; echo '```'; tail -20 "$WORK/$name/run.log"; echo '```'; fi
  echo
done >"$WORK/runs.md"
# Everything but the models, their checkpoints and the generated data (the seed remakes it).
# (gzip where the machine has no xz.)
PACK=(-cJf "$OUT/learn.tar.xz")
command -v xz >/dev/null || PACK=(-czf "$OUT/learn.tar.gz")
(cd "$WORK" && XZ_OPT=-T0 tar --exclude='model.safetensors' --exclude='checkpoint-*' --exclude='sft.jsonl' \
  --exclude='generated.*' --exclude='train.*' "${PACK[@]}" .)
log "done in $(($(date +%s) - START)) s"
cat "$WORK/runs.md"
