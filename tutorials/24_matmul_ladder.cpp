// Lesson 24: the fast matmul ladder: from three loops to most of the machine's peak.
//
// What you will learn: nearly all the arithmetic of a transformer is C = A B, and how fast a
// framework is comes down to how fast it does that. tensor/gemm/ladder.cpp builds it in five steps,
// each one idea beyond the last; here each runs on the same 512 x 512 x 512 product, with its
// GFLOP/s and its share of what the threads it uses can do at most (independent chains of
// fused multiply-adds, probed between the steps, the highest reading kept: tensor/fma_peak.h):
//   1. naive: three loops, a dot product per output. The inner loop walks B down a column:
//      a new cache line for every multiply-add.
//   2. loop order i-k-j: the inner loop walks a row of B and a row of C, unit stride; the
//      compiler can now use vector instructions.
//   3. cache blocks: cut the product into MC x KC blocks of A and KC x NC panels of B that stay
//      in the L2 and L3 caches while they are reused.
//   4. packing + a register micro-kernel: copy each block into the exact order the kernel reads,
//      then compute an MR x NR tile of C in registers over the whole K block (the BLIS design).
//      The kernel is plain C++; the compiler vectorises its inner loop as best it can.
//   5. SIMD and threads: the micro-kernel written for the vector registers themselves (AVX-512,
//      AVX2, NEON or SSE: the line for step 5 names the one this build uses), and the rows of C
//      shared out over the thread pool (gemm_threaded).
// The library's own `gemm` plans each product and runs step 5's loop nest with the plan's
// packing and split over the threads (tensor/gemm/plan.h: panels read in place, few-row
// products, weight gradients cut along K, ...); the last line of the ladder times it on the
// same product, and part 3 prints the plans it makes for the tiny GPT's products
// (QKV_GEMM_VERBOSE=1 prints every product's plan from any program; QKV_GEMM=ladder runs every
// product of any program on step 5).
// What comes before: lesson 01 (tensors); lesson 16 (what the matmuls are for).
// Run it: ./build/release/tutorials/24_matmul_ladder [--size 512]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "tensor/all.h"
#include "tensor/gemm/plan.h"
#include "tutorials/common/lesson.h"

