// bench_attention: every attention module, forward and forward + backward, at B = 8,
// C = 128, H = 4 and T in {64, 256, 1024}, in tokens per second (B * T per iteration);
// the core's standard and flash paths at T in {256, 1024, 4096} (one sequence, 4 causal heads
// of 32), with the peak bytes each holds; GPT generation with and without the KV cache; and
// the frontier variants (BM_Frontier_*: MLA, QK-norm, soft-capping, sinks, gated output,
// differential, document masks, linear attention) at B = 8, T = 256; and one training step of
// the tiny GPT (BM_GPTTrainStep: the larger config, C 128, 4 heads, 4 layers, B 32, T 64),
// with its forward, backward and AdamW times and its MFU as counters, the same with fused paths
// off (BM_GPTTrainStep/composed), and at GPT-2 small's shape (BM_GPTTrainStep/gpt2_small_shape:
// C 768, 12 heads, 12 layers, T 128, B 4, 27 characters) and of GPT-2 small itself
// (BM_GPTTrainStep/gpt2_small: the same with GPT-2's 50257 tokens, tied head and tanh GELU),
// the tiny GPT's attention kernels alone
// (BM_FusedAttention/{causal,full}: B 32, T 64, 4 heads of 32, forward + backward), and GELU's
// forward and the causal softmax at that config's shapes with and without the fast
// exponentials (BM_ExpUsers).
// Results are in bench/README.md.
//
//   ./build/release/bench/bench_attention --benchmark_repetitions=3
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>

#include "attention/all.h"
#include "tensor/fma_peak.h"
#include "tensor/fused_attention.h"

