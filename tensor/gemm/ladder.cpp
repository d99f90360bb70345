// ladder.cpp: the GEMM ladder. Read it top to bottom: each step is a complete, tested function
// that adds one idea to the step above it (how-to-optimize-gemm, BLISlab), and each is held to
// step 1 by tests/tensor/test_gemm.cpp. What the production `gemm` adds beneath step 5 (for
// small, skinny, transposed and causal products) is planned in plan.cpp and run in
// execute.cpp, each refinement with what it removes.
//
// Legend: C (M, N) = A (M, K) @ B (K, N). BLIS's names for the blocking (BLISlab):
//   MR x NR  the register tile: MR rows by NR columns of C live in SIMD registers
//   MC x KC  a block of A that stays in the L2 cache while it is used
//   KC x NC  a panel of B that stays in the L3 cache while it is used
//   loops    jc (NC columns) > pc (KC depth) > ic (MC rows) > jr (NR cols) > ir (MR rows)
// The tile, the blocks, the packing and the micro-kernels are in tensor/gemm/kernel.h.
#include "tensor/gemm.h"

#include <algorithm>

#include "tensor/gemm/kernel.h"
#include "tensor/thread_pool.h"

namespace qkv {

using namespace gemm_detail;

// ---- Step 1: naive. One dot product per output element: C[i, j] += sum_k A[i, k] B[k, j].
// The inner loop walks a column of B: a new cache line for every k. Slow, obviously right.
void gemm_naive(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                bool accumulate) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) sum += A.at(i, k) * B.at(k, j);
      C[i * ldc + j] = accumulate ? C[i * ldc + j] + sum : sum;
    }
}

// ---- Step 2: loop order. New: i-k-j. The inner loop now runs along a row of B and a row of C,
// both unit stride (for row-major B), so the compiler vectorises it and every cache line
// brought in is used in full.
void gemm_loop_order(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                     int64_t ldc, bool accumulate) {
  prepare_c(M, N, C, ldc, accumulate);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      const float aik = A.at(i, k);
      float* c = C + i * ldc;
      for (int64_t j = 0; j < N; ++j) c[j] += aik * B.at(k, j);
    }
}

GemmBlocking gemm_blocking() {
  return {kMR, kNR, kMC, kKC, kNC};
}

// ---- Step 3: cache blocking. New: the jc > pc > ic loops cut the problem into blocks that fit
// the caches, so a block of A is reused from L2 for every column of the B panel, instead of
// being streamed from memory N times. The arithmetic inside is step 2's.
void gemm_blocked(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate) {
  prepare_c(M, N, C, ldc, accumulate);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = std::min(kMC, M - ic);
        for (int64_t i = ic; i < ic + mc; ++i)
          for (int64_t k = pc; k < pc + kc; ++k) {
            const float aik = A.at(i, k);
            float* c = C + i * ldc;
            for (int64_t j = jc; j < jc + nc; ++j) c[j] += aik * B.at(k, j);
          }
      }
    }
  }
}

namespace {

// Steps 4 and 5 share this loop nest, rows [m0, m1) of C, with the kernel each step brings.
// Every block of A and panel of B is packed (tensor/gemm/kernel.h) into a buffer of this thread's:
// two threads packing different blocks must never share one. They come from the thread pool's
// per-thread scratch (thread_pool.h), which keeps them across calls, so a training loop does
// not allocate them for every matmul, and aligns them to 64 bytes.
void packed_rows(int64_t m0, int64_t m1, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                 int64_t ldc, bool accumulate, MicroKernel kernel) {
  const int64_t M = m1 - m0;
  prepare_c(M, N, C + m0 * ldc, ldc, accumulate);
  if (M <= 0 || N == 0 || K == 0) return;
  float* bp = thread_scratch(Scratch::gemm_b,
                             std::min(K, kKC) * ((std::min(N, kNC) + kNR - 1) / kNR * kNR));
  float* ap = thread_scratch(Scratch::gemm_a,
                             std::min(K, kKC) * ((std::min(M, kMC) + kMR - 1) / kMR * kMR));
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      // B's panel (kc, nc) into micro-panels of NR columns
      pack_b(kc, nc, {B.p + pc * B.row_stride + jc * B.col_stride, B.row_stride, B.col_stride}, bp);
      for (int64_t ic = m0; ic < m1; ic += kMC) {
        const int64_t mc = std::min(kMC, m1 - ic);
        // A's block (mc, kc) into micro-panels of MR rows
        pack_a(mc, kc, {A.p + ic * A.row_stride + pc * A.col_stride, A.row_stride, A.col_stride},
               ap);
        // Each MR x NR tile of C: the kernel holds it in registers for all kc steps.
        for (int64_t jr = 0; jr < nc; jr += kNR)
          for (int64_t ir = 0; ir < mc; ir += kMR)
            kernel(kc, ap + ir * kc, 1, kMR, bp + jr * kc, kNR, C + (ic + ir) * ldc + jc + jr, ldc,
                   /*add_to_c=*/true, std::min(kMR, mc - ir), std::min(kNR, nc - jr), nullptr);
      }
    }
  }
}

}  // namespace

// ---- Step 4: packing and the register tile. New: blocks of A and panels of B are copied into
// micro-panels (pack_a, pack_b), and a micro-kernel keeps an MR x NR tile of C in registers for
// the whole KC loop: each C element is loaded and stored once per KC block instead of once per
// k. The kernel is plain C++ (micro_kernel_portable).
void gemm_packed(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                 bool accumulate) {
  packed_rows(0, M, N, K, A, B, C, ldc, accumulate, micro_kernel_portable);
}

// ---- Step 5: SIMD and threads. New: the micro-kernel written for the build's vector
// registers (fast_kernel(): AVX-512, AVX2, SSE or NEON; one instruction does 4 to 16
// multiply-adds), and the rows of C cut into one range per thread of the pool, each a whole
// number of MR-row tiles, each thread packing into its own buffers. Which thread computes an
// element never changes its arithmetic, so the result is the same bits on any thread count.
void gemm_threaded(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate) {
  const int64_t tiles = (M + kMR - 1) / kMR;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(num_threads(), tiles));
  parallel_for(parts, [&](int64_t p) {
    const int64_t m0 = std::min(M, tiles * p / parts * kMR);
    const int64_t m1 = std::min(M, tiles * (p + 1) / parts * kMR);
    packed_rows(m0, m1, N, K, A, B, C, ldc, accumulate, fast_kernel().fn);
  });
}

const char* gemm_kernel_name() {
  return fast_kernel().name;
}

}  // namespace qkv
