#!/usr/bin/env bash
# record.sh: runs one benchmark program and keeps its figures as data, in bench/results/: one
# JSON file per host, date and program, Google Benchmark's own output (its caches, every
# figure) with the CPU's model name, the commit and the command added to its context.
# bench/results.sh makes bench/README.md's targets table from these files.
#
#   bash bench/record.sh BENCH [BENCH_ARGS...]
#   e.g. QKV_GPT2_VOCAB=/tmp/gpt2_vocab bash bench/record.sh bench_loaders
#
# The file is bench/results/<cpu>-<date>-<BENCH>.json, <cpu> the CPU's model name in lower case
# with runs of other characters as '-'; a second run on the same day replaces it.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:?usage: record.sh BENCH [BENCH_ARGS...]}
shift
program=build/release/bench/$bench
[ -x "$program" ] || { echo "record.sh: error: $program is not built (cmake --build --preset release)" >&2; exit 1; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu" ] || cpu=$(uname -m)
slug=$(echo "$cpu" | tr '[:upper:]' '[:lower:]' | sed -e 's/([^)]*)//g' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- tensor autograd nn attention bench || commit="$commit+changes"
mkdir -p bench/results
out=bench/results/$slug-$(date +%F)-$bench.json
"$program" --benchmark_out="$out.tmp" --benchmark_out_format=json "$@"
# The CPU, the commit and the command go first into the JSON's "context" object (quotes and
# backslashes escaped for JSON). bench/results.sh reads them there.
# escape TEXT: for a JSON string (\ and "), then for sed's replacement below (\, / and &).
escape() { printf '%s' "$1" | sed -e 's/[\\"]/\\&/g' -e 's/[\\/&]/\\&/g'; }
command=$(escape "$bench $*")
cpu_json=$(escape "$cpu")
sed "0,/\"context\": {/s//\"context\": {\n    \"cpu\": \"$cpu_json\",\n    \"commit\": \"$commit\",\n    \"command\": \"$command\",/" \
  "$out.tmp" > "$out"
rm -f "$out.tmp"
echo "wrote $out"
