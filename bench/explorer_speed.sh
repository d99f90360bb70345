#!/usr/bin/env bash
# explorer_speed.sh: training steps per second of the browser explorer's tiny GPT (lesson 16's
# default model, tutorials/explorer/explorer.h) in headless Chromium, with and without
# WebAssembly SIMD, against the native release build of the same model on one thread, on this
# machine, turn about, ROUNDS times (default 5). Each figure is the median; each run times 100
# steps of one run (Trainer::time_steps) after one untimed step. Writes
# bench/results/<cpu>-<date>-explorer.json (CPU, commit, command, figures) and prints it.
#
#   bash bench/explorer_speed.sh [ROUNDS]
#
# Needs the release build (explorer_reference), the wasm preset's page
# (tutorials/explorer/build.sh), Emscripten for the page without SIMD (built here, in
# build/wasm-scalar), Node.js and Chromium. Target: the page with SIMD at least 25% of native.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
native=build/release/tutorials/explorer/explorer_reference
simd_page=build/wasm/tutorials/explorer/explorer.html
[ -x "$native" ] && [ -f "$simd_page" ] || {
  echo "explorer_speed.sh: error: build the release preset and the page first (bash tutorials/explorer/build.sh)" >&2
  exit 1
}
cmake --preset wasm -B build/wasm-scalar -DQKV_WASM_SIMD=OFF > /dev/null
cmake --build build/wasm-scalar --target explorer > /dev/null
scalar_page=build/wasm-scalar/tutorials/explorer/explorer.html
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# steps/s of one timing: {"steps": N, "seconds": S} -> N / S
rate() { node -e 'const t = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(t.steps / t.seconds)'; }
page_rate() {  # page_rate PAGE: the page's own timing, read from browser_test.js's speed.json
  node tutorials/explorer/browser_test.js "$1" "$scratch/shots" chromium > "$scratch/log" 2>&1 ||
    { cat "$scratch/log"; exit 1; }
  node -e 'const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(s.timed.steps / s.timed.seconds)' \
    "$scratch/shots/speed.json"
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for ((i = 0; i < rounds; ++i)); do
  QKV_NUM_THREADS=1 "$native" --time 100 | rate >> "$scratch/native"
  page_rate "$simd_page" >> "$scratch/simd"
  page_rate "$scalar_page" >> "$scratch/scalar"
done
native_rate=$(median < "$scratch/native")
simd_rate=$(median < "$scratch/simd")
scalar_rate=$(median < "$scratch/scalar")

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu" ] || cpu=$(uname -m)
slug=$(echo "$cpu" | tr '[:upper:]' '[:lower:]' | sed -e 's/([^)]*)//g' -e 's/[^a-z0-9]\{1,\}/-/g' -e 's/^-//' -e 's/-$//')
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- tensor autograd nn attention tutorials/explorer || commit="$commit+changes"
out=bench/results/$slug-$(date +%F)-explorer.json
mkdir -p bench/results
node -e '
const [cpu, commit, date, rounds, chromium, native, simd, scalar] = process.argv.slice(1);
const figure = (name, steps_per_s) => ({name, steps_per_second: +(+steps_per_s).toFixed(2),
                                        share_of_native: +(steps_per_s / native).toFixed(3)});
console.log(JSON.stringify({
  context: {cpu, commit, command: "bench/explorer_speed.sh " + rounds, date,
            what: "training steps per second of lesson 16'"'"'s default tiny GPT (one run, 100 steps), median of " + rounds + " rounds turn about",
            browser: chromium},
  benchmarks: [figure("native, 1 thread", native), figure("page, WebAssembly SIMD", simd),
               figure("page, WebAssembly without SIMD", scalar)]}, null, 2));
' "$cpu" "$commit" "$(date -Iseconds)" "$rounds" "$(chromium --version 2>/dev/null | head -n 1)" \
  "$native_rate" "$simd_rate" "$scalar_rate" > "$out"
cat "$out"
echo "wrote $out"