namespace {
using namespace qkv;
using namespace qkv::attention;

constexpr int64_t B = 8, C = 128, H = 4;

// A module as "input -> output", plus its parameters for zero_grad.
struct Subject {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;
};

Subject make(const std::string& which, int64_t T) {
  Generator g(0);
  if (which == "SimplifiedSelfAttention") {
    auto m = std::make_shared<SimplifiedSelfAttention>();
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "SelfAttention") {
    auto m = std::make_shared<SelfAttention>(C, C, C, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "MultiHeadAttentionWrapper") {
    auto m = std::make_shared<MultiHeadAttentionWrapper>(C, C / H, C / H, H, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "MultiHeadAttention") {
    auto m = std::make_shared<MultiHeadAttention>(C, H, MultiHeadOptions{}, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "MultiHeadAttentionCausal") {
    auto m = std::make_shared<MultiHeadAttention>(C, H, MultiHeadOptions{.causal = true}, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "CrossAttention") {  // x attends to itself through the cross path
    auto m = std::make_shared<CrossAttention>(C, C, C, &g);
    return {m, [m](const Tensor& x) { return m->forward(x, x); }};
  }
  if (which == "CausalAttentionNegInf") {
    auto m = std::make_shared<CausalAttention>(C, C, C, CausalMasking::negative_infinity, 0.0, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "CausalAttentionMultiply") {
    auto m = std::make_shared<CausalAttention>(C, C, C, CausalMasking::multiply_and_renormalise,
                                               0.0, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  // The frontier variants (B = 8, T = 256 only).
  if (which == "MLA") {
    auto m = std::make_shared<MultiHeadLatentAttention>(C, H, 32, 16,
                                                        LatentAttentionOptions{.causal = true}, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "Differential") {
    auto m = std::make_shared<DifferentialAttention>(
        C, H, DifferentialAttentionOptions{.layer = 1, .causal = true}, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which.rfind("Linear", 0) == 0) {  // LinearParallel, LinearRecurrent, LinearGated
    auto m = std::make_shared<LinearAttention>(
        C, H, LinearAttentionOptions{.causal = true, .gated = which == "LinearGated"}, &g);
    if (which == "LinearRecurrent") m->form = LinearForm::recurrent;
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "MHA_DocumentMask") {  // four packed documents of T / 4 tokens
    std::vector<int64_t> ids;
    for (int64_t t = 0; t < T; ++t) ids.push_back(t * 4 / T);
    const Tensor mask = document_mask(from_vector(ids, {T}));
    auto m = std::make_shared<MultiHeadAttention>(C, H, MultiHeadOptions{}, &g);
    return {m, [m, mask](const Tensor& x) { return m->forward(x, mask); }};
  }
  // The modern variants of MultiHeadAttention, all causal.
  const std::map<std::string, MultiHeadOptions> variants = {
      {"MHA_GQA2", {.num_kv_heads = 2, .causal = true}},
      {"MHA_MQA", {.num_kv_heads = 1, .causal = true}},
      {"MHA_Window64", {.causal = true, .window = 64}},
      {"MHA_RoPE", {.causal = true, .rope = true}},
      {"MHA_ALiBi", {.causal = true, .alibi = true}},
      {"MHA_Flash", {.causal = true, .flash = true}},
      {"MHA_QKNorm", {.causal = true, .frontier = {.qk_norm = true}}},
      {"MHA_Softcap", {.causal = true, .frontier = {.softcap = 30.0}}},
      {"MHA_Sinks", {.causal = true, .frontier = {.sinks = true}}},
      {"MHA_Gated", {.causal = true, .frontier = {.gate = true}}},
  };
  if (const auto it = variants.find(which); it != variants.end()) {
    auto m = std::make_shared<MultiHeadAttention>(C, H, it->second, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  auto m = std::make_shared<Head>(C, C / H, 0.0, &g);  // "Head"
  return {m, [m](const Tensor& x) { return m->forward(x); }};
}

void run(benchmark::State& state, const std::string& which, bool backward_too) {
  const int64_t T = state.range(0);
  Subject s = make(which, T);
  Generator g(1);
  const Tensor x = randn({B, T, C}, &g);
  for (auto _ : state) {
    if (backward_too) {
      s.module->zero_grad();
      const Tensor xg = requires_grad_(raw::clone(x));
      backward(sum(s.forward(xg)));
      benchmark::DoNotOptimize(grad(xg).impl_ptr().get());
    } else {
      NoGradGuard no_grad;  // inference: no graph is recorded
      benchmark::DoNotOptimize(s.forward(x).impl_ptr().get());
    }
  }
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
}

// The core alone, standard vs flash: q, k, v of (1, 4, T, 32), causal. Besides the time, the
// peak bytes held during one call (inputs excluded), from the allocator's counters.
void run_core(benchmark::State& state, bool flash, bool backward_too) {
  const int64_t T = state.range(0), heads = 4, D = 32;
  Generator g(2);
  const Tensor q = randn({1, heads, T, D}, &g), k = randn({1, heads, T, D}, &g),
               v = randn({1, heads, T, D}, &g);
  AttentionOptions o{.causal = true, .flash = flash};
  size_t peak = 0;
  for (auto _ : state) {
    const size_t base = memory_stats().allocated;
    reset_peak_memory();
    if (backward_too) {
      const Tensor ql = requires_grad_(raw::clone(q)), kl = requires_grad_(raw::clone(k)),
                   vl = requires_grad_(raw::clone(v));
      backward(sum(scaled_dot_product_attention(ql, kl, vl, o).output));
      benchmark::DoNotOptimize(grad(ql).impl_ptr().get());
    } else {
      NoGradGuard no_grad;
      benchmark::DoNotOptimize(scaled_dot_product_attention(q, k, v, o).output.impl_ptr().get());
    }
    peak = std::max(peak, memory_stats().peak - base);
  }
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(T), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_MiB"] = static_cast<double>(peak) / (1 << 20);
}

// Generating 255 tokens after one with a GPT of block 256 (C 128, 4 heads, 4 layers), with
// and without the KV cache: the same tokens, different work.
void run_generate(benchmark::State& state, bool use_cache) {
  manual_seed(0);
  GPTConfig c{.vocab_size = 65, .n_embd = 128, .n_layer = 4, .block = 256};
  GPT m(c);
  SampleOptions so{.use_cache = use_cache};
  for (auto _ : state) {
    Generator g(1);
    benchmark::DoNotOptimize(m.generate({0}, c.block - 1, so, g).data());
  }
  state.counters["tokens_per_s"] = benchmark::Counter(
      static_cast<double>(c.block - 1), benchmark::Counter::kIsIterationInvariantRate);
}

// Model FLOPs per token of one training step (forward and backward): 6 per weight of the
// matrices (12 L C^2 in the blocks, V C in the head) and 12 L T C for attention's q k^T and
// (weights) v, forward and backward; the measure of MFU (model FLOPs utilisation).
double train_flops_per_token(const GPTConfig& c) {
  const double L = static_cast<double>(c.n_layer), C = static_cast<double>(c.n_embd);
  return 6 * (12 * L * C * C + static_cast<double>(c.vocab_size) * C) +
         12 * L * static_cast<double>(c.block) * C;
}

// The FMA peak of every thread of the pool, GFLOP/s (tensor/fma_peak.h): probed again (3 runs)
// after each benchmark that asks, and the highest reading of the run so far returned
// (highest_fma_peak_gflops). One probe per run had the MFU of GPT-2 small's shape at 110% when
// it ran while a neighbour held a core (bench/README.md).
double peak_gflops() {
  return highest_fma_peak_gflops(num_threads(), int64_t{1} << 23, 3);
}

// One training step of lesson 16's model: forward + cross-entropy, backward, AdamW. Random
// tokens: the arithmetic does not depend on what they are. The larger config (C 128, 4 heads,
// 4 layers, T 64, B 32) and GPT-2 small's shape (C 768, 12 heads, 12 layers, T 128, B 4) with a
// character vocabulary of 27, as the PyTorch twin trains them (bench/compare_pytorch.sh); and
// GPT-2 small itself at B 4, T 128: its 50257 tokens, the head tied to the token table, the
// tanh GELU (attention/gpt2.h). With `fused` off (BM_GPTTrainStep/composed) the attention runs
// its composed ops (tensor/fused.h). The counter mfu is the model FLOPs done per second over
// the FMA peak, the highest read in the same run (peak_gflops).
enum class StepModel { larger, gpt2_small_shape, gpt2_small };
void run_train_step(benchmark::State& state, bool fused, StepModel model) {
  const FusedGuard path(fused);
  manual_seed(0);
  const GPTConfig c =
      model == StepModel::larger
          ? GPTConfig{.vocab_size = 27, .n_embd = 128, .n_head = 4, .n_layer = 4, .block = 64}
      : model == StepModel::gpt2_small_shape
          ? GPTConfig{.vocab_size = 27, .n_embd = 768, .n_head = 12, .n_layer = 12, .block = 128}
          : GPTConfig{.vocab_size = 50257,
                      .n_embd = 768,
                      .n_head = 12,
                      .n_layer = 12,
                      .block = 128,
                      .gelu = GeluApproximation::tanh,
                      .tie_head = true};
  const int64_t B = model == StepModel::larger ? 32 : 4, T = c.block;
  GPT m(c);
  // GPT-2 small learns at 1e-6 here. Its head is the token table, drawn from N(0, 1) as
  // torch.nn.Embedding draws it, so its 50257 logits start hundreds of nats apart (the lowest
  // log-probability -664). After one AdamW step at 1e-3, 4.5M of the 25.7M softmax values over
  // the B T = 512 rows are subnormal floats once divided by 512, and every multiply-add that
  // meets one in the backward's GEMMs runs many times slower: the step took 2.4-3.9 times as
  // long, and did not with subnormals flushed to zero (bench/README.md). At 1e-6 there were none
  // in the first four steps, and the timed steps cost what a first step does.
  nn::AdamW opt(m.parameters(), model == StepModel::gpt2_small ? 1e-6 : 1e-3);
  Generator g(1);
  auto tokens = [&] {
    return raw::to(raw::mul(rand({B, T}, &g), static_cast<float>(c.vocab_size) - 0.01f),
                   Dtype::int64);
  };
  const Tensor x = tokens(), y = raw::view(tokens(), {B * T});
  {  // one step first, untimed: AdamW's state and the gradients are allocated on the first
    opt.zero_grad();
    backward(cross_entropy(view(m.forward(x), {B * T, c.vocab_size}), y));
    opt.step();
  }
  using clock = std::chrono::steady_clock;
  double fwd = 0, bwd = 0, step = 0;
  for (auto _ : state) {
    const auto t0 = clock::now();
    const Tensor loss = cross_entropy(view(m.forward(x), {B * T, c.vocab_size}), y);
    const auto t1 = clock::now();
    opt.zero_grad();
    backward(loss);
    const auto t2 = clock::now();
    opt.step();
    const auto t3 = clock::now();
    fwd += std::chrono::duration<double, std::milli>(t1 - t0).count();
    bwd += std::chrono::duration<double, std::milli>(t2 - t1).count();
    step += std::chrono::duration<double, std::milli>(t3 - t2).count();
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["fwd_ms"] = fwd / n;
  state.counters["bwd_ms"] = bwd / n;
  state.counters["adamw_ms"] = step / n;
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(B * T), benchmark::Counter::kIsIterationInvariantRate);
  const double tokens_per_ms = static_cast<double>(B * T) * n / (fwd + bwd + step);
  const double peak = peak_gflops();
  state.counters["mfu"] = train_flops_per_token(c) * tokens_per_ms * 1e3 / (peak * 1e9);
  state.counters["peak_GFLOPs"] = peak;
}

// The tiny GPT's attention kernels alone (tensor/fused_attention.h) at the larger config's
// shape, B 32, T 64, 4 heads of 32, with q, k and v the heads of one (B, T, 3, H, D) tensor as
// the model's split makes them: forward and backward, raw, no autograd.
void run_fused_attention(benchmark::State& state, bool causal) {
  Generator g(0);
  const int64_t Bt = 32, T = 64, Hh = 4, Dd = 32;
  const Tensor qkv = randn({Bt, T, 3, Hh, Dd}, &g);
  auto heads = [&](int64_t part) {  // (B, T, H, D) -> (B, H, T, D), a strided view
    return raw::transpose(raw::select(qkv, 2, part), 1, 2);
  };
  const Tensor q = heads(0), k = heads(1), v = heads(2);
  const Tensor dout = raw::transpose(randn({Bt, T, Hh, Dd}, &g), 1, 2);
  for (auto _ : state) {
    const raw::FusedAttentionOutput f = raw::fused_attention_forward(q, k, v, causal);
    const raw::FusedAttentionGrads d =
        raw::fused_attention_backward(q, k, v, f.weights, dout, causal);
    benchmark::DoNotOptimize(d.dv.data_ptr());
  }
}

// The step's two largest users of e^x, with the fast exponentials (detail::exp_into: AVX-512's
// and AVX2's intrinsics, on with the intrinsics switch, tensor/simd/intrinsics.h) and without, turn about in one process
// (--benchmark_enable_random_interleaving helps): GELU's forward with its slope over the larger
// config's MLP activations (2048 x 512, exact form), and the causal softmax over its attention
// scores (32 x 4 heads of 64 x 64).
void run_exp_user(benchmark::State& state, bool gelu, bool fast) {
  Generator g(0);
  const Tensor x = gelu ? randn({2048, 512}, &g) : randn({32 * 4, 64, 64}, &g);
  const IntrinsicsGuard use(fast);
  for (auto _ : state) {
    if (gelu) {
      const raw::GeluWithSlope r = raw::gelu_with_slope(x, GeluApproximation::none);
      benchmark::DoNotOptimize(r.slope.data_ptr());
    } else {
      const Tensor p = raw::causal_softmax(x, 1.0f, 5.656854f, 0);
      benchmark::DoNotOptimize(p.data_ptr());
    }
  }
  state.counters["floats_per_s"] = benchmark::Counter(
      static_cast<double>(x.numel()), benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (bool gelu : {true, false})
    for (bool fast : {true, false})
      benchmark::RegisterBenchmark(
          (std::string(gelu ? "BM_ExpUsers/gelu_with_slope/" : "BM_ExpUsers/causal_softmax/") +
           (fast ? "fast_exp" : "plain_exp"))
              .c_str(),
          [gelu, fast](benchmark::State& st) { run_exp_user(st, gelu, fast); })
          ->Unit(benchmark::kMicrosecond)
          ->UseRealTime();
  for (bool causal : {true, false})
    benchmark::RegisterBenchmark(
        causal ? "BM_FusedAttention/causal" : "BM_FusedAttention/full",
        [causal](benchmark::State& st) { run_fused_attention(st, causal); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (bool flash : {false, true})
    for (bool bwd : {false, true}) {
      const std::string name =
          std::string("BM_Core/") + (flash ? "flash" : "standard") + (bwd ? "/fwd_bwd" : "/fwd");
      benchmark::RegisterBenchmark(name.c_str(),
                                   [flash, bwd](benchmark::State& st) { run_core(st, flash, bwd); })
          ->Arg(256)
          ->Arg(1024)
          ->Arg(4096)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  for (const char* which :
       {"MLA", "MHA_QKNorm", "MHA_Softcap", "MHA_Sinks", "MHA_Gated", "Differential",
        "MHA_DocumentMask", "LinearParallel", "LinearRecurrent", "LinearGated"})
    for (bool bwd : {false, true}) {
      const std::string name = std::string("BM_Frontier_") + which + (bwd ? "/fwd_bwd" : "/fwd");
      benchmark::RegisterBenchmark(name.c_str(),
                                   [which, bwd](benchmark::State& st) { run(st, which, bwd); })
          ->Arg(256)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  for (bool fused : {true, false})
    benchmark::RegisterBenchmark(
        fused ? "BM_GPTTrainStep" : "BM_GPTTrainStep/composed",
        [fused](benchmark::State& st) { run_train_step(st, fused, StepModel::larger); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (StepModel model : {StepModel::gpt2_small_shape, StepModel::gpt2_small})
    benchmark::RegisterBenchmark(model == StepModel::gpt2_small_shape
                                     ? "BM_GPTTrainStep/gpt2_small_shape"
                                     : "BM_GPTTrainStep/gpt2_small",
                                 [model](benchmark::State& st) { run_train_step(st, true, model); })
        ->Unit(benchmark::kMillisecond)
        ->MinTime(4)
        ->UseRealTime();
  for (bool cache : {false, true})
    benchmark::RegisterBenchmark(cache ? "BM_GPTGenerate/kv_cache" : "BM_GPTGenerate/recompute",
                                 [cache](benchmark::State& st) { run_generate(st, cache); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (const char* which : {"SimplifiedSelfAttention", "SelfAttention", "MultiHeadAttentionWrapper",
                            "MultiHeadAttention", "MultiHeadAttentionCausal", "CrossAttention",
                            "CausalAttentionNegInf", "CausalAttentionMultiply", "Head", "MHA_GQA2",
                            "MHA_MQA", "MHA_Window64", "MHA_RoPE", "MHA_ALiBi", "MHA_Flash"}) {
    for (bool bwd : {false, true}) {
      const std::string name = std::string("BM_") + which + (bwd ? "/fwd_bwd" : "/fwd");
      benchmark::RegisterBenchmark(name.c_str(),
                                   [which, bwd](benchmark::State& st) { run(st, which, bwd); })
          ->Arg(64)
          ->Arg(256)
          ->Arg(1024)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
