// bench_matmul: the GEMM at the shapes that matter, the ladder steps side by side, 1 vs 2
// threads, the machine's FMA peak, and (when built with -DQKV_BENCH_OPENBLAS=ON) OpenBLAS at
// the same shapes in the same run, as a yardstick. Each product reports its GFLOP/s and its
// share of the FMA peak measured in the same run. Results are in bench/README.md.
//
//   ./build/release/bench/bench_matmul --benchmark_repetitions=5
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tensor/all.h"
#include "tensor/gemm/kernel.h"
#include "tensor/gemm/plan.h"

#ifdef QKV_BENCH_OPENBLAS
#include <cblas.h>
#endif

namespace {
using namespace qkv;

// The benchmarks' operands start on a cache line, as a Tensor's storage does
// (tensor/allocator.cpp). std::vector's own allocator (glibc's malloc) puts a large array 16
// bytes past a page boundary, and there every row of a tile of C, and every 64-byte load of
// AVX-512's tile from a micro-panel of B read in place (BM_MicroKernelInContext's, a product's
// under kParallelMinWork), split across two cache lines: on one core of an Intel Xeon (Granite
// Rapids) the tile alone, over the same panel in a process alternating the two places, ran at
// 201-202 GFLOP/s from there and at 234-236 from a cache line (bench/README.md, "Operands on a
// cache line").
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, size_t) { ::operator delete (p, std::align_val_t{64}); }
  friend bool operator==(const CacheLineAllocator&, const CacheLineAllocator&) { return true; }
};
using Floats = std::vector<float, CacheLineAllocator<float>>;
// A tensor's values as Floats.
Floats floats_of(const Tensor& t) {
  return Floats(t.data_ptr(), t.data_ptr() + t.numel());
}

struct Problem {
  int64_t M, K, N;
  Floats a, b, c;
  Problem(int64_t m, int64_t k, int64_t n) : M(m), K(k), N(n), a(m * k), b(k * n), c(m * n) {
    Generator g(0);
    Tensor ta = rand({m * k}, &g), tb = rand({k * n}, &g);
    std::copy(ta.data_ptr(), ta.data_ptr() + m * k, a.begin());
    std::copy(tb.data_ptr(), tb.data_ptr() + k * n, b.begin());
  }
  MatrixRef A() const { return {a.data(), K, 1}; }
  MatrixRef B() const { return {b.data(), N, 1}; }
  double flops() const { return 2.0 * static_cast<double>(M * K * N); }  // one product's
};

// Before timing, hold a result to the naive oracle once (on its first rows).
void hold_to_oracle(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, const float* c,
                    int64_t ldc) {
  const int64_t rows = std::min<int64_t>(M, 8);
  std::vector<float> ref(rows * N);
  gemm_naive(rows, N, K, A, B, ref.data(), N, false);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < N; ++j)
      if (std::fabs(ref[i * N + j] - c[i * ldc + j]) > 1e-3f * K) {
        std::fprintf(stderr, "bench_matmul: result differs from the oracle at (%ld, %ld)\n",
                     long(i), long(j));
        std::abort();
      }
}
void check_against_oracle(Problem& p, GemmFn fn) {
  fn(p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N, false);
  hold_to_oracle(p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N);
}

// The FMA peak of `threads` threads (tensor/fma_peak.h): probed once more, and the highest
// reading of the run so far returned (highest_fma_peak_gflops), so that a share of the peak is
// not inflated by one probe that ran while a neighbour held a core. main probes first, 5 times
// over, before any benchmark runs. A probe right after an OpenBLAS product reads low, as
// OpenBLAS's own threads still spin for a while and take cores from it (an AVX2 build,
// benchmarks interleaved at random: 190 GFLOP/s instead of 266); the highest reading passes it by.
double peak_gflops(int threads) {
  return highest_fma_peak_gflops(threads);
}

