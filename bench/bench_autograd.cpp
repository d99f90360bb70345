// bench_autograd: what the framework costs beside the math, per op, on tiny tensors where the
// math itself is almost free. Results are in bench/README.md.
//
//   ./build/release/bench/bench_autograd --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "autograd/all.h"

namespace {
using namespace qkv;

constexpr int kChain = 100;  // ops per iteration: y = y * w, 100 times

// ns per op: the counter is seconds per (op x 1e9), inverted.
void per_op(benchmark::State& state) {
  state.counters["ns_per_op"] = benchmark::Counter(
      kChain * 1e-9, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The kernel alone: raw::mul, no history.
void BM_RawMul(benchmark::State& state) {
  const Tensor w = full({state.range(0)}, 1.0);
  for (auto _ : state) {
    Tensor y = w;
    for (int i = 0; i < kChain; ++i) y = raw::mul(y, w);
    benchmark::DoNotOptimize(y.impl_ptr().get());
  }
  per_op(state);
}
// The differentiable op on tensors that do not require grad: the check that skips recording.
void BM_MulNoHistory(benchmark::State& state) {
  const Tensor w = full({state.range(0)}, 1.0);
  for (auto _ : state) {
    Tensor y = w;
    for (int i = 0; i < kChain; ++i) y = mul(y, w);
    benchmark::DoNotOptimize(y.impl_ptr().get());
  }
  per_op(state);
}
// Recording the graph (forward only), then dropping it.
void BM_MulRecord(benchmark::State& state) {
  const Tensor w = requires_grad_(full({state.range(0)}, 1.0));
  for (auto _ : state) {
    Tensor y = w;
    for (int i = 0; i < kChain; ++i) y = mul(y, w);
    benchmark::DoNotOptimize(y.impl_ptr().get());
  }
  per_op(state);
}
// Recording and running backward through it.
void BM_MulRecordBackward(benchmark::State& state) {
  const Tensor w = requires_grad_(full({state.range(0)}, 1.0));
  for (auto _ : state) {
    Tensor y = w;
    for (int i = 0; i < kChain; ++i) y = mul(y, w);
    backward(sum(y));
    zero_grad(w);
  }
  per_op(state);
}
BENCHMARK(BM_RawMul)->Arg(4)->Arg(1024);
BENCHMARK(BM_MulNoHistory)->Arg(4)->Arg(1024);
BENCHMARK(BM_MulRecord)->Arg(4)->Arg(1024);
BENCHMARK(BM_MulRecordBackward)->Arg(4)->Arg(1024);

}  // namespace

BENCHMARK_MAIN();
