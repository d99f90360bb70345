#!/usr/bin/env bash
# llmc_yardstick.sh: llm.c's CPU trainer (train_gpt2.c, C with OpenMP) at the tiny GPT's
# configs, as a yardstick for lesson 16. llm.c is never a dependency: this script builds it
# from a checkout the user gives, in a folder of its own, and nothing of it is committed here.
#
#   bash bench/llmc_yardstick.sh prepare LLMC_DIR default|larger|gpt2_small STEPS WORKDIR
#   bash bench/llmc_yardstick.sh run WORKDIR [THREADS]
#
# prepare copies train_gpt2.c from LLMC_DIR (git clone https://github.com/karpathy/llm.c) into
# WORKDIR and changes five lines of its main(): the batch size B and length T of the config,
# STEPS training steps, and no validation loss and no sampling between them (train_gpt2.c
# computes both every 10 and 20 steps; lesson 16 and the PyTorch twin time neither). It builds it
# as llm.c's Makefile does on Linux (gcc -Ofast -march=native -fopenmp), and writes what it
# reads: a checkpoint of the config's shape (llm.c's format, version 3: a header of 256 ints,
# then every parameter as float32; 0.02 * randn, with the vocabulary unpadded, Vp = V = 27, the
# character vocabulary of lesson 16's corpus) and token files of random ids below 27 (the
# arithmetic does not depend on which tokens they are).
#
# run trains with OMP_NUM_THREADS=THREADS (default 2) and prints
#   tokens_per_s=... step_ms=...
# over every step, the first included, as lesson 16 and the twin count theirs.
#
# Configs, as compare_pytorch.sh names them (FLOPs per token in bench/README.md):
#   default:    C 64, 4 heads, 2 layers, T 32, B 16
#   larger:     C 128, 4 heads, 4 layers, T 64, B 32
#   gpt2_small: C 768, 12 heads, 12 layers, T 128, B 4
# Needs gcc with OpenMP and /usr/bin/python3 with numpy (for writing the checkpoint only).
set -euo pipefail

usage="usage: llmc_yardstick.sh prepare LLMC_DIR CONFIG STEPS WORKDIR | run WORKDIR [THREADS]"
die() { echo "llmc_yardstick.sh: $*" >&2; exit 2; }

prepare() {
  local llmc=${1:?$usage} config=${2:?$usage} steps=${3:?$usage} work=${4:?$usage}
  local C H L T B
  case "$config" in
    default) C=64 H=4 L=2 T=32 B=16 ;;
    larger) C=128 H=4 L=4 T=64 B=32 ;;
    gpt2_small) C=768 H=12 L=12 T=128 B=4 ;;
    *) die "config must be default, larger or gpt2_small, got '$config'" ;;
  esac
  [[ "$steps" =~ ^[1-9][0-9]*$ ]] || die "STEPS must be a positive whole number, got '$steps'"
  [ -f "$llmc/train_gpt2.c" ] && [ -d "$llmc/llmc" ] ||
    die "$llmc is not an llm.c checkout (no train_gpt2.c and llmc/ there)"
  mkdir -p "$work/dev/data/tinyshakespeare"
  # Each change must match exactly one line of the file, or the script stops: a changed
  # train_gpt2.c would otherwise be timed doing something else.
  local src="$work/train_gpt2.c"
  cp "$llmc/train_gpt2.c" "$src"
  # Replaces the one line holding `text` (a fixed string) with `line`, keeping its indent.
  patch_line() {
    local text=$1 line=$2
    [ "$(grep -cF -- "$text" "$src")" = 1 ] ||
      die "train_gpt2.c has not exactly one line holding '$text' (written for llm.c of 2024-25)"
    awk -v text="$text" -v line="$line" \
      'index($0, text) { match($0, /^ */); $0 = substr($0, 1, RLENGTH) line } { print }' \
      "$src" >"$src.new"
    mv "$src.new" "$src"
  }
  patch_line 'int B = 4;' "int B = $B;"
  patch_line 'int T = 64;' "int T = $T;"
  patch_line 'step <= 40;' "for (int step = 0; step < $steps; step++) {"
  patch_line 'if (step % 10 == 0) {' 'if (0) {  // no validation loss'
  patch_line 'if (step > 0 && step % 20 == 0) {' 'if (0) {  // no sampling'
  gcc -Ofast -march=native -fopenmp -DOMP -Wno-unused-result -I"$llmc" "$src" -lm \
    -o "$work/train_gpt2"
  /usr/bin/python3 - "$work" "$C" "$H" "$L" "$T" "$B" <<'EOF'
import sys
import numpy as np

work, C, H, L, T, B = sys.argv[1], *map(int, sys.argv[2:])
V = 27
header = np.zeros(256, dtype=np.int32)
header[:8] = [20240326, 3, T, V, L, H, C, V]  # magic, version, maxT, V, L, heads, C, Vp
# wte, wpe, ln1 w b, qkv w b, attproj w b, ln2 w b, fc w b, fcproj w b, lnf w b (train_gpt2.c)
count = V * C + T * C + L * (2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C + 4 * C * C + 4 * C
                             + 4 * C * C + C) + 2 * C
params = (0.02 * np.random.default_rng(0).standard_normal(count)).astype(np.float32)
with open(f"{work}/gpt2_124M.bin", "wb") as f:  # the name train_gpt2.c opens
    f.write(header.tobytes())
    f.write(params.tobytes())
for split in ("train", "val"):
    tokens = np.random.default_rng(1).integers(0, V, size=200_000).astype(np.uint16)
    header = np.zeros(256, dtype=np.int32)
    header[:3] = [20240520, 1, tokens.size]  # magic, version, number of tokens
    with open(f"{work}/dev/data/tinyshakespeare/tiny_shakespeare_{split}.bin", "wb") as f:
        f.write(header.tobytes())
        f.write(tokens.tobytes())
EOF
  echo "B=$B T=$T steps=$steps" >"$work/yardstick.conf"
}

run() {
  local work=${1:?$usage} threads=${2:-2}
  [ -x "$work/train_gpt2" ] && [ -f "$work/yardstick.conf" ] ||
    die "$work has no prepared llm.c (run: llmc_yardstick.sh prepare ...)"
  local B T steps log
  source "$work/yardstick.conf"  # B, T and steps, as prepare wrote them
  log=$(mktemp)
  (cd "$work" && OMP_NUM_THREADS=$threads ./train_gpt2 >"$log" 2>&1) ||
    { cat "$log" >&2; rm -f "$log"; die "train_gpt2 failed"; }
  awk -v n="$steps" -v tokens=$((B * T)) '/^step [0-9]+: train loss .* \(took / {
      ms += $(NF - 1); seen++ }
    END { if (seen != n) { printf "llmc_yardstick.sh: %d steps timed, expected %d\n", seen, n > "/dev/stderr"; exit 1 }
          printf "tokens_per_s=%.0f step_ms=%.2f\n", tokens * n / (ms / 1000), ms / n }' "$log" ||
    { cat "$log" >&2; rm -f "$log"; exit 1; }
  rm -f "$log"
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  *) die "$usage" ;;
esac
