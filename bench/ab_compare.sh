#!/usr/bin/env bash
# ab_compare.sh: the same benchmark from two builds of qkv, run turn about: is a change faster?
#
# A shared host's speed drifts: the same GEMM binary here ran at 200-300 GFLOP/s from one
# minute to the next (bench/README.md). Two figures measured minutes apart then say little
# about a change; the two builds run turn about, in one sitting, and the ratio of each round's
# pair say more. Each round runs build A then build B (B first in even rounds, so a drift
# favours neither), and the summary gives, for every benchmark, the median over the rounds of
# each build and the median of the rounds' B/A ratios.
#
#   bash bench/ab_compare.sh REV_A REV_B ROUNDS BENCH FILTER [COLUMN] [-- BENCH_ARGS...]
#
# REV_A, REV_B: git revisions (a commit, a branch, HEAD~1), each built in a worktree of its own
#     under $AB_DIR (default /tmp/qkv_ab), or "." for this checkout as it is, uncommitted
#     changes included, built in build/ab (build/ab-N with AB_CMAKE_ARGS, N a checksum of
#     them). The worktrees are kept for the next comparison (git worktree list shows them; git
#     worktree remove takes one away).
# BENCH: a benchmark program (bench_matmul, bench_attention, bench_autograd, bench_generate).
# FILTER: its --benchmark_filter.
# COLUMN: what to compare, a column of Google Benchmark's CSV output: real_time (the default),
#     cpu_time, or a counter the benchmark reports (GFLOPS, tokens_per_s, mfu, ...).
# BENCH_ARGS: more flags for every run, e.g. --benchmark_min_time=0.5 or
#     --benchmark_repetitions=3 (each repetition, and each aggregate, is then a row of its own).
# AB_CMAKE_ARGS: extra flags for configuring both builds, e.g. for the AVX2 build of
#     bench/README.md: AB_CMAKE_ARGS="-DQKV_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3".
#
# Example: is the working tree's GEMM faster than the last commit's at two shapes?
#   bash bench/ab_compare.sh HEAD . 5 bench_matmul 'BM_Matmul/M:(512|2048)/K:768/N:3072/' GFLOPS
set -euo pipefail
cd "$(dirname "$0")/.."
# (Empty arrays are passed on as ${a[@]+"${a[@]}"}: macOS's bash 3.2 calls "${a[@]}" of an
# empty array an unbound variable under set -u.)

usage="usage: ab_compare.sh REV_A REV_B ROUNDS BENCH FILTER [COLUMN] [-- BENCH_ARGS...]"
[[ $# -ge 5 ]] || { echo "$usage" >&2; exit 2; }
rev_a=$1 rev_b=$2 rounds=$3 bench=$4 filter=$5
shift 5
column=real_time
if [[ $# -gt 0 && $1 != "--" ]]; then column=$1; shift; fi
if [[ $# -gt 0 ]]; then
  [[ $1 == "--" ]] || { echo "$usage" >&2; exit 2; }
  shift
fi
bench_args=("$@")
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ab_compare.sh: ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2; }
ab_dir=${AB_DIR:-/tmp/qkv_ab}
read -r -a cmake_args <<< "${AB_CMAKE_ARGS:-}"
# A build folder per set of flags: CMake keeps a folder's flags in its cache, so a run without
# AB_CMAKE_ARGS in a folder configured with them would build with them still.
build_name=ab
[[ -z ${AB_CMAKE_ARGS:-} ]] || build_name=ab-$(printf '%s' "$AB_CMAKE_ARGS" | cksum | cut -d' ' -f1)

# Builds revision $1 (or this checkout for ".") and prints the path of its benchmark program.
build() {
  local rev=$1 src bin
  if [[ $rev == "." ]]; then
    src=$PWD
  else
    local sha
    sha=$(git rev-parse --verify --quiet "$rev^{commit}") ||
      { echo "ab_compare.sh: not a revision: '$rev'" >&2; return 2; }
    src=$ab_dir/${sha:0:12}
    if [[ ! -d $src ]]; then
      mkdir -p "$ab_dir"
      git worktree add --detach "$src" "$sha" >&2
    fi
  fi
  bin=$src/build/$build_name
  (cd "$src" && cmake --preset release -B "$bin" ${cmake_args[@]+"${cmake_args[@]}"} >&2 &&
     cmake --build "$bin" --target "$bench" >&2)
  [[ -x $bin/bench/$bench ]] || { echo "ab_compare.sh: no program $bin/bench/$bench" >&2; return 2; }
  echo "$bin/bench/$bench"
}

program_a=$(build "$rev_a")
program_b=$(build "$rev_b")

# One run: prints "name value" for every row of the CSV output, value from column $column.
run() {
  local csv
  csv=$("$1" --benchmark_filter="$filter" --benchmark_format=csv ${bench_args[@]+"${bench_args[@]}"} 2>/dev/null)
  grep -q '^name,' <<< "$csv" ||
    { echo "ab_compare.sh: $1 printed no results: '$filter' matched no benchmark, or it" \
        "failed (run it by hand with that filter to see its errors)" >&2; return 2; }
  awk -F, -v col="$column" '
    $1 == "name" { for (i = 1; i <= NF; ++i) { h = $i; gsub(/"/, "", h); if (h == col) c = i } next }
    c == 0 { next }
    { name = $1; gsub(/"/, "", name); print name, $c }
    END { if (c == 0) { print "ab_compare.sh: no column \"" col "\" in the output" > "/dev/stderr"; exit 2 } }
  ' <<< "$csv"
}

results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "A: $rev_a ($program_a)"
echo "B: $rev_b ($program_b)"
echo "column: $column; $rounds rounds, A first in odd rounds, B first in even ones"
for ((r = 1; r <= rounds; ++r)); do
  if ((r % 2 == 1)); then order=(A B); else order=(B A); fi
  for side in "${order[@]}"; do
    if [[ $side == A ]]; then program=$program_a; else program=$program_b; fi
    rows=$(run "$program") || exit 2
    while read -r name value; do echo "$r $side $name $value" >> "$results"; done <<< "$rows"
  done
  echo "round $r done"
done

awk '
  function median(list,    n, v, i, j, t) {
    n = split(list, v, " ")
    for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { value[$1, $2, $3] = $4; if (!($3 in seen)) { seen[$3] = 1; names[++count] = $3 } if ($1 > rounds) rounds = $1 }
  END {
    printf "\n%-56s %12s %12s %10s  %s\n", "benchmark", "A median", "B median", "B/A", "(every round'"'"'s B/A)"
    for (k = 1; k <= count; ++k) {
      name = names[k]; a = b = ratios = ""
      for (r = 1; r <= rounds; ++r) {
        if (!((r, "A", name) in value) || !((r, "B", name) in value)) continue
        va = value[r, "A", name]; vb = value[r, "B", name]
        a = a " " va; b = b " " vb
        ratios = ratios sprintf(" %.3f", va != 0 ? vb / va : 0)
      }
      printf "%-56s %12.4g %12.4g %10.3f  (%s)\n", name, median(a), median(b), median(ratios), substr(ratios, 2)
    }
  }' "$results"
