// bench_attention: every attention module, forward and forward + backward, at B = 8,
// C = 128, H = 4 and T in {64, 256, 1024}, in tokens per second (B * T per iteration).
// Results are in bench/README.md.
//
//   ./build/release/bench/bench_attention --benchmark_repetitions=3
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <functional>
#include <memory>

#include "attention/all.h"

namespace {
using namespace qkv;
using namespace qkv::attention;

constexpr int64_t B = 8, C = 128, H = 4;

// A module as "input -> output", plus its parameters for zero_grad.
struct Subject {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;
};

Subject make(const std::string& which) {
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
    auto m = std::make_shared<MultiHeadAttention>(C, H, /*causal=*/false, 0.0, true, &g);
    return {m, [m](const Tensor& x) { return m->forward(x); }};
  }
  if (which == "MultiHeadAttentionCausal") {
    auto m = std::make_shared<MultiHeadAttention>(C, H, /*causal=*/true, 0.0, true, &g);
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
  auto m = std::make_shared<Head>(C, C / H, 0.0, &g);  // "Head"
  return {m, [m](const Tensor& x) { return m->forward(x); }};
}

void run(benchmark::State& state, const std::string& which, bool backward_too) {
  const int64_t T = state.range(0);
  Subject s = make(which);
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

void register_all() {
  for (const char* which : {"SimplifiedSelfAttention", "SelfAttention", "MultiHeadAttentionWrapper",
                            "MultiHeadAttention", "MultiHeadAttentionCausal", "CrossAttention",
                            "CausalAttentionNegInf", "CausalAttentionMultiply", "Head"}) {
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