// Runs `product` once per iteration and reports its GFLOP/s and its share of the FMA peak of
// the threads it runs on, the highest read in the same run (peak_gflops, probed after the timing).
template <class Product>
void time_product(benchmark::State& state, const Problem& p, int threads, Product product) {
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    product();
    benchmark::DoNotOptimize(p.c.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gflops = p.flops() * static_cast<double>(state.iterations()) / seconds / 1e9;
  state.counters["GFLOPS"] = gflops;
  state.counters["share_of_peak"] = gflops / peak_gflops(threads);
}

// The production GEMM on p, held to the oracle once, then timed on the current thread count.
void time_production_gemm(benchmark::State& state, Problem& p) {
  check_against_oracle(p, gemm);
  time_product(state, p, num_threads(),
               [&] { gemm(p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N, false); });
}

// BM_Matmul/M/K/N: the production GEMM on the current thread count (QKV_NUM_THREADS).
void BM_Matmul(benchmark::State& state) {
  Problem p(state.range(0), state.range(1), state.range(2));
  time_production_gemm(state, p);
}
// Square products, the tiny GPT's shapes (M = 2048 tokens, K and N of 128 and 512), GPT-2
// small's Linears at M = 512 (B 4, T 128) and 2048 tokens (c_attn 768 -> 2304, c_proj
// 768 -> 768, c_fc 768 -> 3072, mlp.c_proj 3072 -> 768), and one with no size a multiple of a
// block.
const std::vector<std::vector<int64_t>> kShapes = {
    {64, 64, 64},     {256, 256, 256},  {512, 512, 512},   {1024, 1024, 1024}, {2048, 2048, 2048},
    {2048, 128, 128}, {2048, 128, 512}, {2048, 512, 128},  {512, 768, 2304},   {512, 768, 768},
    {512, 768, 3072}, {512, 3072, 768}, {2048, 768, 2304}, {2048, 768, 3072},  {2048, 3072, 768},
    {1000, 333, 777}};  // non-multiples of blocks
void shapes(benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) b->Args(s);
  b->ArgNames({"M", "K", "N"})->UseRealTime()->MeasureProcessCPUTime();
}
BENCHMARK(BM_Matmul)->Apply(shapes);

// The production GEMM of p on this CPU with its tuning table changed by `tune`: the plan
// plan_gemm makes for that CPU, run by run_gemm (tensor/gemm/plan.h).
void tuned_gemm(Problem& p, const std::function<void(gemm_detail::GemmTuning&)>& tune) {
  GemmCpu cpu = this_cpu();
  tune(cpu.tuning);
  const GemmProblem problem{p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N, false};
  run_gemm(problem, plan_gemm(problem, cpu));
}

// BM_WideTileRows/rows/M/K/N: the production GEMM with its wide tile over an A read in place
// taking `rows` rows: 4, what AVX-512's takes on a Zen 4, or 6 (MR), what it takes elsewhere
// (GemmTuning::wide_rows_in_place). The choice was measured on a Zen 4 and an Intel Xeon
// (bench/notes/2026-12-06-gemm.md); to check it on another host, run both in one process,
// interleaved:
//   bench_matmul --benchmark_filter=BM_WideTileRows --benchmark_repetitions=10
//       --benchmark_min_time=0.2 --benchmark_enable_random_interleaving=true
void BM_WideTileRows(benchmark::State& state) {
  const gemm_detail::FastKernel& kernel = gemm_detail::fast_kernel();
  if (!kernel.wide || !kernel.reads_short_a_in_place) {
    state.SkipWithError("this build's kernel has no wide tile that can take fewer rows than MR");
    return;
  }
  const auto tune = [&](gemm_detail::GemmTuning& t) {
    t.wide_rows_in_place = state.range(0);
    t.rows_outer_chunk = 0;  // BLIS's order, the one whose tiles take wide_rows_in_place rows
  };
  Problem p(state.range(1), state.range(2), state.range(3));
  check_against_oracle(p, gemm);
  time_product(state, p, num_threads(), [&] { tuned_gemm(p, tune); });
}
BENCHMARK(BM_WideTileRows)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes)
    for (int64_t rows : {4, 6}) b->Args({rows, s[0], s[1], s[2]});
  b->ArgNames({"rows", "M", "K", "N"})->UseRealTime();
});

// The same, pinned to one thread and to two, to read the threading speed-up in one run.
void BM_MatmulThreads(benchmark::State& state) {
  const int before = num_threads();
  set_num_threads(static_cast<int>(state.range(3)));
  Problem p(state.range(0), state.range(1), state.range(2));
  time_production_gemm(state, p);
  set_num_threads(before);
}
BENCHMARK(BM_MatmulThreads)
    ->ArgNames({"M", "K", "N", "threads"})
    ->Args({1024, 1024, 1024, 1})
    ->Args({1024, 1024, 1024, 2})
    ->Args({2048, 128, 512, 1})
    ->Args({2048, 128, 512, 2})
    ->UseRealTime();

