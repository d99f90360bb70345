#!/usr/bin/env bash
# compare_pytorch.sh: the tiny GPT's training speed against its PyTorch twin, interleaved.
#
# Each round runs the PyTorch twin (tools/tiny_gpt_twin.py, PyTorch 1.13 under /usr/bin/python3)
# and lesson 16 on the same corpus, flags and steps, one after the other
# (PyTorch first in odd rounds, qkv first in even ones), and prints both tokens/s and their
# ratio; the last line is the median ratio over the rounds. The machine is shared and noisy,
# so only ratios from one run of this script, and their median, mean much.
#
#   bash bench/compare_pytorch.sh ROUNDS default|larger|gpt2_small [STEPS] [TORCH_THREADS]
#        [QKV_THREADS]
#
# default:    n_embd 64, 4 heads, 2 layers, block 32, batch 16 (lesson 16's defaults);
# larger:     n_embd 128, 4 heads, 4 layers, block 64, batch 32;
# gpt2_small: GPT-2 small's shape, n_embd 768, 12 heads, 12 layers, block 128, batch 4 (85M
#             parameters with the corpus's 27 characters; one validation batch). STEPS defaults to 200;
# TORCH_THREADS to 1 and QKV_THREADS to 2 (each side's best on 2 cores).
# OPENBLAS_* are unset for PyTorch, as issue 8 asks: OpenBLAS then runs its GEMMs on its own
# pool of one thread per core, whatever torch.set_num_threads says (bench/README.md). On a CPU
# newer than PyTorch's OpenBLAS, which then falls back to old SSE kernels (OPENBLAS_VERBOSE=2
# prints "Core: Prescott"), TORCH_OPENBLAS_CORETYPE=SkylakeX (or Haswell) names the kernels it
# should run.
#
# Needs a release build (cmake --preset release && cmake --build --preset release) and PyTorch
# (apt-get install python3-torch); REFERENCE=path runs another twin. LLMC=path to an llm.c
# checkout adds llm.c's CPU trainer to every round, on QKV_THREADS OpenMP threads
# (bench/llmc_yardstick.sh builds it for the config). Neither PyTorch, llm.c nor this script is
# part of the build.
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: compare_pytorch.sh ROUNDS default|larger|gpt2_small [STEPS] [TORCH_THREADS] [QKV_THREADS]"
rounds=${1:?$usage}
config=${2:?$usage}
steps=${3:-200}
torch_threads=${4:-1}
torch_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
if [[ -n "${TORCH_OPENBLAS_CORETYPE:-}" ]]; then
  torch_env+=("OPENBLAS_CORETYPE=$TORCH_OPENBLAS_CORETYPE")
fi
qkv_threads=${5:-2}
reference=${REFERENCE:-tools/tiny_gpt_twin.py}
program=./build/release/tutorials/16_train_tiny_gpt
corpus=${CORPUS:-/tmp/qkv_compare_corpus.txt}

case "$config" in
  default) flags=(--steps "$steps") ;;
  larger) flags=(--n_embd 128 --n_layer 4 --block 64 --batch 32 --steps "$steps") ;;
  gpt2_small) flags=(--n_embd 768 --n_head 12 --n_layer 12 --block 128 --batch 4 --eval_batches 1
                     --steps "$steps") ;;
  *) echo "compare_pytorch.sh: config must be default, larger or gpt2_small, got '$config'" >&2
     exit 2 ;;
esac
[ -x "$program" ] || { echo "compare_pytorch.sh: build first: $program not found" >&2; exit 2; }
[ -f "$reference" ] || { echo "compare_pytorch.sh: reference not found: $reference" >&2; exit 2; }
[ -f "$corpus" ] || "$program" --write_corpus "$corpus" >/dev/null

# Runs a command with its output in a log; prints the summary's tokens/s, or the log on failure.
log=$(mktemp)
llmc_work=$(mktemp -d)
trap 'rm -rf "$log" "$llmc_work"' EXIT
tokens_per_s() {
  "$@" >"$log" 2>&1 || { cat "$log" >&2; echo "compare_pytorch.sh: failed: $*" >&2; exit 1; }
  grep -o 'tokens_per_s=[0-9.]*' "$log" | cut -d= -f2
}
ratios=()
run_torch() {
  torch=$(tokens_per_s "${torch_env[@]}" /usr/bin/python3 "$reference" \
    --data "$corpus" "${flags[@]}" --threads "$torch_threads" --log_every 100000)
}
run_qkv() {
  qkv=$(tokens_per_s "$program" --data "$corpus" "${flags[@]}" --threads "$qkv_threads" \
    --no_compare --sample 0 --log_every 100000)
}
run_llmc() {
  [ -n "${LLMC:-}" ] || return 0
  llmc=$(bash bench/llmc_yardstick.sh run "$llmc_work" "$qkv_threads" | grep -o 'tokens_per_s=[0-9.]*' |
    cut -d= -f2)
}
[ -z "${LLMC:-}" ] || bash bench/llmc_yardstick.sh prepare "$LLMC" "$config" "$steps" "$llmc_work"
# The order alternates: on this host the second of two back-to-back runs was measured up to
# 10% slower than the first, whichever program it was. llm.c, when asked for, runs last in odd
# rounds and first in even ones.
for r in $(seq 1 "$rounds"); do
  if ((r % 2)); then run_torch; run_qkv; run_llmc; else run_llmc; run_qkv; run_torch; fi
  ratio=$(awk -v q="$qkv" -v t="$torch" 'BEGIN { printf "%.2f", q / t }')
  ratios+=("$ratio")
  extra=""
  [ -z "${LLMC:-}" ] || extra=", llm.c ($qkv_threads thr) $llmc tokens/s"
  echo "round $r: PyTorch ($torch_threads thr) $torch tokens/s, qkv ($qkv_threads thr) $qkv tokens/s, ratio $ratio$extra"
done
printf '%s\n' "${ratios[@]}" | sort -n |
  awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
         printf "median ratio over %d rounds: %.2f (min %.2f, max %.2f)\n", NR, m, v[1], v[NR] }'
