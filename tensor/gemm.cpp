// gemm.cpp: the GEMM ladder. Read it top to bottom: each step is a complete, tested function
// that adds one idea to the step above it. The production path is the last one.
//
// Legend: C (M, N) = A (M, K) @ B (K, N). BLIS's names for the blocking (BLISlab):
//   MR x NR  the register tile: MR rows by NR columns of C live in SIMD registers
//   MC x KC  a block of A that stays in the L2 cache while it is used
//   KC x NC  a panel of B that stays in the L3 cache while it is used
//   loops    jc (NC columns) > pc (KC depth) > ic (MC rows) > jr (NR cols) > ir (MR rows)
#include "tensor/gemm.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

#include "tensor/error.h"
#include "tensor/simd.h"
#include "tensor/thread_pool.h"

#if QKV_SIMD_LANES > 0 && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace qkv {
namespace {

// C = 0 unless we are asked to add to it. Every step below then only ever does C += ...
void prepare_c(int64_t M, int64_t N, float* C, int64_t ldc, bool accumulate) {
  if (accumulate) return;
  for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
}

}  // namespace

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

// The register tile: MR = 6 rows of C by NR columns, NR being kVecs vector registers of the
// build's width (tensor/simd.h). Each step of k loads one row of B (kVecs vectors) and does
// 6 x kVecs multiply-adds with it, so the more accumulators fit in the registers, the more
// arithmetic per load:
//   AVX-512   6 x 32: 2 vectors of 16; 12 accumulators + 2 of B + 1 of A, of 32 registers
//   AVX2      6 x 16: 2 vectors of 8;  the same 15, of 16 (BLIS's Haswell kernel)
//   NEON      6 x 16: 4 vectors of 4;  24 accumulators + 4 of B + 2 of A, of 32
//   SSE       6 x 8:  2 vectors of 4;  15 of 16
//   portable  6 x 8:  plain C++, 48 floats that fit 12 registers of 4 (SSE2, NEON)
namespace {
#if QKV_SIMD_LANES > 0
constexpr int kLanes = QKV_SIMD_LANES;
#if defined(__aarch64__)
constexpr int kVecs = 4;
#else
constexpr int kVecs = 2;
#endif
constexpr int64_t kMR = 6, kNR = kVecs * kLanes;
#else
constexpr int64_t kMR = 6, kNR = 8;
#endif
// The cache blocks: an MC x KC block of A (144 KiB) stays in L2 (1 MiB per core here) while
// the kernel streams KC x NR micro-panels of B (48 KiB) past it, and a KC x NC panel of B
// (6 MiB) stays in L3. Chosen by measurement on the 2-core Zen 4 (bench/README.md): a larger
// KC means fewer passes over C, which is what the big products are limited by.
constexpr int64_t kMC = 96, kKC = 384, kNC = 4096;
}  // namespace

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

// The terms [k0, k1) of a KC block (kc of K) that rows [first_row, first_row + rows) of C
// need: all of them, or, for a band (gemm.h) whose K fits one block, the ones its triangle of
// zeros leaves. Packing and the micro-kernel both ask it, so they agree on every tile.
struct KRange {
  int64_t k0, k1;
};
KRange band_range(GemmBand band, int64_t first_row, int64_t rows, int64_t kc, int64_t K) {
  if (band.side == GemmBand::all || kc != K) return {0, kc};
  const int64_t row = band.row0 + first_row;
  if (band.side == GemmBand::up_to_row) return {0, std::clamp<int64_t>(row + rows, 0, K)};
  return {std::clamp<int64_t>(row, 0, K), K};
}

// Packing copies a block into the exact order the micro-kernel reads it, once, so the kernel
// reads memory strictly sequentially whatever A's and B's strides were (this is also where a
// transposed operand costs nothing extra). Rows or columns past the edge are padded with zeros:
// the kernel always computes a full MR x NR tile, and the zeros add nothing.
//
// A block (mc, kc) -> micro-panels of MR rows: panel p holds A[p*MR + i, k] at [p][k][i].
// With a band, only the terms each panel's rows need are copied (the kernel reads no others).
void pack_a(int64_t mc, int64_t kc, MatrixRef A, float* out, GemmBand band = {}, int64_t K = 0) {
  for (int64_t p = 0; p < mc; p += kMR) {
    const int64_t rows = std::min(kMR, mc - p);
    const auto [k0, k1] = band_range(band, p, rows, kc, K);
    // k outer, i inner: the kernel's order. A full panel needs no edge test in the loop.
    if (rows == kMR && A.row_stride == 1) {  // a transposed A (dW = dY^T X): rows side by side
      const float* col = A.p + p;
      for (int64_t k = k0; k < k1; ++k)
        std::memcpy(out + k * kMR, col + k * A.col_stride, sizeof(float) * kMR);
    } else if (rows == kMR) {
      for (int64_t k = k0; k < k1; ++k)
        for (int64_t i = 0; i < kMR; ++i) out[k * kMR + i] = A.at(p + i, k);
    } else {
      for (int64_t k = k0; k < k1; ++k)
        for (int64_t i = 0; i < kMR; ++i) out[k * kMR + i] = i < rows ? A.at(p + i, k) : 0.0f;
    }
    out += kc * kMR;
  }
}

