#!/usr/bin/env bash
# results.sh: the targets table of bench/README.md, made from the figures kept in bench/results/.
#
# bench/record.sh keeps each run of a benchmark program as Google Benchmark's JSON, with the CPU,
# the commit and the command in its "context": bench/results/<cpu>-<date>-<program>.json. This
# script reads every such file and writes one row per CPU and date with the figure of each
# target found there (the median where a benchmark was repeated):
#   GEMM       share_of_peak of BM_Matmul at 1024^3, 2048^3 and the models' shapes (M = 512, 2048):
#              the lowest and the highest (target: at least 85%)
#   tiny GPT   mfu of BM_GPTTrainStep/real_time, the larger config (target: 70% AVX2, 76% AVX-512)
#   GPT-2      mfu of BM_GPTTrainStep/gpt2_small_shape (target: 75%)
#   decode     share_of_bound of BM_GPT2Generate: tokens/s against copy bandwidth / weight bytes
#              (target: 60%)
# A figure the host has no run of is "-".
#
#   bash bench/results.sh          prints the table
#   bash bench/results.sh update   writes it into bench/README.md, between its two markers
#   bash bench/results.sh check    fails if bench/README.md's table is not the one printed
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-print}

# One line per figure of every file: "<cpu>|<date>|<commit>|<benchmark name>|<counter>|<value>",
# read from the JSON as Google Benchmark writes it (one key per line). Aggregates other than the
# median are skipped; repetitions are kept, to take their median below.
figures() {
  local f
  for f in bench/results/*.json; do
    [ -e "$f" ] || continue
    awk -v file="$f" '
      function value(line) { sub(/^[^:]*: */, "", line); sub(/,$/, "", line); gsub(/"/, "", line); return line }
      /^    "cpu": /    { cpu = value($0) }
      /^    "commit": / { commit = value($0) }
      /^    "date": /   { date = substr(value($0), 1, 10) }
      /^    {$/ { name = ""; aggregate = ""; n = 0 }
      /^      "name": /           { name = value($0) }
      /^      "aggregate_name": / { aggregate = value($0) }
      /^      "(share_of_peak|mfu|share_of_bound)": / {
        key = $1; gsub(/[":]/, "", key); keys[++n] = key; vals[n] = value($0) }
      /^    }/ {
        if (aggregate == "" || aggregate == "median")
          for (i = 1; i <= n; ++i)
            print (cpu == "" ? file : cpu) "|" date "|" commit "|" name "|" keys[i] "|" vals[i]
      }' "$f"
  done
}

table() {
  echo "| host (CPU) | date | commit | GEMM share of peak | larger tiny GPT MFU | GPT-2 small's shape MFU | decoding, share of the memory bound |"
  echo "|---|---|---|---|---|---|---|"
  figures | sort | awk -F'|' '
    function pct(x) { return sprintf("%.0f%%", 100 * x) }
    function median(list,    a, n, i, j, t) {
      n = split(substr(list, 2), a, " ")
      for (i = 2; i <= n; ++i) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; --j) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    {
      host = $1 "|" $2
      if (!(host in seen)) { seen[host] = 1; hosts[++h] = host }
      commit[host] = $3
      if ($5 == "share_of_peak" && $4 ~ /^BM_Matmul\/M:(1024\/K:1024\/N:1024|2048\/K:2048\/N:2048|512\/|2048\/K:(128|512|768|3072)\/)/) gemm[host, $4] = gemm[host, $4] " " $6
      if ($5 == "mfu" && $4 ~ /^BM_GPTTrainStep\/real_time/) tiny[host] = tiny[host] " " $6
      if ($5 == "mfu" && $4 ~ /^BM_GPTTrainStep\/gpt2_small_shape/) gpt2[host] = gpt2[host] " " $6
      if ($5 == "share_of_bound" && $4 ~ /^BM_GPT2Generate/) decode[host] = decode[host] " " $6
    }
    END {
      for (k in gemm) { split(k, p, SUBSEP); m = median(gemm[k])
        if (!(p[1] in lo) || m < lo[p[1]]) lo[p[1]] = m
        if (!(p[1] in hi) || m > hi[p[1]]) hi[p[1]] = m }
      for (i = 1; i <= h; ++i) {
        host = hosts[i]; split(host, p, "|")
        g = host in lo ? pct(lo[host]) "-" pct(hi[host]) : "-"
        printf "| %s | %s | %s | %s | %s | %s | %s |\n", p[1], p[2], commit[host], g,
          tiny[host] == "" ? "-" : pct(median(tiny[host])), gpt2[host] == "" ? "-" : pct(median(gpt2[host])),
          decode[host] == "" ? "-" : pct(median(decode[host]))
      }
    }'
}

begin='<!-- targets table: made by bash bench/results.sh update; do not edit by hand -->'
end='<!-- end of targets table -->'
readme=bench/README.md
case $mode in
  print) table ;;
  update|check)
    grep -qxF "$begin" "$readme" && grep -qxF "$end" "$readme" ||
      { echo "results.sh: error: $readme lacks the table's markers" >&2; exit 1; }
    new=$(mktemp)
    awk -v begin="$begin" -v end="$end" -v table="$(table)" '
      $0 == begin { print; print table; skip = 1; next }
      $0 == end { skip = 0 }
      !skip { print }' "$readme" > "$new"
    if [ "$mode" = update ]; then mv "$new" "$readme"; echo "wrote the table into $readme"
    elif cmp -s "$new" "$readme"; then rm -f "$new"
    else diff "$readme" "$new" >&2 || true; rm -f "$new"
      echo "results.sh: error: $readme's targets table is not made from bench/results/ (bash bench/results.sh update)" >&2
      exit 1
    fi ;;
  *) echo "usage: results.sh [print|update|check]" >&2; exit 2 ;;
esac
