#!/usr/bin/env bash
# The GPU run: parity of the CUDA backend with the CPU backend, then the speed benchmark against
# PyTorch, on one lent machine. Run from the checkout's root:
#
#   bash measurements/gpu/run.sh              on the GPU machine (OUT: where logs go, default $OUT)
#   bash measurements/gpu/run.sh --self-test  here: the same stages on the CUDA emulator with tiny
#                                              shapes (no GPU, no PyTorch needed), to check this script
#   --stages a,b,...   only these stages, in the order below (default: all):
#                      parity, train-0.5b, train-100m, train-10m, torch-eager (PyTorch training at
#                      the chosen train-* sizes), profile, generate, torch-generate, grpo,
#                      train-precisions (tf32 and fp32 at the chosen sizes), gemm, torch-compile
#                      (PyTorch compiled at 0.5B only, its compile time reported apart), checkpointing
#                      (0.5B training with and without activation checkpointing: 8 x 1,024 tokens, and
#                      4 x 16,384, whose activations do not fit without it), peft (our LoRA
#                      adapter in transformers and a PEFT-layout adapter for ours: needs .device/peft
#                      from `node dist/measurements/peft-check.js prepare --out .device/peft`; then
#                      `node dist/measurements/peft-check.js check --base .device/peft/base --adapter OUT/peft/py-adapter`
#                      here, with OUT brought back)
#   --deadline SECONDS the whole run's wall-clock budget (default 330; RUN_SECONDS too)
#
# It uses what was built and carried: native/build (the addon, compiled with nvcc for sm_90) and
# .device/node.xz (a node binary; the GPU machine has none), or what measurements/gpu/pack.sh
# packed into .device/ (carry .device alone; env.sh unpacks it). If the addon's kernels were not
# compiled for the GPU found, it recompiles the CUDA units there with nvcc and relinks. Every stage has its own
# timeout and the whole run a deadline: a stage that would start too late is skipped and says so;
# torch-compile runs last and takes what is left. Seven files (and peft/, with that stage) go to $OUT: env.log, parity.log,
# parity.json, results.jsonl, bench.log, torch.log, summary.md (the tables, also printed last).
set -uo pipefail
# $OUT as the caller meant it, before the script moves to the checkout's root.
[ -n "${OUT:-}" ] && OUT=$(realpath -m "$OUT")
cd "$(dirname "$0")/../.."

SELF_TEST=0
STAGES=all
BUDGET=${RUN_SECONDS:-330}
while [ $# -gt 0 ]; do
  case "$1" in
    --self-test) SELF_TEST=1 ;;
    --stages) STAGES=${2:-}; shift ;;
    --deadline) BUDGET=${2:-}; shift ;;
    *) echo "run.sh: unknown argument $1 (--self-test, --stages LIST, --deadline SECONDS)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$BUDGET" =~ ^[0-9]+$ ]] && [ "$BUDGET" -ge 20 ] || { echo "run.sh: --deadline: whole seconds, at least 20 (a stage needs 20 s left to start), not '$BUDGET'" >&2; exit 2; }