// A transposed B (x @ W^T in every Linear's forward, q k^T in attention) has its columns
// contiguous, and a micro-panel wants its rows: packing it is a transpose. Element by element
// that is a strided gather, one float per load (a fifth of attention's time went there). In
// 8 x 8 blocks it is 8 vector loads, 24 shuffles and 8 vector stores per 64 floats: the block's
// rows are 8 columns of B, each 8 floats of it along k, and after the shuffles they are 8 rows
// of the panel. __builtin_shufflevector is Clang's and GCC's (12 on); other compilers take the
// element loop, which moves the same floats to the same places.
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define QKV_GEMM_TRANSPOSE_8X8 1
static_assert(kNR % 8 == 0, "pack_b transposes whole 8 x 8 blocks of a panel");
typedef float f8 __attribute__((vector_size(32)));

// out[c * ld_out + r] = src[r * ld_src + c] for r, c in 0..7.
[[gnu::always_inline]] inline void transpose_8x8(const float* src, int64_t ld_src, float* out,
                                                 int64_t ld_out) {
  f8 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], src + i * ld_src, sizeof(f8));
  for (int i = 0; i < 8; i += 2) {  // interleave pairs of rows: (r0 r1) -> x00 x10 x01 x11 ...
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)  // pairs of pairs: -> x00 x10 x20 x30 x04 x14 x24 x34 ...
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * h + 1] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; ++c) {  // halves of rows 0-3 and 4-7: columns c and c + 4
    const f8 lo = __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const f8 hi = __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(out + c * ld_out, &lo, sizeof(f8));
    std::memcpy(out + (c + 4) * ld_out, &hi, sizeof(f8));
  }
}
#else
#define QKV_GEMM_TRANSPOSE_8X8 0
#endif

// B panel (kc, nc) -> micro-panels of NR columns: panel p holds B[k, p*NR + j] at [p][k][j].
void pack_b(int64_t kc, int64_t nc, MatrixRef B, float* out) {
  // A row-major B (a weight gradient's X, which comes from memory) is read a row at a time, left
  // to right, each NR-wide piece dealt to its panel: one stream that the hardware prefetcher
  // follows. Panel by panel instead, the reads walk down a column, NR floats from each row,
  // and come back for the next NR: the same lines, fetched from memory less well (the weight
  // gradients of the larger tiny GPT spent ~20% more time than with warm inputs).
  int64_t first = 0;  // the first panel left for the loop below
  if (B.col_stride == 1) {
    first = nc / kNR * kNR;
    for (int64_t r = 0; r < kc; ++r)
      for (int64_t p = 0; p < first; p += kNR)
        std::memcpy(out + p * kc + r * kNR, B.p + r * B.row_stride + p, sizeof(float) * kNR);
  }
  for (int64_t p = first; p < nc; p += kNR) {
    const int64_t cols = std::min(kNR, nc - p);
    float* panel = out + p * kc;
    // Columns [0, by_blocks) of rows [0, k) come from 8 x 8 transposes (columns contiguous);
    // the rest element by element.
    int64_t k = 0, by_blocks = 0;
#if QKV_GEMM_TRANSPOSE_8X8
    if (B.row_stride == 1) {
      by_blocks = cols / 8 * 8;
      for (; k + 8 <= kc; k += 8)
        for (int64_t j = 0; j < by_blocks; j += 8)
          transpose_8x8(B.p + k + (p + j) * B.col_stride, B.col_stride, panel + k * kNR + j, kNR);
    }
#endif
    for (int64_t r = 0; r < kc; ++r) {
      float* row = panel + r * kNR;
      for (int64_t j = r < k ? by_blocks : 0; j < cols; ++j) row[j] = B.at(r, p + j);
      for (int64_t j = cols; j < kNR; ++j) row[j] = 0.0f;
    }
  }
}

// A micro-kernel computes one MR x NR tile of A_panel @ B_panel over kc steps into registers,
// then adds it to C (or stores it, for the first KC block when not accumulating). `c` points at
// the tile's top-left element; only the top-left m x n of it is inside C. A[i, k] is read at
// a[i * a_rs + k * a_ks]: a packed panel has a_rs = 1, a_ks = MR; step 5 also hands the kernel
// rows of a row-major A in place (a_rs = lda, a_ks = 1). B[k, j] is read at b[k * b_ks + j]: a
// packed micro-panel has b_ks = NR; step 5 also hands it the rows of a small product's B that
// is one micro-panel wide already (b_ks = ldb).
// `ep`, when not null, is the epilogue for this tile (gemm.h), given on the last KC block only.
using MicroKernel = void (*)(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                             int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m,
                             int64_t n, const GemmEpilogue* ep);

// The epilogue on one finished element of C (j its column in the tile, i its row).
inline float finish(float x, const GemmEpilogue* ep, int64_t i, int64_t j) {
  if (ep->bias) x = x + ep->bias[j];
  if (ep->residual) x = x + ep->residual[i * ep->ld_residual + j];
  if (ep->scale) x = x * ep->scale[i * ep->ld_scale + j];
  return x;
}

