// bench_tokenizer: GPT-2's byte-level BPE tokenizer (attention/bpe_tokenizer.h) on GPT-2's real
// vocabulary, which is not in the repository: fetch it once with tools/fetch_gpt2_vocab.sh and
// name its folder in QKV_GPT2_VOCAB (without it, the benchmarks say so and skip).
//   BM_LoadGpt2Vocabulary   reading encoder.json (50,257 tokens) and vocab.bpe (50,000 merges)
//                           into a BpeTokenizer: what lesson 25 does before it prints a token.
//                           Target: at most 0.3 s on 2 cores.
//   BM_ParseJsonObject/N    the JSON reader on one object of N keys (the shape of a vocabulary),
//                           N up to 200,000: its time per key stays flat (no quadratic check).
//   BM_EncodeArticlePrompt  encoding the article's prompt once the tokenizer is loaded.
//
//   bash tools/fetch_gpt2_vocab.sh /tmp/gpt2_vocab
//   QKV_GPT2_VOCAB=/tmp/gpt2_vocab ./build/release/bench/bench_tokenizer
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "attention/all.h"
#include "nn/json.h"

namespace {
using namespace qkv;
using namespace qkv::attention;

const char* vocab_dir() { return std::getenv("QKV_GPT2_VOCAB"); }

void BM_LoadGpt2Vocabulary(benchmark::State& state) {
  if (vocab_dir() == nullptr) {
    state.SkipWithError("QKV_GPT2_VOCAB is not set: bash tools/fetch_gpt2_vocab.sh DIR first");
    return;
  }
  int64_t tokens = 0;
  for (auto _ : state) {
    const BpeTokenizer tok = BpeTokenizer::from_folder(vocab_dir());
    tokens = tok.vocab_size();
    benchmark::DoNotOptimize(tokens);
  }
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_LoadGpt2Vocabulary)->Unit(benchmark::kMillisecond)->UseRealTime();

// {"tok0": 0, "tok1": 1, ...}: N keys, as a vocabulary file holds them.
void BM_ParseJsonObject(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::string text = "{";
  for (int64_t i = 0; i < n; ++i)
    text += (i ? ", \"tok" : "\"tok") + std::to_string(i) + "\": " + std::to_string(i);
  text += "}";
  for (auto _ : state) benchmark::DoNotOptimize(nn::parse_json(text, "bench"));
  state.counters["keys_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ParseJsonObject)
    ->Arg(50'000)
    ->Arg(200'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_EncodeArticlePrompt(benchmark::State& state) {
  if (vocab_dir() == nullptr) {
    state.SkipWithError("QKV_GPT2_VOCAB is not set: bash tools/fetch_gpt2_vocab.sh DIR first");
    return;
  }
  const BpeTokenizer tok = BpeTokenizer::from_folder(vocab_dir());
  const std::string prompt = "It\u2019s very hot in summer. Swimming is";
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode(prompt));
}
BENCHMARK(BM_EncodeArticlePrompt)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
