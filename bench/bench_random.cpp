// bench_random: drawing random numbers, PyTorch's recipes bit for bit (tensor/random.cpp):
// randn, whose blocks of 16 go through Box-Muller with avx_mathfun's log, sin and cos one lane
// at a time in the source and eight at a time in the compiled loop, and rand. What a model's
// initialisation waits for: GPT-2 small draws 124 million normals. Results in bench/README.md.
//
//   ./build/release/bench/bench_random --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "tensor/all.h"

namespace {
using namespace qkv;

// Draws a tensor of n = state.range(0) elements per iteration; per_element is the time of one
// draw.
template <class Draw>
void time_draws(benchmark::State& state, Draw draw) {
  Generator g(0);
  for (auto _ : state) benchmark::DoNotOptimize(draw(Shape{state.range(0)}, g).data_ptr());
  state.counters["per_element"] = benchmark::Counter(
      static_cast<double>(state.range(0)),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert,
      benchmark::Counter::kIs1000);
}

// BM_Randn/n: randn({n}), standard normals.
void BM_Randn(benchmark::State& state) {
  time_draws(state, [](const Shape& s, Generator& g) { return randn(s, &g); });
}
BENCHMARK(BM_Randn)->Arg(1 << 10)->Arg(1 << 24)->UseRealTime();

// BM_Rand/n: rand({n}), uniform in [0, 1): one draw of the Mersenne Twister per element.
void BM_Rand(benchmark::State& state) {
  time_draws(state, [](const Shape& s, Generator& g) { return rand(s, &g); });
}
BENCHMARK(BM_Rand)->Arg(1 << 10)->Arg(1 << 24)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