// Writes a computed tile into C: all of it, or its in-range corner at an edge.
void store_tile(const float* tile, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                const GemmEpilogue* ep) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float x = add_to_c ? c[i * ldc + j] + tile[i * kNR + j] : tile[i * kNR + j];
      c[i * ldc + j] = ep ? finish(x, ep, i, j) : x;
    }
}

// The epilogue as a pass of its own, for the paths that do not go through a micro-kernel.
void finish_all(int64_t M, int64_t N, float* C, int64_t ldc, const GemmEpilogue& ep) {
  if (!ep.any()) return;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = finish(C[i * ldc + j], &ep, i, j);
}

// The portable micro-kernel: plain C++ that any compiler builds. The accumulators are a small
// array that the optimiser may keep in registers; it is the reference for the SIMD kernel.
// GCC left to itself unrolls the j loop completely and then vectorises across rows with
// shuffles (2.5 GFLOP/s on an AVX2 host); kept as a loop, j is vectorised (70 GFLOP/s).
void micro_kernel_portable(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                           int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                           const GemmEpilogue* ep) {
  float acc[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k, a += a_ks, b += b_ks)
    for (int64_t i = 0; i < kMR; ++i) {
      const float aik = a[i * a_rs];
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
      for (int64_t j = 0; j < kNR; ++j) acc[i][j] += aik * b[j];
    }
  store_tile(&acc[0][0], c, ldc, add_to_c, m, n, ep);
}

#if QKV_SIMD_LANES > 0
// The SIMD micro-kernels, written with GCC/Clang vector extensions: a `vec` is one register of
// kLanes floats, and `c += a * b` (a float times a vector: the float is broadcast) becomes one
// fused multiply-add where the target has FMA (gemm.cpp is built with -ffp-contract=fast).
// The accumulators are named variables, c[row][vector], so the compiler keeps every one in a
// register for the whole k loop (GCC puts an array of them on the stack).
typedef float vec __attribute__((vector_size(4 * kLanes)));

// Asks the caches for the lines of an m x NR tile at p (rows ld apart), to read (kWrite 0) or
// to write (1), so that they arrive during the k loop.
template <int kWrite>
[[gnu::always_inline]] inline void prefetch_tile(const float* p, int64_t ld, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    __builtin_prefetch(p + i * ld, kWrite);
    __builtin_prefetch(p + i * ld + kNR / 2, kWrite);
  }
}

// Before the k loop: the epilogue's scale and residual are streams from memory (GELU's slope,
// written long before; the residual stream), so ask for this tile's lines now instead of
// stalling the store. The same for the tile of C itself, asked for as lines to write: an output
// of a few MB is usually not in cache, and the stores at the end, each missing, would otherwise
// fill the store queue and stall the next tile (AVX-512: a 2048 x 128 x 512 product 1-3%
// faster; the fused attention's small products, whose tiles of scores and of dq, dk, dv miss
// as well, 13-15%).
[[gnu::always_inline]] inline void prefetch_for_tile(const float* c, int64_t ldc, int64_t m,
                                                     const GemmEpilogue* ep) {
  if (ep && ep->scale) prefetch_tile<0>(ep->scale, ep->ld_scale, m);
  if (ep && ep->residual) prefetch_tile<0>(ep->residual, ep->ld_residual, m);
  prefetch_tile<1>(c, ldc, m);
}

// After the k loop: the finished accumulators into C. A full tile goes straight in, the
// epilogue applied a vector at a time (the same + and * as finish()); an edge tile goes
// through a buffer and store_tile, with the same arithmetic.
[[gnu::always_inline]] inline void store_vectors(const vec (&acc)[kMR][kVecs], float* c,
                                                 int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                                                 const GemmEpilogue* ep) {
  if (m == kMR && n == kNR) {
    for (int64_t i = 0; i < kMR; ++i)
      for (int64_t v = 0; v < kVecs; ++v) {
        // C rows need not be aligned: memcpy is the portable unaligned load/store.
        vec out = acc[i][v];
        if (add_to_c) {
          vec old;
          std::memcpy(&old, c + i * ldc + kLanes * v, sizeof old);
          out = old + out;
        }
        if (ep) {
          vec e;
          if (ep->bias) {
            std::memcpy(&e, ep->bias + kLanes * v, sizeof e);
            out = out + e;
          }
          if (ep->residual) {
            std::memcpy(&e, ep->residual + i * ep->ld_residual + kLanes * v, sizeof e);
            out = out + e;
          }
          if (ep->scale) {
            std::memcpy(&e, ep->scale + i * ep->ld_scale + kLanes * v, sizeof e);
            out = out * e;
          }
        }
        std::memcpy(c + i * ldc + kLanes * v, &out, sizeof out);
      }
    return;
  }
  alignas(64) float tile[kMR * kNR];
  std::memcpy(tile, acc, sizeof tile);
  store_tile(tile, c, ldc, add_to_c, m, n, ep);
}

