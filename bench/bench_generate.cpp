// bench_generate: decoding with a model of GPT-2 small's size (C 768, 12 heads, 12 layers, 1,024
// positions, 50,257 tokens, head tied to the token table: 124M parameters, random weights) at
// batch 1, against the memory bound, in one run:
//   BM_MemoryCopy            the yardstick: one buffer of 1 GiB copied to another on every
//                            thread of the pool, in bytes moved per second (read + written,
//                            as STREAM's Copy counts them)
//   BM_MemoryRead            1 GiB summed on every thread of the pool, bytes read per second
//   BM_GPT2Generate/kv_cache 256 greedy tokens after a 12-token prompt, with the KV cache;
//                            counters: tokens_per_s, bound_tokens_per_s (the copy bandwidth
//                            measured in this process over the weights a token reads),
//                            share_of_bound, and the same over the read bandwidth
//                            (read_bound_tokens_per_s, share_of_read_bound)
//   BM_OneRowProduct         one row times W^T, W of 201,028 rows of 768 floats (618 MB, more
//                            than the L3 of the hosts in bench/README.md): counter GB_per_s,
//                            W's bytes read per second, to set beside BM_MemoryRead
//   BM_GeluOneToken          GELU over one token's 3072 MLP activations
//   BM_GPT2NextToken/{kv_cache,recompute}/L   one next token at context L (64, 256, 1024):
//                            one cached step after L - 1 cached positions, against a forward
//                            pass over all L tokens (what nanoGPT's and llm.c's generate do)
// Results are in bench/README.md.
//
//   ./build/release/bench/bench_generate --benchmark_repetitions=3
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "attention/all.h"

namespace {
using namespace qkv;
using namespace qkv::attention;

const GPTConfig kGpt2Small = gpt2_config(
    {.vocab_size = 50257, .n_embd = 768, .n_head = 12, .n_layer = 12, .n_positions = 1024});

GPT& model() {
  static const std::unique_ptr<GPT> m = [] {
    manual_seed(0);
    auto g = std::make_unique<GPT>(kGpt2Small);
    g->eval();
    return g;
  }();
  return *m;
}

// Bytes of weights one decoding step reads: every parameter once (the token table as the tied
// head), except the position table, of which it reads one row.
double weight_bytes_per_token() {
  const GPT& m = model();
  return 4.0 * static_cast<double>(m.num_parameters() - m.pos->weight.numel() + kGpt2Small.n_embd);
}

// 1 GiB of floats, far more than any cache: what the two yardsticks below read.
const std::vector<float>& gibibyte() {
  static const std::vector<float> a(size_t{1} << 28, 1.0f);
  return a;
}

// The best of 5 rounds of part(p, n) run for every p on its own thread of the pool, each part
// handling floats [n p, n (p + 1)) of the gibibyte, as bytes per second, where a round moves
// bytes_per_float for each float handled. n is a multiple of `align` floats.
template <class Part>
double best_bandwidth(double bytes_per_float, size_t align, Part part) {
  const size_t parts = static_cast<size_t>(num_threads());
  const size_t n = gibibyte().size() / parts / align * align;
  double best = 0;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    parallel_for(static_cast<int64_t>(parts), [&](int64_t p) { part(static_cast<size_t>(p), n); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, bytes_per_float * static_cast<double>(n * parts) / s);
  }
  return best;
}

// Bytes moved per second (read + written) copying 1 GiB on every thread of the pool.
double copy_bandwidth() {
  const std::vector<float>& a = gibibyte();
  static std::vector<float> b(a.size(), 0.0f);
  const double bw = best_bandwidth(2.0 * sizeof(float), 1, [&](size_t p, size_t n) {
    std::memcpy(b.data() + n * p, a.data() + n * p, n * sizeof(float));
  });
  benchmark::DoNotOptimize(b.data());
  return bw;
}

// Bytes read per second summing 1 GiB on every thread of the pool: the rate at which a token's
// weights could at best stream in, since decoding reads them and writes almost nothing. On
// some hosts it is well below the copy bandwidth above, which counts the bytes written as well
// as those read (bench/README.md has both).
double read_bandwidth() {
  const std::vector<float>& a = gibibyte();
  constexpr size_t kLanes = 16;  // independent sums, so the loop runs at memory's pace
  std::vector<float> sums(static_cast<size_t>(num_threads()));
  const double bw = best_bandwidth(sizeof(float), kLanes, [&](size_t p, size_t n) {
    float lane[kLanes] = {};
    for (size_t i = n * p; i < n * (p + 1); i += kLanes)
      for (size_t l = 0; l < kLanes; ++l) lane[l] += a[i + l];
    for (float x : lane) sums[p] += x;
  });
  benchmark::DoNotOptimize(sums.data());
  return bw;
}

void BM_MemoryRead(benchmark::State& state) {
  double bw = 0;
  for (auto _ : state) bw = read_bandwidth();
  state.counters["GB_per_s"] = bw / 1e9;
}

void BM_MemoryCopy(benchmark::State& state) {
  double bw = 0;
  for (auto _ : state) bw = copy_bandwidth();
  state.counters["GB_per_s"] = bw / 1e9;
}

std::vector<int64_t> prompt(
    int64_t n) {  // token ids, any will do: the work does not depend on them
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back((1026 + 977 * i) % kGpt2Small.vocab_size);
  return ids;
}

void BM_GPT2Generate(benchmark::State& state) {
  GPT& m = model();
  const double bound = copy_bandwidth() / weight_bytes_per_token();
  const double read_bound = read_bandwidth() / weight_bytes_per_token();
  const int64_t n = 256;
  Generator unused(0);
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(m.generate(prompt(12), n, {.temperature = 0}, unused).data());
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    state.SetIterationTime(s);
    seconds += s;
  }
  const double tokens_per_s = static_cast<double>(n * state.iterations()) / seconds;
  state.counters["tokens_per_s"] = tokens_per_s;
  state.counters["bound_tokens_per_s"] = bound;
  state.counters["share_of_bound"] = tokens_per_s / bound;
  state.counters["read_bound_tokens_per_s"] = read_bound;
  state.counters["share_of_read_bound"] = tokens_per_s / read_bound;
  state.counters["weight_MB_per_token"] = weight_bytes_per_token() / 1e6;
}