using namespace qkv;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 512;
  lesson::Flags flags("24_matmul_ladder",
                      "The GEMM ladder: from three loops to most of the machine's peak.");
  flags.number("--size", &n, "M = N = K of the product timed (the naive step grows as size^3)", 8,
               2048);
  return lesson::run(flags, argc, argv, [&] {
    // The ceiling is probed again after every step (highest_fma_peak_gflops keeps the highest
    // reading), and every share is taken of the final, highest reading: a probe that ran in a
    // busy moment reads low, so one probe at the start could make a share read above 100%.
    const int threads = num_threads();
    highest_fma_peak_gflops(1, int64_t{1} << 23, 3);
    highest_fma_peak_gflops(threads, int64_t{1} << 23, 3);

    Generator g(23);
    const std::vector<float> a = randn({n, n}, &g).to_vector<float>(),
                             b = randn({n, n}, &g).to_vector<float>();
    const MatrixRef A{a.data(), n, 1}, B{b.data(), n, 1};
    std::vector<float> reference(static_cast<size_t>(n * n));
    struct Step {
      std::string name;
      GemmFn fn;
      bool threaded;
      double seconds = 0;
    };
    std::vector<Step> steps = {{"1 naive (i-j-k)", gemm_naive, false},
                               {"2 loop order (i-k-j)", gemm_loop_order, false},
                               {"3 cache blocks", gemm_blocked, false},
                               {"4 packed + plain kernel", gemm_packed, false},
                               {std::string("5 ") + gemm_kernel_name() + " + threads",
                                gemm_threaded, true},
                               {"the library's gemm", nullptr, true}};
    const double flops =
        2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
    bool all_equal = true;
    for (Step& s : steps) {
      std::vector<float> c(static_cast<size_t>(n * n));
      double best = 1e30;
      const int reps = s.fn == gemm_naive ? 1 : 5;
      for (int r = 0; r < reps; ++r) {
        const int saved = num_threads();
        if (!s.threaded) set_num_threads(1);
        const auto t0 = std::chrono::steady_clock::now();
        if (s.fn)
          s.fn(n, n, n, A, B, c.data(), n, /*accumulate=*/false);
        else
          gemm(n, n, n, A, B, c.data(), n, /*accumulate=*/false);  // planned: tensor/gemm/plan.h
        best = std::min(best, seconds_since(t0));
        set_num_threads(saved);
      }
      s.seconds = best;
      highest_fma_peak_gflops(s.threaded ? threads : 1);  // the ceiling, probed again
      if (s.fn == gemm_naive) reference = c;
      double worst = 0;
      for (size_t i = 0; i < c.size(); ++i)
        worst = std::max(worst, static_cast<double>(std::fabs(c[i] - reference[i])));
      all_equal = all_equal && worst < 1e-3 * std::sqrt(static_cast<double>(n));
    }
    const double peak1 = highest_fma_peak_gflops(1), peak_all = highest_fma_peak_gflops(threads);

    lesson::banner("1. The ceiling");
    std::printf(
        "fused multiply-adds: %.1f GFLOP/s at most on one thread, %.1f on all %d\n"
        "(the highest of the probes run between the steps below; if the two are close, the\n"
        "threads share one core's FMA units, or another program is using a core)\n",
        peak1, peak_all, threads);

    lesson::banner("2. The ladder, C = A B with A, B of " + std::to_string(n) + " x " +
                   std::to_string(n));
    std::printf("  %-26s %10s %10s %12s\n", "step", "ms", "GFLOP/s", "% of peak");
    bool noisy = false;
    double previous = 0;
    for (const Step& s : steps) {
      if (s.fn == nullptr) continue;  // the library's gemm: its own line below
      const double gflops = flops / s.seconds / 1e9;
      // Steps 1-4 run on one thread (their share of one thread's peak), step 5 on all of them.
      const double share = 100 * gflops / (s.threaded ? peak_all : peak1);
      std::printf("  %-26s %10.2f %10.1f ", s.name.c_str(), s.seconds * 1000, gflops);
      if (share <= 100) {
        std::printf("%11.0f%%", share);
      } else {
        std::printf("%12s", "(noisy)");
        noisy = true;
      }
      if (previous > 0) std::printf("   (x%.1f)", gflops / previous);
      std::printf("\n");
      previous = gflops;
    }
    const double first = flops / steps[0].seconds / 1e9, fifth = flops / steps[4].seconds / 1e9;
    std::printf("from step 1 to step 5: x%.0f on the same arithmetic\n", fifth / first);
    const double library = flops / steps[5].seconds / 1e9, library_share = 100 * library / peak_all;
    std::printf("the library's gemm (step 5, planned): %.1f GFLOP/s, ", library);
    if (library_share <= 100) {
      std::printf("%.0f%% of peak\n", library_share);
    } else {
      std::printf("(noisy) of peak\n");
      noisy = true;
    }
    if (noisy)
      std::cout << "(noisy): the step ran faster than the highest probe of the ceiling, which\n"
                   "cannot be: another program held the cores while the probes ran. The host\n"
                   "is too busy to tell these shares; the times and GFLOP/s stand.\n";
    lesson::expect(all_equal, "every step computes the same C as the naive loops (to rounding)");
    std::cout
        << "\nWhy each step helps: (2) memory is read in cache lines of 16 floats, so walk\n"
           "it along rows; (3) a block that stays in cache while it is reused is read from\n"
           "there, not from memory (at 512 the three matrices, 3 MiB, may fit in the caches\n"
           "already, and blocking gains little: try --size 1024);\n"
           "(4) packed data streams through the kernel in order, and a tile of C held in\n"
           "registers is loaded and stored once per K block instead of once per k; the\n"
           "compiler already turns the plain kernel's inner loop into vector instructions,\n"
           "which is most of the jump; (5) a kernel written for the vector registers keeps\n"
           "the whole tile in them on every compiler and CPU (one instruction doing 4, 8\n"
           "or 16 multiply-adds), and the threads give every core its share of the rows.\n"
           "bench/bench_matmul measures the same ladder against OpenBLAS (bench/README.md).\n";
    lesson::banner("3. The plans the library makes for the tiny GPT's products");
    std::cout << "The larger tiny GPT of lesson 16 (B 32 x T 64 = 2048 tokens, C 128, MLP 512),\n"
                 "each product as plan_gemm picks for this CPU and "
              << threads << (threads == 1 ? " thread" : " threads") << ":\n";
    struct Product {
      const char* what;
      int64_t M, N, K;
      bool a_transposed, b_transposed;
    };
    const float dummy = 0.0f;
    for (const Product& p :
         {Product{"fc forward, x W1^T", 2048, 512, 128, false, true},
          Product{"proj forward, h W2^T", 2048, 128, 512, false, true},
          Product{"fc backward, dY W1 (dx)", 2048, 128, 512, false, false},
          Product{"fc weights, dY^T x (dW1)", 512, 128, 2048, true, false},
          Product{"decoding one token, x W1^T", 1, 512, 128, false, true}}) {
      // Only the shapes and strides matter to the plan: the pointers are never read.
      const MatrixRef A = p.a_transposed ? MatrixRef{&dummy, 1, p.M} : MatrixRef{&dummy, p.K, 1};
      const MatrixRef B = p.b_transposed ? MatrixRef{&dummy, 1, p.K} : MatrixRef{&dummy, p.N, 1};
      const GemmProblem problem{p.M, p.N, p.K, A, B, nullptr, p.N};
      std::printf("  %-28s %4lld x %4lld x %4lld: %s\n", p.what, static_cast<long long>(p.M),
                  static_cast<long long>(p.N), static_cast<long long>(p.K),
                  to_string(plan_gemm(problem, this_cpu())).c_str());
    }
    std::cout << "(M x N x K. Every split gives step 5's bits on any thread count, but K in\n"
                 "chunks and few rows, which sum in orders of their own, the same on any count.)\n";
    lesson::exercises({"24.1 gemm_packed_kernel: packing and a register tile, with its GFLOP/s"});
    return lesson::finish();
  });
}