#if defined(__aarch64__)
// NEON, 6 x 16: four vectors of B per step of k, and the six values of A that multiply them
// loaded as two vectors (rows 0-3, rows 4-5) from the packed panel. `vfmaq_laneq_f32(c, b, a, L)`
// is one instruction, c += b * a[L] ("fmla by element"), so A needs no broadcasts: 24 FMAs, 4
// loads of B and 2 of A per step, 30 of the 32 registers. The intrinsics (<arm_neon.h>) are
// there because GCC 12, given the same loop in vector extensions, keeps the six values of A in
// six registers and spills three accumulators to the stack every step.
static_assert(kLanes == 4 && kVecs == 4, "micro_kernel_neon is written for a 6 x 16 tile");
constexpr bool kFastKernelReadsAInPlace = false;  // it wants A packed: a_rs = 1, a_ks = MR

// One row of the tile, one step of k: c0:c3 += lane L of a * B[k, 0:16].
template <int L, class Lanes>
[[gnu::always_inline]] inline void fma_row(float32x4_t& c0, float32x4_t& c1, float32x4_t& c2,
                                           float32x4_t& c3, Lanes a, float32x4_t b0,
                                           float32x4_t b1, float32x4_t b2, float32x4_t b3) {
  if constexpr (sizeof(Lanes) == 16) {
    c0 = vfmaq_laneq_f32(c0, b0, a, L);
    c1 = vfmaq_laneq_f32(c1, b1, a, L);
    c2 = vfmaq_laneq_f32(c2, b2, a, L);
    c3 = vfmaq_laneq_f32(c3, b3, a, L);
  } else {  // a float32x2_t
    c0 = vfmaq_lane_f32(c0, b0, a, L);
    c1 = vfmaq_lane_f32(c1, b1, a, L);
    c2 = vfmaq_lane_f32(c2, b2, a, L);
    c3 = vfmaq_lane_f32(c3, b3, a, L);
  }
}

void micro_kernel_neon(int64_t kc, const float* a, [[maybe_unused]] int64_t a_rs,
                       [[maybe_unused]] int64_t a_ks, const float* b, int64_t b_ks, float* c,
                       int64_t ldc, bool add_to_c, int64_t m, int64_t n, const GemmEpilogue* ep) {
  assert(a_rs == 1 && a_ks == kMR);
  float32x4_t c00{}, c01{}, c02{}, c03{}, c10{}, c11{}, c12{}, c13{}, c20{}, c21{}, c22{}, c23{},
      c30{}, c31{}, c32{}, c33{}, c40{}, c41{}, c42{}, c43{}, c50{}, c51{}, c52{}, c53{};
  prefetch_for_tile(c, ldc, m, ep);
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += b_ks) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8),
                      b3 = vld1q_f32(b + 12);
    const float32x4_t a03 = vld1q_f32(a);  // A[0:4, k]
    const float32x2_t a45 = vld1_f32(a + 4);  // A[4:6, k]
    fma_row<0>(c00, c01, c02, c03, a03, b0, b1, b2, b3);
    fma_row<1>(c10, c11, c12, c13, a03, b0, b1, b2, b3);
    fma_row<2>(c20, c21, c22, c23, a03, b0, b1, b2, b3);
    fma_row<3>(c30, c31, c32, c33, a03, b0, b1, b2, b3);
    fma_row<0>(c40, c41, c42, c43, a45, b0, b1, b2, b3);
    fma_row<1>(c50, c51, c52, c53, a45, b0, b1, b2, b3);
  }
  const float32x4_t acc[kMR][kVecs] = {{c00, c01, c02, c03}, {c10, c11, c12, c13},
                                       {c20, c21, c22, c23}, {c30, c31, c32, c33},
                                       {c40, c41, c42, c43}, {c50, c51, c52, c53}};
  vec out[kMR][kVecs];  // the same bytes as GCC/Clang's generic vectors
  std::memcpy(out, acc, sizeof out);
  store_vectors(out, c, ldc, add_to_c, m, n, ep);
}
constexpr MicroKernel kFastKernel = micro_kernel_neon;
constexpr const char* kFastKernelName = "NEON 6x16";
#else
// x86 (AVX-512, AVX2, SSE), 6 x 2 vectors: twelve accumulators, two vectors of B per step of k,
// and each value of A broadcast to a register as it is used. A is read through its strides, so
// full panels of a row-major A can be read where they lie (packed_loops).
static_assert(kVecs == 2, "micro_kernel_simd is written for a 6 x 2-vector tile");
constexpr bool kFastKernelReadsAInPlace = true;

// One row of the tile, one step of k: c0:c1 += A[i, k] * B[k, 0:NR].
[[gnu::always_inline]] inline void fma_row(vec& c0, vec& c1, float a, vec b0, vec b1) {
  c0 += a * b0;
  c1 += a * b1;
}