[ -n "$STAGES" ] || { echo "run.sh: --stages: a list of stages, e.g. parity,train-10m" >&2; exit 2; }
KNOWN=",parity,train-0.5b,train-100m,train-10m,torch-eager,profile,generate,torch-generate,grpo,train-precisions,gemm,checkpointing,peft,torch-compile,"
if [ "$STAGES" != all ]; then
  for s in ${STAGES//,/ }; do
    [[ "$KNOWN" == *",$s,"* ]] || { echo "run.sh: unknown stage $s (one of ${KNOWN:1:-1})" >&2; exit 2; }
  done
fi
# wanted NAME: whether the stage was selected.
wanted() { [ "$STAGES" = all ] || [[ ",$STAGES," == *",$1,"* ]]; }
OUT="${OUT:-/tmp/socialworld-gpu-run}"
mkdir -p "$OUT"
START=$(date +%s)
DEADLINE=$((START + BUDGET))
ENV_LOG="$OUT/env.log" BENCH_LOG="$OUT/bench.log" TORCH_LOG="$OUT/torch.log" RESULTS="$OUT/results.jsonl"
: >"$ENV_LOG"; : >"$BENCH_LOG"; : >"$TORCH_LOG"; : >"$RESULTS"; : >"$OUT/parity.log"; rm -f "$OUT/parity.json"

log() { echo "[$(($(date +%s) - START))s] $*" | tee -a "$ENV_LOG"; }

# stage NAME SECONDS STDOUT STDERR CMD...: runs CMD (appending its output to the two files) with
# the smaller of SECONDS and the time left; skips it when less than 20 s are left.
stage() {
  local name=$1 limit=$2 out=$3 err=$4
  shift 4
  local left=$((DEADLINE - $(date +%s) - 5))
  if [ "$left" -lt 20 ]; then
    log "SKIPPED $name: out of time"
    echo "{\"engine\":\"run.sh\",\"stage\":\"$name\",\"error\":\"skipped: the run's deadline\"}" >>"$RESULTS"
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$(date +%s)
  timeout --kill-after=5 "$limit" "$@" >>"$out" 2>>"$err"
  local rc=$?
  log "$name: exit $rc after $(($(date +%s) - t0)) s (limit $limit s)"
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "{\"engine\":\"run.sh\",\"stage\":\"$name\",\"error\":\"timed out after $limit s\"}" >>"$RESULTS"
  fi
  return 0
}

# ---- node, the GPU, cuBLAS, PyTorch ----
# shellcheck source=measurements/gpu/env.sh
source measurements/gpu/env.sh
if [ "$SELF_TEST" = 1 ]; then
  SHAPES=(--config tiny --batch 2 --seq 64)
  GEN_SHAPES=(--config tiny --prompt 16 --new 8)
  GRPO_SHAPES=(--config tiny --prompts 2 --samples 2 --prompt 8 --new 8 --micro 2)
  PARITY_ARGS=(--quick --presets tiny)
  BIG=tiny
else
  SHAPES=()
  GEN_SHAPES=()
  GRPO_SHAPES=()
  PARITY_ARGS=()
  BIG=0.5b
fi

# ---- parity ----
if wanted parity; then
  stage parity 150 "$OUT/parity.log" "$OUT/parity.log" "$NODE" measurements/gpu/parity.mjs --addon "$ADDON" --json "$OUT/parity.json" "${PARITY_ARGS[@]}"
  grep -E '^(FAIL|SKIPPED)|checks pass' "$OUT/parity.log"
fi

# ---- speed ----
BENCH=("$NODE" measurements/gpu/bench.mjs --addon "$ADDON")
TORCH=("$PY" measurements/gpu/torch_reference.py)
if (wanted torch-eager || wanted torch-generate || wanted torch-compile) && ! "$PY" -c 'import torch, transformers' 2>>"$TORCH_LOG"; then
  echo "{\"engine\":\"pytorch\",\"stage\":\"versions\",\"error\":\"$PY cannot import torch and transformers\"}" >>"$RESULTS"
  TORCH=(true)
fi
# The training sizes chosen (the self-test runs them all at the tiny shape).
SIZES=()
for c in 0.5b 100m 10m; do wanted "train-$c" && SIZES+=("$c"); done
if [ "$SELF_TEST" = 1 ]; then
  [ ${#SIZES[@]} -gt 0 ] && SIZES=(tiny)
  GEN_BATCHES=(1 2) T_ARGS=(--batch 2 --seq 64 --gen-config tiny --prompt 16 --new 8)
else
  GEN_BATCHES=(1 32) T_ARGS=()
fi
run() { stage "$1" "$2" "$RESULTS" "$3" "${@:4}"; }
size_args() { [ "$SELF_TEST" = 1 ] && echo "${SHAPES[@]}"; }

for c in "${SIZES[@]}"; do
  # shellcheck disable=SC2046
  run "train $c bf16" 60 "$BENCH_LOG" "${BENCH[@]}" --stage train --config "$c" --precision bf16 $(size_args)
done
TORCH_STAGES=()
if wanted torch-eager; then for c in "${SIZES[@]}"; do TORCH_STAGES+=("train:$c"); done; fi
if wanted torch-generate; then TORCH_STAGES+=("generate:${GEN_BATCHES[0]}" "generate:${GEN_BATCHES[1]}"); fi
if [ ${#TORCH_STAGES[@]} -gt 0 ]; then
  LIST=$(IFS=,; echo "${TORCH_STAGES[*]}")
  run "pytorch eager" 150 "$TORCH_LOG" "${TORCH[@]}" --stages "$LIST" "${T_ARGS[@]}"
fi
wanted profile && run "profile $BIG" 60 "$BENCH_LOG" "${BENCH[@]}" --stage profile --config "$BIG" --precision bf16 "${SHAPES[@]}"
if wanted generate; then
  for b in "${GEN_BATCHES[@]}"; do run "generate $BIG batch $b" 60 "$BENCH_LOG" "${BENCH[@]}" --stage generate --config "$BIG" --batch "$b" "${GEN_SHAPES[@]}"; done
fi
wanted grpo && run "grpo $BIG" 90 "$BENCH_LOG" "${BENCH[@]}" --stage grpo --config "$BIG" --precision bf16 "${GRPO_SHAPES[@]}"
if wanted train-precisions; then
  for c in "${SIZES[@]}"; do
    for p in tf32 fp32; do
      # shellcheck disable=SC2046
      run "train $c $p" 60 "$BENCH_LOG" "${BENCH[@]}" --stage train --config "$c" --precision "$p" --steps 3 $(size_args)
    done
  done
fi
[ "$SELF_TEST" = 0 ] && wanted gemm && run "gemm modes" 60 "$BENCH_LOG" "${BENCH[@]}" --stage gemm --config 0.5b --reps 10
if wanted checkpointing; then
  if [ "$SELF_TEST" = 1 ]; then CK_SHAPES=("2 64" "1 256"); else CK_SHAPES=("8 1024" "4 16384"); fi
  for shape in "${CK_SHAPES[@]}"; do
    read -r b s <<<"$shape"
    for ck in 0 1; do
      run "memory $BIG $b x $s checkpointing $ck" 60 "$BENCH_LOG" "${BENCH[@]}" --stage memory --config "$BIG" --precision bf16 --batch "$b" --seq "$s" --checkpointing "$ck" --steps 2
    done
  done
fi
if wanted peft; then
  if [ ! -f .device/peft/ours.json ]; then
    echo '{"engine":"run.sh","stage":"peft","error":"no .device/peft: run node dist/measurements/peft-check.js prepare --out .device/peft before the run"}' >>"$RESULTS"
  elif ! "$PY" -c 'import torch, transformers, safetensors' 2>>"$TORCH_LOG"; then
    echo "{\"engine\":\"pytorch\",\"stage\":\"peft\",\"error\":\"$PY cannot import torch, transformers and safetensors\"}" >>"$RESULTS"
  else
    run "peft round trip" 120 "$TORCH_LOG" "$PY" measurements/gpu/peft_parity.py --dir .device/peft --out "$OUT/peft"
  fi
fi
# Last, with whatever time is left: compiling the 0.5B model takes minutes.
wanted torch-compile && run "pytorch compile" 600 "$TORCH_LOG" "${TORCH[@]}" --compile --stages "train:$BIG" "${T_ARGS[@]}"

# ---- tables ----
"$NODE" measurements/gpu/report.mjs "$RESULTS" "$OUT/parity.json" >"$OUT/summary.md" 2>&1
log "done in $(($(date +%s) - START)) s"
echo
cat "$OUT/summary.md"
