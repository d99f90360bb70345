// bench_loaders: reading files and text at sizes a hostile or merely large input can have,
// where a loop that compares every pair would take minutes: each of these is O(n log n) or
// better, so its time per item grows far less than n does (a pairwise loop's grows as n).
//   BM_ParseJsonObject/N      the JSON reader on one object of N keys (a vocabulary's shape), N
//                             up to 200,000 (duplicate keys found by a hash set)
//   BM_ParseSafetensors/N     a safetensors file of N one-float tensors, N up to 100,000 (its
//                             header parsed, the tensors' byte ranges checked by sorting)
//   BM_EncodeOnePiece/N       BPE encoding of N bytes of letters, one piece for the
//                             pre-tokenizer, up to 1 MB (merges from a priority queue), with a
//                             vocabulary of 300 merges learned from a generated text
// And on GPT-2's real vocabulary, which is not in the repository: fetch it once with
// tools/fetch_gpt2_vocab.sh and name its folder in QKV_GPT2_VOCAB (without it these say so and
// skip):
//   BM_LoadGpt2Vocabulary     reading encoder.json (50,257 tokens) and vocab.bpe (50,000 merges)
//                             into a BpeTokenizer: what lesson 25 does before it prints a token.
//                             Target: at most 0.3 s on 2 cores.
//   BM_EncodeArticlePrompt    the article's prompt, encoded
//
//   bash tools/fetch_gpt2_vocab.sh /tmp/gpt2_vocab
//   QKV_GPT2_VOCAB=/tmp/gpt2_vocab ./build/release/bench/bench_loaders
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "attention/all.h"
#include "nn/json.h"
#include "nn/safetensors.h"

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

// {"t0": F32 (1,), "t1": ...}: N tensors of one float each, as safetensors bytes.
void BM_ParseSafetensors(benchmark::State& state) {
  const int64_t n = state.range(0);
  nn::NamedTensors tensors;
  for (int64_t i = 0; i < n; ++i) {
    std::string name = "t";
    name += std::to_string(i);
    tensors.emplace_back(name, zeros({1}));
  }
  const std::string bytes = nn::safetensors_bytes(tensors);
  for (auto _ : state) benchmark::DoNotOptimize(nn::parse_safetensors(bytes));
  state.counters["tensors_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ParseSafetensors)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// N letters with no space: one piece, whose merges the tokenizer applies in one go.
void BM_EncodeOnePiece(benchmark::State& state) {
  static const BpeTokenizer tok = [] {
    std::string text;
    const char* words[] = {"the ", "cat ", "sat ", "on ", "a ", "mat ", "and ", "then ", "ran "};
    for (int i = 0; i < 5000; ++i) text += words[(i * 7 + i / 3) % 9];
    return BpeTokenizer::train(text, 300);
  }();
  const int64_t n = state.range(0);
  std::string piece;
  for (int64_t i = 0; i < n; ++i) piece.push_back("thecatsonamdr"[(i * 5 + i / 7) % 13]);
  for (auto _ : state) benchmark::DoNotOptimize(tok.encode(piece));
  state.counters["bytes_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EncodeOnePiece)
    ->Arg(100'000)
    ->Arg(1'000'000)
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