void micro_kernel_simd(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                       int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                       const GemmEpilogue* ep) {
  vec c00{}, c01{}, c10{}, c11{}, c20{}, c21{}, c30{}, c31{}, c40{}, c41{}, c50{}, c51{};
  const int64_t r1 = a_rs, r2 = 2 * a_rs, r3 = 3 * a_rs, r4 = 4 * a_rs, r5 = 5 * a_rs;
  prefetch_for_tile(c, ldc, m, ep);
  for (int64_t k = 0; k < kc; ++k, a += a_ks, b += b_ks) {
    vec b0, b1;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + kLanes, sizeof b1);
    fma_row(c00, c01, a[0], b0, b1);
    fma_row(c10, c11, a[r1], b0, b1);
    fma_row(c20, c21, a[r2], b0, b1);
    fma_row(c30, c31, a[r3], b0, b1);
    fma_row(c40, c41, a[r4], b0, b1);
    fma_row(c50, c51, a[r5], b0, b1);
  }
  const vec acc[kMR][kVecs] = {{c00, c01}, {c10, c11}, {c20, c21},
                               {c30, c31}, {c40, c41}, {c50, c51}};
  store_vectors(acc, c, ldc, add_to_c, m, n, ep);
}
constexpr MicroKernel kFastKernel = micro_kernel_simd;
constexpr const char* kFastKernelName = kLanes == 16  ? "AVX-512 6x32"
                                        : kLanes == 8 ? "AVX2 6x16"
                                                      : "SSE 6x8";
#endif
#else
constexpr MicroKernel kFastKernel = micro_kernel_portable;
constexpr bool kFastKernelReadsAInPlace = true;
constexpr const char* kFastKernelName = "portable 6x8";
#endif

// Packing buffers belong to one thread each: two threads packing different blocks must never
// share one. They come from the thread pool's per-thread scratch (thread_pool.h), which keeps
// them across calls so a training loop does not allocate them for every matmul, grows them to
// the largest block seen, and aligns them to 64 bytes: a packed micro-panel's rows start on
// cache lines.

// The five-loop nest of steps 4 and 5, on one thread, with a given micro-kernel. With
// `in_place` (step 5), full MR-row panels of a row-major A are read where they lie instead of
// being packed (the kernel takes A's strides, except NEON's); only a short last panel is packed, for its zero
// rows. So is B, when it is row-major, exactly one micro-panel (NR columns) wide and the
// product small (attention's per-head products with a head size of 32: P v, dS k, dS^T q,
// P^T dout): its rows are the panel's rows already, and copying them cost as much as a fifth of
// those products. Few row tiles read it (M <= 2 MC), so that its rows, ldb apart, do not crowd
// each other out of L1 the way a large product's many tiles did (dY W at M = 2048: 6-9%
// slower in place). The fused attention got 5% (forward) and 11% (backward) faster.
void packed_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate, MicroKernel kernel, bool in_place,
                  const GemmEpilogue& epilogue = {}, GemmBand band = {}) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    prepare_c(M, N, C, ldc, accumulate);
    return finish_all(M, N, C, ldc, epilogue);
  }
  const bool a_in_place = in_place && kFastKernelReadsAInPlace && A.col_stride == 1;
  const bool b_in_place = in_place && B.col_stride == 1 && N == kNR && M <= 2 * kMC;
  const int64_t round_n = (std::min(N, kNC) + kNR - 1) / kNR * kNR;
  const int64_t round_m = (std::min(M, kMC) + kMR - 1) / kMR * kMR;
  float* bp = thread_scratch(Scratch::gemm_b, std::min(K, kKC) * round_n);
  float* ap = thread_scratch(Scratch::gemm_a, std::min(K, kKC) * round_m);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool add = accumulate || pc > 0;             // the first K block stores, later ones add
      const bool last = pc + kc == K && epilogue.any();  // the epilogue, on the finished sums
      const float* b_panel = B.p + pc * B.row_stride + jc;  // B's rows, when b_in_place
      if (!b_in_place)
        pack_b(kc, nc, {B.p + pc * B.row_stride + jc * B.col_stride, B.row_stride, B.col_stride},
               bp);
      for (int64_t ic = 0; ic < M; ic += kMC) {
        const int64_t mc = std::min(kMC, M - ic);
        const float* a_block = A.p + ic * A.row_stride + pc * A.col_stride;
        // Rows [0, packed_from) are read in place; rows from there on are packed into ap.
        const int64_t packed_from = a_in_place ? mc / kMR * kMR : 0;
        if (packed_from < mc)
          pack_a(mc - packed_from, kc,
                 {a_block + packed_from * A.row_stride, A.row_stride, A.col_stride}, ap,
                 band.at(ic + packed_from), K);
        for (int64_t jr = 0; jr < nc; jr += kNR)
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const bool a_here = ir < packed_from;  // this panel of A read in place
            const int64_t rows = std::min(kMR, mc - ir);
            const auto [k0, k1] = band_range(band, ic + ir, rows, kc, K);  // the terms it needs
            const GemmEpilogue ep = last ? epilogue.at(ic + ir, jc + jr) : GemmEpilogue{};
            kernel(
                k1 - k0,
                a_here ? a_block + ir * A.row_stride + k0 : ap + (ir - packed_from) * kc + k0 * kMR,
                a_here ? A.row_stride : 1, a_here ? 1 : kMR,
                b_in_place ? b_panel + jr + k0 * B.row_stride : bp + jr * kc + k0 * kNR,
                b_in_place ? B.row_stride : kNR, C + (ic + ir) * ldc + jc + jr, ldc, add, rows,
                std::min(kNR, nc - jr), last ? &ep : nullptr);
          }
      }
    }
  }
}

}  // namespace

