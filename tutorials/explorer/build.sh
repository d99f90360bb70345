#!/usr/bin/env bash
# build.sh: builds the browser explorer, build/wasm/tutorials/explorer/explorer.html, one file to
# open in any browser (no server, no network). Needs what the README's two commands need, plus
# Emscripten (Debian/Ubuntu: apt-get install emscripten; macOS: brew install emscripten; or
# emsdk). Run from anywhere: bash tutorials/explorer/build.sh
#
# Two builds: the native release build prints the numbers the page's self-check holds its own
# to (reference.json), then the wasm preset compiles qkv to WebAssembly and writes the page.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v emcc > /dev/null || {
  echo "build.sh: error: Emscripten's emcc is not on the PATH (apt-get install emscripten," \
       "brew install emscripten, or emsdk's emsdk_env.sh)" >&2
  exit 1
}
cmake --preset release > /dev/null
cmake --build --preset release --target explorer_reference_json
cmake --preset wasm > /dev/null
cmake --build --preset wasm --target explorer
echo "Open build/wasm/tutorials/explorer/explorer.html in a browser (file://$PWD/build/wasm/tutorials/explorer/explorer.html)."