// Attention's batched products: 64 (B*H) matrices of q @ k^T (256x32 @ 32x256) and of
// weights @ v (256x256 @ 256x32), through raw::matmul with k^T as a transposed view.
void BM_MatmulAttention(benchmark::State& state) {
  const int64_t T = 256, D = 32, BH = 64;
  Generator g(1);
  Tensor q = rand({BH, T, D}, &g), k = rand({BH, T, D}, &g), w = rand({BH, T, T}, &g);
  const bool scores = state.range(0) == 0;
  {  // the first product of the batch against the oracle
    const Tensor out = scores ? raw::matmul(q, raw::transpose(k, -2, -1)) : raw::matmul(w, q);
    const MatrixRef q0{q.data_ptr(), D, 1}, kt0{k.data_ptr(), 1, D}, w0{w.data_ptr(), T, 1};
    if (scores)
      hold_to_oracle(T, T, D, q0, kt0, out.data_ptr(), T);
    else
      hold_to_oracle(T, D, T, w0, q0, out.data_ptr(), D);
  }
  for (auto _ : state) {
    Tensor out = scores ? raw::matmul(q, raw::transpose(k, -2, -1)) : raw::matmul(w, q);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  const double flops = scores ? 2.0 * BH * T * D * T : 2.0 * BH * T * T * D;
  state.counters["GFLOPS"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(scores ? "64 x (256x32 @ 32x256)" : "64 x (256x256 @ 256x32)");
}
BENCHMARK(BM_MatmulAttention)->Arg(0)->Arg(1)->UseRealTime();

// C (M, N) = A @ B through the production gemm, held to the oracle once, then timed; GFLOP/s.
void time_gemm(benchmark::State& state, int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B) {
  Floats c(static_cast<size_t>(M * N));
  gemm(M, N, K, A, B, c.data(), N, false);
  hold_to_oracle(M, N, K, A, B, c.data(), N);
  for (auto _ : state) {
    gemm(M, N, K, A, B, c.data(), N, false);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * M * N * K / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// A Linear's weight gradient, dW (M, N) = dY^T (M, K) @ X (K, N), over K tokens, with dY (K, M)
// and X (K, N) row-major as the backward pass has them (A is a transposed view). The larger
// tiny GPT (K = 2048 tokens) has these at (128, 128) for each of q, k, v and o, (512, 128) for
// fc and (128, 512) for proj; (384, 128) is q, k and v stacked as one product. GPT-2 small's
// shape (K = 4 x 128 = 512 tokens) has them at (768, 768), (3072, 768) and (768, 3072).
void BM_WeightGrad(benchmark::State& state) {
  const int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  Generator g(2);
  const Floats dy = floats_of(rand({K * M}, &g)), x = floats_of(rand({K * N}, &g));
  time_gemm(state, M, N, K, {dy.data(), 1, M}, {x.data(), N, 1});  // dY^T, X
}
BENCHMARK(BM_WeightGrad)
    ->ArgNames({"M", "N", "K"})
    ->Args({384, 128, 2048})
    ->Args({128, 128, 2048})
    ->Args({512, 128, 2048})
    ->Args({128, 512, 2048})
    ->Args({768, 768, 512})
    ->Args({3072, 768, 512})
    ->Args({768, 3072, 512})
    ->UseRealTime();

// A Linear's forward, Y (M, N) = X (M, K) @ W^T with W (N, K) row-major as nn::Linear keeps
// it: B is W^T, a transposed view, so packing it transposes W in 8 x 8 blocks. The larger tiny
// GPT's forward (M = 2048 tokens) has them at K -> N of 128 -> 384 (q, k and v as one
// product), 128 -> 128, 128 -> 512 and 512 -> 128; GPT-2 small's shape (M = 512) at 768 ->
// 2304, 768 -> 3072 and 3072 -> 768.
void BM_LinearForward(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  Generator g(3);
  const Floats x = floats_of(rand({M * K}, &g)), w = floats_of(rand({N * K}, &g));
  time_gemm(state, M, N, K, {x.data(), K, 1}, {w.data(), 1, K});  // X, W^T
}
BENCHMARK(BM_LinearForward)
    ->ArgNames({"M", "K", "N"})
    ->Args({2048, 128, 384})
    ->Args({2048, 128, 128})
    ->Args({2048, 128, 512})
    ->Args({2048, 512, 128})
    ->Args({512, 768, 2304})
    ->Args({512, 768, 3072})
    ->Args({512, 3072, 768})
    ->UseRealTime();

// Each step of the ladder at 512^3: steps 1-4 on one thread, step 5 and the production gemm
// on the pool.
template <GemmFn fn>
void BM_Ladder(benchmark::State& state) {
  Problem p(512, 512, 512);
  check_against_oracle(p, fn);
  const bool on_the_pool = fn == gemm_threaded || fn == gemm;  // steps 1-4 run on one thread
  time_product(state, p, on_the_pool ? num_threads() : 1,
               [&] { fn(p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N, false); });
}
BENCHMARK(BM_Ladder<gemm_naive>)->Name("BM_Ladder/1_naive")->UseRealTime()->Iterations(2);
BENCHMARK(BM_Ladder<gemm_loop_order>)->Name("BM_Ladder/2_loop_order")->UseRealTime();
BENCHMARK(BM_Ladder<gemm_blocked>)->Name("BM_Ladder/3_blocked")->UseRealTime();
BENCHMARK(BM_Ladder<gemm_packed>)->Name("BM_Ladder/4_packed")->UseRealTime();
BENCHMARK(BM_Ladder<gemm_threaded>)->Name("BM_Ladder/5_threads")->UseRealTime();
// The library's gemm on the same product: step 5, planned (tensor/gemm/plan.h).
BENCHMARK(BM_Ladder<gemm>)->Name("BM_Ladder/production")->UseRealTime();

// The machine's FP32 FMA peak (tensor/fma_peak.h): independent chains of fused multiply-adds
// on the build's vector registers, on 1 or 2 threads at once. No kernel can beat it;
// %-of-peak figures divide by it. GFLOPS is the median of the iterations' probes, each the
// library's fma_peak_gflops (threads started before the clock, let go together).
void BM_FmaPeak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::vector<double> readings;
  for (auto _ : state) readings.push_back(fma_peak_gflops(threads, int64_t{1} << 22, 1));
  const auto middle = readings.begin() + static_cast<std::ptrdiff_t>(readings.size() / 2);
  std::nth_element(readings.begin(), middle, readings.end());
  state.counters["GFLOPS"] = *middle;
}
BENCHMARK(BM_FmaPeak)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

// BM_MicroKernel/kc: the production micro-kernel alone, on one thread, computing one tile of
// the build's widest shape (the wide MR x 2 NR tile where the kernel has one, else MR x NR)
// from packed panels again and again, stored, never added: no packing, no loops around it, no
// other thread. At kc = 64 its panels of A and B (AVX-512: 1.5 and 16 KiB) stay in L1; at
// kc = 384, the production KC, B's (96 KiB) is read from L2 at every call. Against the
// one-thread FMA peak, the gap between the two is what the caches cost the kernel, and what a
// whole product can at best reach.
void BM_MicroKernel(benchmark::State& state) {
  using namespace gemm_detail;
  const FastKernel& kernel = fast_kernel();
  const int64_t kc = state.range(0), cols = kernel.wide ? 2 * kNR : kNR;
  // Random operands of the tile's sizes, read as packed panels: A[i, k] at a[k * MR + i], B's
  // micro-panels of NR columns one after the other.
  Problem p(kMR, kc, cols);
  const auto tile = [&] {
    if (kernel.wide)
      kernel.wide(kc, p.a.data(), 1, kMR, p.b.data(), kc * kNR, kNR, p.c.data(), cols, false, false,
                  kMR, nullptr);
    else
      kernel.fn(kc, p.a.data(), 1, kMR, p.b.data(), kNR, p.c.data(), cols, false, kMR, kNR,
                nullptr);
  };
  tile();  // held to the naive GEMM once, on B's first micro-panel
  hold_to_oracle(kMR, kNR, kc, {p.a.data(), 1, kMR}, {p.b.data(), kNR, 1}, p.c.data(), cols);
  constexpr int kTilesPerIteration = 100;
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    for (int i = 0; i < kTilesPerIteration; ++i) tile();
    benchmark::DoNotOptimize(p.c.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gflops = 2.0 * double(kMR * cols * kc) * kTilesPerIteration *
                        double(state.iterations()) / seconds / 1e9;
  state.counters["GFLOPS"] = gflops;
  state.counters["share_of_peak"] = gflops / peak_gflops(1);
  state.SetLabel(kernel.wide ? "wide tile" : "tile");
}
BENCHMARK(BM_MicroKernel)->ArgName("kc")->Arg(64)->Arg(384)->UseRealTime();

// BM_MicroKernelInContext/where: the same kernel at KC = 384 over the tiles of one MC-row block
// of a 1024^3 product (16 panels of B, each as wide as the widest tile, 64 columns with
// AVX-512's; the tiles of rows a product takes over an A read in place, 24 of 4 rows with
// AVX-512's wide tile on a Zen 4, else 16 of MR; in block_rows' order), with one operand at a
// time where a whole product has it, to split the gap between the kernel alone and a whole
// product on one thread:
//   0 alone       one tile of A, one panel of B, one tile of C, stored: BM_MicroKernel's work
//   1 A in place  A's 16 tiles read where they lie, rows 1024 floats apart
//   2 B's panel   B's 16 panels in turn, packed one after the other (AVX-512: 1.5 MiB, beyond L2)
//   3 C's tiles   C's 256 tiles (rows 1024 floats apart) added to, asked for before the k loop
//   4 all three   as the product computes them
// Run its modes interleaved (--benchmark_enable_random_interleaving) and compare their ratios.
void BM_MicroKernelInContext(benchmark::State& state) {
  using namespace gemm_detail;
  const FastKernel& kernel = fast_kernel();
  const int64_t where = state.range(0), kc = kKC, n = 1024, cols = kernel.wide ? 2 * kNR : kNR;
  const bool a_real = where == 1 || where == 4, b_real = where == 2 || where == 4,
             c_real = where == 3 || where == 4;
  if (a_real && !kernel.reads_a_in_place) {
    state.SkipWithError("this build's kernel reads A packed only (NEON)");
    return;
  }
  const int64_t rows = kernel.wide ? tuning_for(kernel).wide_rows_in_place : kMR;
  const int64_t tiles = kMC / rows, panels = 16;
  // A: 96 rows of 1024; B's first 384 x 1024 floats read as packed panels; C: 96 rows of 1024.
  Problem p(kMC, n, n);
  Floats c_one(static_cast<size_t>(kMR * cols));
  const auto block = [&] {
    for (int64_t jr = 0; jr < panels; ++jr)
      for (int64_t ir = 0; ir < tiles; ++ir) {
        // Alone, A is the first tile's packed panel (kc x MR, of which the tile reads its rows)
        // and stays in L1.
        const float* a = a_real ? p.a.data() + ir * rows * n : p.a.data();
        const int64_t a_rs = a_real ? n : 1, a_ks = a_real ? 1 : kMR;
        const float* b = p.b.data() + (b_real ? jr * cols * kc : 0);
        float* c = c_real ? p.c.data() + ir * rows * n + jr * cols : c_one.data();
        const int64_t ldc = c_real ? n : cols;
        if (kernel.wide)
          kernel.wide(kc, a, a_rs, a_ks, b, kc * kNR, kNR, c, ldc, c_real, c_real, rows, nullptr);
        else
          kernel.fn(kc, a, a_rs, a_ks, b, kNR, c, ldc, c_real, kMR, kNR, nullptr);
      }
  };
  block();
  const auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    block();
    benchmark::DoNotOptimize(p.c.data());
    benchmark::DoNotOptimize(c_one.data());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gflops = 2.0 * double(rows * cols * kc) * double(tiles * panels) *
                        double(state.iterations()) / seconds / 1e9;
  state.counters["GFLOPS"] = gflops;
  state.counters["share_of_peak"] = gflops / peak_gflops(1);
  static const char* const kWhere[] = {"alone", "A in place", "B's panel", "C's tiles",
                                       "all three"};
  state.SetLabel(kWhere[where]);
}
BENCHMARK(BM_MicroKernelInContext)->ArgName("where")->DenseRange(0, 4)->UseRealTime();

// BM_PackB/N/K/transposed: packing one KC block of B (its first min(K, KC) rows, all N
// columns) into micro-panels, as every product of these shapes does before its tiles run, on
// one thread, B in cache (packed again and again). transposed: B is W^T for a Linear's weight
// W (N, K) row-major, as in x @ W^T, packed by 8 x 8 transposes; else B is row-major, as a
// weight gradient's X (K tokens of N features: a K chunk of 1024). GBps: the bytes of B packed
// per second.
void BM_PackB(benchmark::State& state) {
  using namespace gemm_detail;
  const int64_t N = state.range(0), K = state.range(1), kc = std::min(K, gemm_blocking().KC);
  const bool transposed = state.range(2) != 0;
  Generator g(4);
  const Floats b = floats_of(rand({K * N}, &g));
  const MatrixRef ref = transposed ? MatrixRef{b.data(), 1, K} : MatrixRef{b.data(), N, 1};
  Floats out(static_cast<size_t>(kc * (N + kNR)));
  pack_b(kc, N, ref, out.data());  // the first column of the first panel, checked once
  for (int64_t k = 0; k < kc; ++k)
    if (out[static_cast<size_t>(k * kNR)] != ref.at(k, 0)) {
      std::fprintf(stderr, "bench_matmul: pack_b misplaced B[%ld, 0]\n", long(k));
      std::abort();
    }
  for (auto _ : state) {
    pack_b(kc, N, ref, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GBps"] = benchmark::Counter(
      4.0 * double(kc * N) * double(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PackB)
    ->ArgNames({"N", "K", "transposed"})
    ->Args({2304, 768, 1})
    ->Args({3072, 768, 1})
    ->Args({768, 3072, 1})
    ->Args({384, 128, 1})
    ->Args({512, 128, 1})
    ->Args({128, 512, 1})
    ->Args({128, 1024, 0})
    ->Args({512, 1024, 0})
    ->UseRealTime();

// Two ways of computing product p timed turn about in one process, 20 ms of repeats each, in
// an order drawn at random for each pair (a neighbour with a period of its own cannot favour
// one of them), one pair per iteration, for a shared host whose speed comes and goes
// within a second: BM_Matmul and BM_OpenBLAS time each way for half a second or more at a
// stretch (--benchmark_min_time), so on such a host their ratio says as much about the
// neighbours as about the code; here the two timings of a pair lie within 0.2 s. After each
// timing it sleeps 150 ms, so that no thread of either is still spinning from its last call
// while the other is timed (qkv's pool spins ~2 ms; OpenBLAS's threads longer: see
// peak_gflops, whose probe lost cores to them). Counters, for `second` the name of the second
// way: vs_<second>, the median over the pairs of first / second; GFLOPS and
// <second>_GFLOPS, the medians of each; best_GFLOPS and <second>_best_GFLOPS, the fastest
// timing of each (a busy neighbour only ever slows a timing down, so the fastest is the
// nearest to the code alone); share_of_peak, best_GFLOPS over the highest FMA peak read in the
// run (peak_gflops, probed after the pairs).
template <typename First, typename Second>
void time_paired(benchmark::State& state, const Problem& p, First first_product,
                 const std::string& second, Second second_product) {
  const auto timed = [&](auto product) {  // GFLOP/s over at least 20 ms of repeats, then a rest
    const auto t0 = std::chrono::steady_clock::now();
    int64_t n = 0;
    double seconds = 0;
    do {
      product();
      benchmark::DoNotOptimize(p.c.data());
      ++n;
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } while (seconds < 0.02);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    return p.flops() * static_cast<double>(n) / seconds / 1e9;
  };
  std::vector<double> a, b, ratio;
  std::mt19937 coin(29);
  for (auto _ : state) {
    double x, y;
    if (coin() & 1) {
      x = timed(first_product);
      y = timed(second_product);
    } else {
      y = timed(second_product);
      x = timed(first_product);
    }
    a.push_back(x);
    b.push_back(y);
    ratio.push_back(x / y);
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  const double best = *std::max_element(a.begin(), a.end());
  state.counters["vs_" + second] = median(ratio);
  state.counters["GFLOPS"] = median(a);
  state.counters[second + "_GFLOPS"] = median(b);
  state.counters["best_GFLOPS"] = best;
  state.counters[second + "_best_GFLOPS"] = *std::max_element(b.begin(), b.end());
  state.counters["share_of_peak"] = best / peak_gflops(num_threads());
}

// BM_RowsOuter/chunk/M/K/N: the production GEMM with its tiles rows outer under chunks of
// `chunk` columns of B (GemmTuning::rows_outer_chunk, gemm/loops.cpp's block_rows) against the
// same GEMM in BLIS's order (chunk 0), turn about (time_paired); chunk 0 times BLIS's order
// against itself, the noise of the pairing on this host. The build's kernel takes chunks of
// 512 columns where it is AVX-512's or AVX2's on an Intel CPU
// (bench/notes/2026-12-06-gemm.md), a KC x 512 chunk of B filling 768 KiB of a 2 MiB
// L2; chunks of 256 (384 KiB) are timed too, for a CPU with a smaller L2. To check that choice
// on another host:
//   bench_matmul --benchmark_filter=BM_RowsOuter
void BM_RowsOuter(benchmark::State& state) {
  Problem p(state.range(1), state.range(2), state.range(3));
  const auto with = [&](int64_t chunk) {
    return [&p, chunk] {
      tuned_gemm(p, [chunk](gemm_detail::GemmTuning& t) { t.rows_outer_chunk = chunk; });
    };
  };
  const auto rows_outer = with(state.range(0)), blis_order = with(0);
  blis_order();
  const Floats blis_bits = p.c;
  rows_outer();
  if (p.c != blis_bits) {
    state.SkipWithError("the two orders gave different bits");
    return;
  }
  time_paired(state, p, rows_outer, "blis_order", blis_order);
}
BENCHMARK(BM_RowsOuter)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (const auto& s : kShapes)
        for (int64_t chunk : {0, 256, 512}) b->Args({chunk, s[0], s[1], s[2]});
      b->ArgNames({"chunk", "M", "K", "N"});
    })
    ->Iterations(20);

#ifdef QKV_BENCH_OPENBLAS
// C = A B by OpenBLAS's cblas_sgemm.
void openblas_gemm(Problem& p) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, p.M, p.N, p.K, 1.0f, p.a.data(), p.K,
              p.b.data(), p.N, 0.0f, p.c.data(), p.N);
}
// OpenBLAS's product on p, held to the oracle once, as check_against_oracle holds qkv's.
void check_openblas_against_oracle(Problem& p) {
  openblas_gemm(p);
  hold_to_oracle(p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N);
}

// OpenBLAS at the same shapes, in the same run: the yardstick of the targets.
void BM_OpenBLAS(benchmark::State& state) {
  Problem p(state.range(0), state.range(1), state.range(2));
  check_openblas_against_oracle(p);
  time_product(state, p, num_threads(), [&] { openblas_gemm(p); });
}
BENCHMARK(BM_OpenBLAS)->Apply(shapes);

// BM_MatmulPaired/M/K/N: qkv's product and OpenBLAS's timed turn about in one process, 20 pairs
// (time_paired): vs_openblas, the median of the pairs' qkv / OpenBLAS, and each one's median and
// fastest GFLOP/s.
//   bench_matmul --benchmark_filter=BM_MatmulPaired
void BM_MatmulPaired(benchmark::State& state) {
  Problem p(state.range(0), state.range(1), state.range(2));
  check_against_oracle(p, gemm);
  check_openblas_against_oracle(p);
  time_paired(
      state, p, [&] { gemm(p.M, p.N, p.K, p.A(), p.B(), p.c.data(), p.N, false); }, "openblas",
      [&] { openblas_gemm(p); });
}
BENCHMARK(BM_MatmulPaired)->Apply(shapes)->Iterations(20);
#endif

}  // namespace

// BENCHMARK_MAIN, plus the kernel this build runs in the context printed above the table.
int main(int argc, char** argv) {
  benchmark::AddCustomContext("qkv_gemm_kernel", qkv::gemm_kernel_name());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  highest_fma_peak_gflops(1, int64_t{1} << 23, 5);
  highest_fma_peak_gflops(qkv::num_threads(), int64_t{1} << 23, 5);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