// ---- Step 4: packing and the register tile. New: blocks of A and panels of B are copied into
// micro-panels (pack_a, pack_b), and a micro-kernel keeps an MR x NR tile of C in registers for
// the whole KC loop: each C element is loaded and stored once per KC block instead of once per k.
void gemm_packed(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                 bool accumulate) {
  packed_loops(M, N, K, A, B, C, ldc, accumulate, micro_kernel_portable, false);
}

namespace {
// Below this many multiply-adds a product runs on the calling thread: waking a worker costs
// microseconds, about as long as a 64 x 64 x 64 product takes in full.
constexpr int64_t kParallelMinWork = int64_t{1} << 19;
// From about 1300^3 on, one shared packed B beats a packed copy per thread.
constexpr int64_t kSharedBMinWork = int64_t{1} << 31;
// A product with few rows (decoding one token: M = 1) gains nothing from packing: packing B
// copies all K x N of it to use each element only M times, which costs as much as the product
// itself. Such products read B where it lies: as rows (C[i, :] += A[i, k] * B[k, :]) when B's
// rows are contiguous, as dot products of A's row with B's columns when those are (x @ W^T,
// as Linear computes it), in 16 independent sums so the compiler vectorises them.
constexpr int64_t kFewRows = 4;

void few_rows(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
              bool accumulate) {
  prepare_c(M, N, C, ldc, accumulate);
  std::vector<float> a_row(static_cast<size_t>(K));
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    for (int64_t k = 0; k < K; ++k) a_row[static_cast<size_t>(k)] = A.at(i, k);
    const float* a = a_row.data();
    if (B.col_stride == 1) {
      for (int64_t k = 0; k < K; ++k) {
        const float aik = a[k];
        const float* b = B.p + k * B.row_stride;
        for (int64_t j = 0; j < N; ++j) c[j] += aik * b[j];
      }
    } else if (B.row_stride == 1) {
      constexpr int64_t kSums = 16;
      for (int64_t j = 0; j < N; ++j) {
        const float* b = B.p + j * B.col_stride;
        float lane[kSums] = {};
        int64_t k = 0;
        for (; k + kSums <= K; k += kSums)
          for (int64_t l = 0; l < kSums; ++l) lane[l] += a[k + l] * b[k + l];
        float sum = 0.0f;
        for (int64_t l = 0; l < kSums; ++l) sum += lane[l];
        for (; k < K; ++k) sum += a[k] * b[k];
        c[j] += sum;
      }
    } else {
      for (int64_t j = 0; j < N; ++j) {
        float sum = 0.0f;
        for (int64_t k = 0; k < K; ++k) sum += a[k] * B.at(k, j);
        c[j] += sum;
      }
    }
  }
}

// Step 5's work on one thread: few rows read in place, everything else packed.
void fast_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                bool accumulate, const GemmEpilogue& epilogue, GemmBand band = {}) {
  if (M <= kFewRows && M > 0 && N > 0) {
    few_rows(M, N, K, A, B, C, ldc, accumulate);
    return finish_all(M, N, C, ldc, epilogue);
  }
  packed_loops(M, N, K, A, B, C, ldc, accumulate, kFastKernel, true, epilogue, band);
}

bool runs_serially(int64_t multiply_adds) {
  return num_threads() <= 1 || multiply_adds < kParallelMinWork;
}

// One unit of threaded work: rows [m0, m1) and columns [n0, n1) of product `b` of a batch.
struct Tile {
  int64_t b, m0, m1, n0, n1;
};

// The static split: cut each product into row (or column) ranges, aligned to the register tile
// so that every thread sees whole tiles, until there is a part per thread. Which element lands
// in which part never changes its arithmetic (same KC blocks, same kernel), so the result is
// bit-identical on 1, 2 or N threads.
//
// Which way to cut: every part packs the B columns of its range, and the A rows of its range
// unless A is read in place. Cut rows and every part packs all of B; cut columns and every
// part packs all of A. When A is packed (a transposed A: the weight gradient dY^T X, whose
// K is the number of tokens), cut the longer side, so each part packs the least: for the MLP's
// output projection, (128 x 2048) @ (2048 x 512), cutting rows had each of 2 threads pack all
// 4 MB of B. When A is read in place, cut rows unless there are far more column tiles.
std::vector<Tile> split(int64_t batches, int64_t M, int64_t N, int threads, bool a_packed) {
  std::vector<Tile> tiles;
  // Enough batches to go round: whole products per thread. Else cut each product into parts.
  int64_t parts_each = batches < threads ? (threads + batches - 1) / batches : 1;
  const bool by_rows = a_packed ? M >= N : M / kMR >= N / kNR;
  const int64_t unit = by_rows ? kMR : kNR, extent = by_rows ? M : N;
  const int64_t units = (extent + unit - 1) / unit;
  parts_each = std::max<int64_t>(1, std::min(parts_each, units));
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t p = 0; p < parts_each; ++p) {
      const int64_t lo = std::min(extent, units * p / parts_each * unit);
      const int64_t hi = std::min(extent, units * (p + 1) / parts_each * unit);
      tiles.push_back(by_rows ? Tile{b, lo, hi, 0, N} : Tile{b, 0, M, lo, hi});
    }
  return tiles;
}

