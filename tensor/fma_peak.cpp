// fma_peak.cpp: the FMA-peak probe (fma_peak.h), written for the build's vector registers
// (tensor/simd/simd.h). Built with -ffp-contract=fast, so `acc * a + b` is one FMA instruction
// where the target has one (AVX2, AVX-512, NEON) and a multiply then an add where it does not.
#include "tensor/fma_peak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "tensor/error.h"
#include "tensor/simd/simd.h"
#include "tensor/thread_pool.h"

namespace qkv {
namespace {

#if QKV_SIMD_LANES > 0
constexpr int kLanes = QKV_SIMD_LANES;
typedef float vec __attribute__((vector_size(4 * kLanes)));
// 24 chains in 32 vector registers (AVX-512, NEON), 12 in 16 (AVX2, SSE): an FMA takes 4 cycles
// and a core starts 2 (x86) or 4 (Apple's cores) a cycle, so 8 or 16 must be in flight.
#if QKV_SIMD_LANES == 16 || defined(__aarch64__)
constexpr int kChains = 24;
#else
constexpr int kChains = 12;
#endif

// Hides v's value from the optimiser: an empty instruction that "may change" the register, so
// the loop cannot be folded into fewer operations. "x" names an SSE/AVX register, "w" a NEON one;
// WebAssembly has no registers to name, so there v goes through memory.
template <typename V>
[[gnu::always_inline]] inline void opaque(V& v) {
#if defined(__aarch64__)
  asm volatile("" : "+w"(v));
#elif defined(__x86_64__) || defined(__i386__)
  asm volatile("" : "+x"(v));
#else
  asm volatile("" : : "r"(&v) : "memory");
#endif
}
#else
// No vector extensions (MSVC): plain arrays of 8 floats, which the compiler may vectorise.
constexpr int kLanes = 8, kChains = 12;
#endif

#if QKV_SIMD_LANES > 0
// The probe: `chains` independent chains acc = acc * a + b over vectors V of `lanes` floats,
// `iterations` times; returns the FLOPs done. Inlined into each caller, so it is compiled for
// that caller's instructions (the build's own, or AVX2 in fma_chains_avx2).
template <typename V, int chains, int lanes>
[[gnu::always_inline]] inline double fma_chain_loop(int64_t iterations) {
  V acc[chains];
  V a = V{} + 0.999f;
  const V b = V{} + 0.001f;
  for (int c = 0; c < chains; ++c) acc[c] = V{} + static_cast<float>(c);
  for (int64_t it = 0; it < iterations; ++it) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 24
#endif
    for (int c = 0; c < chains; ++c) acc[c] = acc[c] * a + b;  // one FMA instruction each
    opaque(a);
  }
  float sum = 0;  // every chain is used, so none can be optimised away
  for (int c = 0; c < chains; ++c) sum += acc[c][0];
  volatile float keep = sum;
  (void)keep;
  return 2.0 * chains * lanes * static_cast<double>(iterations);
}
#endif

#if QKV_AVX2_AT_RUN_TIME
// An SSE build on a CPU with AVX2 and FMA runs its GEMM on an AVX2 kernel (tensor/gemm/kernel.h,
// runnable_kernels), so its peak is measured with those instructions too: 12 chains of 8-float
// FMAs, compiled for them alone and chosen at run time.
typedef float vec8 __attribute__((vector_size(32)));
__attribute__((target("avx2,fma"))) double fma_chains_avx2(int64_t iterations) {
  const double flops = fma_chain_loop<vec8, 12, 8>(iterations);
  __builtin_ia32_vzeroupper();  // SSE code after this runs at full speed (gemm/kernel.cpp)
  return flops;
}
#endif

}  // namespace

double fma_chains(int64_t iterations) {
#if QKV_AVX2_AT_RUN_TIME
  if (cpu_has_avx2_fma()) return fma_chains_avx2(iterations);
#endif
#if QKV_SIMD_LANES > 0
  return fma_chain_loop<vec, kChains, kLanes>(iterations);
#else
  float acc[kChains][kLanes];
  volatile float av = 0.999f, bv = 0.001f;
  const float a = av, b = bv;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < kLanes; ++l) acc[c][l] = static_cast<float>(c);
  for (int64_t it = 0; it < iterations; ++it)
    for (int c = 0; c < kChains; ++c)
      for (int l = 0; l < kLanes; ++l) acc[c][l] = acc[c][l] * a + b;
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += acc[c][0];
  volatile float keep = sum;
  (void)keep;
  return 2.0 * kChains * kLanes * static_cast<double>(iterations);
#endif
}

double fma_peak_gflops(int threads, int64_t iterations, int repeats) {
  check(threads >= 1 && iterations >= 1 && repeats >= 1, "fma_peak_gflops",
        "threads, iterations and repeats of at least 1, got ", threads, ", ", iterations, " and ",
        repeats);
  check(threads == 1 || kCanStartThreads, "fma_peak_gflops",
        "1 thread in a build that cannot start threads (thread_pool.h), got ", threads);
  double best = 0;
  for (int rep = 0; rep < repeats; ++rep) {
    // Every thread is started, and seen running at the same time as the caller, before the
    // clock starts; then all are let go at once. A new thread can wait on the caller's core for
    // the scheduler's next tick before it moves to a core of its own, and a probe that timed
    // that read far below the host's peak (bench/notes/2026-12-06-memory-and-threads.md). So each
    // waiting thread counts as it spins, and the caller lets them go once it has watched every
    // count move in 8 windows of 20 microseconds in a row, each far shorter than a tick, so two
    // threads taking turns on one core do not pass; or after a tenth of a second, for a host
    // with fewer cores than threads, where the probe then reads what it gets.
    std::vector<std::atomic<uint64_t>> counts(static_cast<size_t>(threads - 1));
    std::atomic<bool> go{false};
    std::vector<std::thread> extra;
    for (int t = 1; t < threads; ++t)
      extra.emplace_back([&, t] {
        while (!go.load(std::memory_order_acquire))
          counts[static_cast<size_t>(t - 1)].fetch_add(1, std::memory_order_relaxed);
        fma_chains(iterations);
      });
    using clock = std::chrono::steady_clock;
    const auto give_up = clock::now() + std::chrono::milliseconds(100);
    std::vector<uint64_t> seen(counts.size());
    // (One thread alone has no one to wait for.)
    for (int windows_moved = counts.empty() ? 8 : 0; windows_moved < 8 && clock::now() < give_up;) {
      for (size_t i = 0; i < counts.size(); ++i) seen[i] = counts[i].load();
      const auto window_end = clock::now() + std::chrono::microseconds(20);
      while (clock::now() < window_end) {
      }
      bool all_moved = true;
      for (size_t i = 0; i < counts.size(); ++i) all_moved &= counts[i].load() != seen[i];
      windows_moved = all_moved ? windows_moved + 1 : 0;
    }
    const auto t0 = clock::now();
    go.store(true, std::memory_order_release);
    const double flops = fma_chains(iterations) * threads;
    for (std::thread& t : extra) t.join();
    const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

double highest_fma_peak_gflops(int threads, int64_t iterations, int repeats) {
  check(threads >= 1 && iterations >= 1 && repeats >= 1, "highest_fma_peak_gflops",
        "threads, iterations and repeats of at least 1, got ", threads, ", ", iterations, " and ",
        repeats);
  const double reading = fma_peak_gflops(threads, iterations, repeats);
  static std::mutex m;
  static std::map<int, double> highest;  // by thread count
  const std::lock_guard<std::mutex> lock(m);
  double& h = highest[threads];
  h = std::max(h, reading);
  return h;
}

}  // namespace qkv