// One next token at context L: with the cache, the step after L - 1 cached positions (the
// cache, with room for L as GPT::generate makes it, is filled outside the timing); without,
// a forward pass over all L tokens.
void BM_GPT2NextToken(benchmark::State& state, bool use_cache) {
  GPT& m = model();
  NoGradGuard no_grad;
  const int64_t L = state.range(0);
  const std::vector<int64_t> ids = prompt(L);
  for (auto _ : state) {
    std::vector<KVCache> caches(static_cast<size_t>(kGpt2Small.n_layer));
    // Room for every position, as generate makes; the first L - 1 tokens go into the cache,
    // untimed.
    for (KVCache& c : caches) c.capacity = L;
    if (use_cache)
      m.forward(from_vector(std::vector<int64_t>(ids.begin(), ids.end() - 1), {1, L - 1}), &caches);
    // The timed forward: the last token against the cache, or all L tokens from scratch.
    const Tensor input = use_cache ? from_vector(std::vector<int64_t>{ids.back()}, {1, 1})
                                   : from_vector(ids, {1, L});
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor logits = use_cache ? m.forward(input, &caches) : m.forward(input);
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    benchmark::DoNotOptimize(logits.data_ptr());
  }
}

// What decoding's products do, alone: x W^T for one row x, as each Linear layer and the head
// compute it for one token, with a W four times the head's (4 x 50257 rows of 768 floats, 618
// MB) so that it streams from memory as a token's 494.6 MB of weights do, not from the L3.
void BM_OneRowProduct(benchmark::State& state) {
  static const Tensor w = randn({4 * kGpt2Small.vocab_size, kGpt2Small.n_embd});
  const Tensor x = randn({1, kGpt2Small.n_embd});
  for (auto _ : state) benchmark::DoNotOptimize(raw::matmul(x, raw::transpose(w, 0, 1)).data_ptr());
  state.counters["GB_per_s"] = benchmark::Counter(4.0 * static_cast<double>(w.numel()) / 1e9,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}

// GELU over one token's MLP width (4 x 768 = 3072 floats), the largest elementwise op of a
// decoding step: GPT-2's tanh form, on vector_math.h's vectorised tanh, on the calling thread
// (two threads pay from 8192 floats: tensor/elementwise.cpp).
void BM_GeluOneToken(benchmark::State& state) {
  const Tensor x = randn({1, 1, 4 * kGpt2Small.n_embd});
  for (auto _ : state) benchmark::DoNotOptimize(raw::gelu(x, GeluApproximation::tanh).data_ptr());
}

}  // namespace

BENCHMARK(BM_MemoryCopy)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_MemoryRead)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_GPT2Generate)->Unit(benchmark::kMillisecond)->Iterations(1)->UseManualTime();
BENCHMARK(BM_OneRowProduct)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_GeluOneToken)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GPT2NextToken, kv_cache, true)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GPT2NextToken, recompute, false)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