// A large single product: one packed copy of each KC x NC panel of B, shared by all threads
// (packed by the calling thread), instead of a copy per thread; the threads then take whole
// MR-aligned row ranges of C, each packing its own blocks of A. Every element of C still sees
// the same KC blocks through the same kernel, so the result is bit-identical to the serial one.
// What it saves is the duplicate packing and the second stream of B through memory.
void shared_b_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                    int64_t ldc, bool accumulate, int threads, const GemmEpilogue& epilogue) {
  const int64_t round_n = (std::min(N, kNC) + kNR - 1) / kNR * kNR;
  float* bp = thread_scratch(Scratch::gemm_shared_b, std::min(K, kKC) * round_n);
  const int64_t units = (M + kMR - 1) / kMR;
  const int64_t parts = std::min<int64_t>(threads, units);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool add = accumulate || pc > 0;
      const bool last = pc + kc == K && epilogue.any();
      pack_b(kc, nc, {B.p + pc * B.row_stride + jc * B.col_stride, B.row_stride, B.col_stride}, bp);
      parallel_for(parts, [&](int64_t part) {
        const int64_t m0 = std::min(M, units * part / parts * kMR);
        const int64_t m1 = std::min(M, units * (part + 1) / parts * kMR);
        float* ap =
            thread_scratch(Scratch::gemm_a, kc * ((std::min(m1 - m0, kMC) + kMR - 1) / kMR * kMR));
        for (int64_t ic = m0; ic < m1; ic += kMC) {
          const int64_t mc = std::min(kMC, m1 - ic);
          pack_a(mc, kc, {A.p + ic * A.row_stride + pc * A.col_stride, A.row_stride, A.col_stride},
                 ap);
          for (int64_t jr = 0; jr < nc; jr += kNR)
            for (int64_t ir = 0; ir < mc; ir += kMR) {
              const GemmEpilogue ep = last ? epilogue.at(ic + ir, jc + jr) : GemmEpilogue{};
              kFastKernel(kc, ap + ir * kc, 1, kMR, bp + jr * kc, kNR,
                          C + (ic + ir) * ldc + jc + jr, ldc, add, std::min(kMR, mc - ir),
                          std::min(kNR, nc - jr), last ? &ep : nullptr);
            }
        }
      });
    }
  }
}

// A weight gradient, dW = dY^T X, is a small C (out x in) over a long K (every token of the
// batch: 2048 for the tiny GPT's larger config). Cut into rows or columns, as above, each of
// the threads packs all of X's rows (or of dY's) for its part: the same megabytes read and
// packed twice, and a split of 128 rows into 6-row tiles is never even. Such a product is
// instead cut along K: chunk c sums k in [K c / n, K (c + 1) / n), into C for the first chunk
// and into a scratch copy for the others, and the chunks are then added to C in chunk order.
// Each thread packs only its own chunk's rows of both operands. n depends on K alone (one chunk
// per kKChunk of depth, at most kMaxKChunks), never on the thread count; a thread count that
// exceeds the chunks cuts each chunk into row ranges, which changes no arithmetic; and one
// thread runs the same chunks in turn. So the bits are the same on 1, 2 or N threads, though
// not those of one unbroken sum (it is a different, equally valid order of the additions).
// Alone these products got 1-7% faster; a training step of the larger config, 2-4% (bench/README).
constexpr int64_t kKChunk = 1024, kMaxKChunks = 4;

// How many K chunks a product is summed in: 1 (no cut) unless it looks like a weight gradient:
// one product, A transposed (packed, not read in place), at least two chunks of depth, more
// than a few rows (those read B in place) and below the shared-B size. An epilogue is applied
// after the chunks are added, to the finished sums, as the micro-kernel applies it.
int64_t k_chunks(int64_t batches, int64_t M, int64_t N, int64_t K, int64_t a_cs) {
  if (batches != 1 || a_cs == 1 || M <= kFewRows || M * N * K < kParallelMinWork ||
      M * N * K >= kSharedBMinWork)
    return 1;
  return std::min(kMaxKChunks, K / kKChunk);
}

void k_split_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate, int64_t chunks, const GemmEpilogue& epilogue) {
  // The calling thread's, shared with the pool below.
  float* scratch = thread_scratch(Scratch::gemm_k_split, (chunks - 1) * M * N);
  const int64_t units = (M + kMR - 1) / kMR;
  const int64_t row_parts = std::min<int64_t>(units, (num_threads() + chunks - 1) / chunks);
  parallel_for(chunks * row_parts, [&](int64_t t) {
    const int64_t c = t / row_parts, p = t % row_parts;
    const int64_t k0 = K * c / chunks, k1 = K * (c + 1) / chunks;
    const int64_t m0 = std::min(M, units * p / row_parts * kMR);
    const int64_t m1 = std::min(M, units * (p + 1) / row_parts * kMR);
    float* out = c == 0 ? C + m0 * ldc : scratch + (c - 1) * M * N + m0 * N;
    fast_loops(m1 - m0, N, k1 - k0,
               {A.p + m0 * A.row_stride + k0 * A.col_stride, A.row_stride, A.col_stride},
               {B.p + k0 * B.row_stride, B.row_stride, B.col_stride}, out, c == 0 ? ldc : N,
               c == 0 && accumulate, {});
  });
  // C += chunk 1, then += chunk 2, ...: element by element, in chunk order; then the epilogue.
  parallel_ranges(M, M * N >= kParallelElements, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      float* dst = C + i * ldc;
      for (int64_t c = 1; c < chunks; ++c) {
        const float* src = scratch + (c - 1) * M * N + i * N;
        for (int64_t j = 0; j < N; ++j) dst[j] += src[j];
      }
      finish_all(1, N, dst, ldc, epilogue.at(i, 0));
    }
  });
}

// A band (GemmBand) is applied where each part runs fast_loops; the K-cut and shared-B paths,
// for large products, sum every term.
void run_tiles(int64_t M, int64_t N, int64_t K, int64_t a_rs, int64_t a_cs, int64_t b_rs,
               int64_t b_cs, const GemmBatch& batch, int64_t ldc, bool accumulate,
               const GemmEpilogue& epilogue, GemmBand band = {}) {
  const int64_t batches = static_cast<int64_t>(batch.c.size());
  check(!epilogue.any() || batches == 1, "gemm_batched", "an epilogue for one product, got ",
        batches);
  const int threads = num_threads();
  if (const int64_t chunks = k_chunks(batches, M, N, K, a_cs); chunks > 1)
    return k_split_loops(M, N, K, {batch.a[0], a_rs, a_cs}, {batch.b[0], b_rs, b_cs}, batch.c[0],
                         ldc, accumulate, chunks, epilogue);
  if (runs_serially(batches * M * N * K)) {  // small: no split, no wake-ups
    for (int64_t b = 0; b < batches; ++b)
      fast_loops(M, N, K, {batch.a[b], a_rs, a_cs}, {batch.b[b], b_rs, b_cs}, batch.c[b], ldc,
                 accumulate, epilogue, band);
    return;
  }
  // One large product: share packed B between the threads (above).
  if (batches == 1 && M * N * K >= kSharedBMinWork && M / kMR >= threads) {
    shared_b_loops(M, N, K, {batch.a[0], a_rs, a_cs}, {batch.b[0], b_rs, b_cs}, batch.c[0], ldc,
                   accumulate, threads, epilogue);
    return;
  }
  const std::vector<Tile> tiles = split(batches, M, N, threads, a_cs != 1);
  auto run = [&](const Tile& t) {
    fast_loops(t.m1 - t.m0, t.n1 - t.n0, K, {batch.a[t.b] + t.m0 * a_rs, a_rs, a_cs},
               {batch.b[t.b] + t.n0 * b_cs, b_rs, b_cs}, batch.c[t.b] + t.m0 * ldc + t.n0, ldc,
               accumulate, epilogue.at(t.m0, t.n0), band.at(t.m0));
  };
  // Thread t takes a contiguous run of tiles: neighbours share packed B and cache lines of C.
  const int64_t n = static_cast<int64_t>(tiles.size());
  const int64_t parts = std::min<int64_t>(threads, n);
  parallel_for(parts, [&](int64_t p) {
    for (int64_t i = n * p / parts; i < n * (p + 1) / parts; ++i) run(tiles[i]);
  });
}
}  // namespace

// ---- Step 5: threads. New: the SIMD micro-kernel, and the output cut into parts that the
// thread pool computes side by side, each thread with its own packing buffers. Also new: full
// row panels of a row-major A are read in place rather than packed (packing A one float at a
// time was a fifth of a 64 x 64 x 64 product). Neither changes any arithmetic.
void gemm(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
          bool accumulate) {
  gemm_epilogue(M, N, K, A, B, C, ldc, accumulate, {});
}

namespace {
void gemm_one(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
              bool accumulate, const GemmEpilogue& epilogue, GemmBand band) {
  // Without building a one-product batch (unless K is to be cut: run_tiles does that).
  if (runs_serially(M * N * K) && k_chunks(1, M, N, K, A.col_stride) == 1)
    return fast_loops(M, N, K, A, B, C, ldc, accumulate, epilogue, band);
  GemmBatch one{{A.p}, {B.p}, {C}};
  run_tiles(M, N, K, A.row_stride, A.col_stride, B.row_stride, B.col_stride, one, ldc, accumulate,
            epilogue, band);
}
}  // namespace

void gemm_epilogue(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate, const GemmEpilogue& epilogue) {
  gemm_one(M, N, K, A, B, C, ldc, accumulate, epilogue, {});
}

void gemm_band(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
               bool accumulate, GemmBand band) {
  gemm_one(M, N, K, A, B, C, ldc, accumulate, {}, band);
}

void gemm_batched(int64_t M, int64_t N, int64_t K, int64_t a_rs, int64_t a_cs, int64_t b_rs,
                  int64_t b_cs, const GemmBatch& batch, int64_t ldc, bool accumulate,
                  const GemmEpilogue& epilogue) {
  run_tiles(M, N, K, a_rs, a_cs, b_rs, b_cs, batch, ldc, accumulate, epilogue);
}

const char* gemm_kernel_name() {
  return kFastKernelName;
}

}  // namespace qkv
