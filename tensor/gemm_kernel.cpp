// gemm_kernel.cpp: the packing routines and the micro-kernels of gemm_kernel.h, shared by the
// ladder (gemm.cpp) and the production path (gemm_fast.cpp).
#include "tensor/gemm_kernel.h"

#include <cassert>
#include <cstring>
#include <type_traits>

#if QKV_SIMD_LANES > 0 && defined(__aarch64__)
#include <arm_neon.h>
#endif
#if QKV_AVX2_AT_RUN_TIME
#include <immintrin.h>
#endif

namespace qkv::gemm_detail {

void prepare_c(int64_t M, int64_t N, float* C, int64_t ldc, bool accumulate) {
  if (accumulate) return;
  for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
}

// pack_a: k outer, i inner, the kernel's order.
void pack_a(int64_t mc, int64_t kc, MatrixRef A, float* out, GemmBand band, int64_t K) {
  // A transposed A (dW = dY^T X; a_in_place in gemm_fast.cpp says when it is packed rather
  // than read where it lies) holds each k's values of all rows side by side: one row of dY. Its
  // full panels are filled 8 values of k at a time, each panel taking its 6 floats from the same 8
  // rows of dY while they sit in L1. Panel by panel instead, every panel walked all kc rows of dY
  // again, 24 bytes from each, and missed in L1. With a band, each panel needs terms of its own,
  // and goes panel by panel below: attention's T x T products fit in L1 either way.
  const int64_t by_rows = A.row_stride == 1 && band.side == GemmBand::all ? mc / kMR * kMR : 0;
  for (int64_t k0 = 0; k0 < kc && by_rows > 0; k0 += 8)
    for (int64_t p = 0; p < by_rows; p += kMR)
      for (int64_t k = k0; k < std::min(kc, k0 + 8); ++k)
        std::memcpy(out + p * kc + k * kMR, A.p + p + k * A.col_stride, sizeof(float) * kMR);
  out += by_rows * kc;
  for (int64_t p = by_rows; p < mc; p += kMR) {
    const int64_t rows = std::min(kMR, mc - p);
    const auto [k0, k1] = band_range(band, p, rows, kc, K);
    // k outer, i inner: the kernel's order. A full panel needs no edge test in the loop.
    if (rows == kMR && A.row_stride == 1) {
      // Transposed, with a band (P^T and dS^T in causal attention): rows side by side, and only
      // the terms this panel needs.
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

// 8 floats from p as one vector. Loaded by a loop of memcpy's into an array of vectors
// instead, GCC 12 built for AVX2 copied each row to the stack in two 16-byte halves and read
// it back whole, a load that waits for both stores to retire (the CPU cannot forward two
// stores to one load). One 32-byte copy per row instead: one store, one load.
[[gnu::always_inline]] inline f8 load_f8(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// out[c * ld_out + r] = src[r * ld_src + c] for r, c in 0..7.
[[gnu::always_inline]] inline void transpose_8x8(const float* src, int64_t ld_src, float* out,
                                                 int64_t ld_out) {
  f8 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = load_f8(src + i * ld_src);
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

void pack_b(int64_t kc, int64_t nc, MatrixRef B, float* out) {
  // A row-major B (a weight gradient's X, which comes from memory) is read a row at a time, left
  // to right, each NR-wide piece dealt to its panel: one stream that the hardware prefetcher
  // follows. Panel by panel instead, the reads walk down a column, NR floats from each row,
  // and come back for the next NR: the same lines, fetched from memory in an order the
  // prefetcher does not follow.
  // Each panel is written a whole 64-byte cache line at a time: one row of NR floats where NR
  // is 16 or 32, two rows where it is 8 (SSE builds): half-line writes to every panel at once
  // would keep every panel's line half-written in the store buffers.
  int64_t first = 0;  // the first panel left for the loop below
  if (B.col_stride == 1) {
    first = nc / kNR * kNR;
    constexpr int64_t kRowsPerLine = kNR >= 16 ? 1 : 16 / kNR;
    for (int64_t r0 = 0; r0 < kc; r0 += kRowsPerLine) {
      const int64_t r1 = std::min(kc, r0 + kRowsPerLine);
      for (int64_t p = 0; p < first; p += kNR)
        for (int64_t r = r0; r < r1; ++r)
          std::memcpy(out + p * kc + r * kNR, B.p + r * B.row_stride + p, sizeof(float) * kNR);
    }
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
    // In a whole panel the transposes have done rows [0, k): start after them. Walking those
    // rows anyway, to find no column left in any, would read every row of the panel twice.
    for (int64_t r = by_blocks == kNR ? k : 0; r < kc; ++r) {
      float* row = panel + r * kNR;
      for (int64_t j = r < k ? by_blocks : 0; j < cols; ++j) row[j] = B.at(r, p + j);
      for (int64_t j = cols; j < kNR; ++j) row[j] = 0.0f;
    }
  }
}

namespace {

// The epilogue on one finished element of C (j its column in the tile).
inline float finish(float x, const GemmEpilogue* ep, int64_t j) {
  return ep->bias ? x + ep->bias[j] : x;
}

// Writes a computed tile into C: all of it, or its in-range corner at an edge.
void store_tile(const float* tile, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                const GemmEpilogue* ep) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float x = add_to_c ? c[i * ldc + j] + tile[i * kNR + j] : tile[i * kNR + j];
      c[i * ldc + j] = ep ? finish(x, ep, j) : x;
    }
}

}  // namespace

void finish_all(int64_t M, int64_t N, float* C, int64_t ldc, const GemmEpilogue& ep) {
  if (!ep.any()) return;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = finish(C[i * ldc + j], &ep, j);
}

// The portable micro-kernel: plain C++ that any compiler builds. The accumulators are a small
// array that the optimiser may keep in registers; it is the reference for the SIMD kernel.
// GCC left to itself unrolls the j loop completely and then vectorises across rows with
// shuffles, a shuffle per multiply-add; kept as a loop, j is vectorised.
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

namespace {

#if QKV_SIMD_LANES > 0
// The SIMD micro-kernels, written with GCC/Clang vector extensions: a `vec` is one register of
// kLanes floats (simd::Vec, tensor/simd/simd.h), and simd::fmadd(a, b, c), c + a * b with the
// float a broadcast, is one fused multiply-add where the target has FMA, at any -O level.
// The accumulators are named variables, c[row][vector], so the compiler keeps every one in a
// register for the whole k loop (GCC puts an array of them on the stack).
using vec = simd::Vec;

// Asks the caches for the lines of an m x NR tile at p (rows ld apart), to read (kWrite 0) or
// to write (1), so that they arrive during the k loop.
template <int kWrite>
[[gnu::always_inline]] inline void prefetch_tile(const float* p, int64_t ld, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    __builtin_prefetch(p + i * ld, kWrite);
    __builtin_prefetch(p + i * ld + kNR / 2, kWrite);
  }
}

// Before the k loop: ask for the tile of C as lines to write, so that they arrive during the
// k loop. An output of a few MB is usually not in cache, and the stores at the end, each
// missing, would otherwise fill the store queue and stall the next tile (the fused attention's
// small products, whose tiles of scores and of dq, dk, dv miss too, most of all).
[[gnu::always_inline]] inline void prefetch_for_tile(float* c, int64_t ldc, int64_t m) {
  prefetch_tile<1>(c, ldc, m);
}

// After the k loop: the finished accumulators into C. A tile of the full NR columns and the R
// rows its kernel computed goes straight in, the epilogue's bias added a vector at a time (the
// same + as finish()); R is a constant, so the loop unrolls and the accumulators stay in
// registers. Any other edge tile goes through a buffer and store_tile, with the same arithmetic,
// copied in there a vector at a time: one memcpy of the whole array had GCC store all twelve
// accumulators to the stack after every k loop, full tiles too.
// A wide tile (V = 2 kVecs vectors a row, micro_kernel_wide) is always whole: it never needs
// the buffer.
template <int R = kMR, int V = kVecs>
[[gnu::always_inline]] inline void store_vectors(const vec (&acc)[kMR][V], float* c, int64_t ldc,
                                                 bool add_to_c, int64_t m, int64_t n,
                                                 const GemmEpilogue* ep) {
  static_assert(V == kVecs || V == 2 * kVecs);
  if (m == R && n == V * kLanes) {
    const float* bias = ep ? ep->bias : nullptr;  // read once: the stores below may alias *ep
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 24  // R x V stores, up to 24 (the wide tile): GCC 12 unrolls 16 by itself
#endif
    for (int64_t i = 0; i < R; ++i)
      for (int64_t v = 0; v < V; ++v) {
        // C rows need not be aligned: simd::load and store are unaligned.
        vec out = acc[i][v];
        if (add_to_c) out = simd::load(c + i * ldc + kLanes * v) + out;
        if (bias) out = out + simd::load(bias + kLanes * v);
        simd::store(c + i * ldc + kLanes * v, out);
      }
    return;
  }
  if constexpr (V == kVecs) {
    alignas(64) float tile[kMR * kNR];
    for (int64_t i = 0; i < kMR; ++i)
      for (int64_t v = 0; v < kVecs; ++v)
        std::memcpy(tile + i * kNR + kLanes * v, &acc[i][v], sizeof(vec));
    store_tile(tile, c, ldc, add_to_c, m, n, ep);
  } else {
    assert(false && "a wide tile is stored whole");
  }
}

#if defined(__aarch64__)
// NEON, 6 x 16: four vectors of B per step of k, and the six values of A that multiply them
// loaded as two vectors (rows 0-3, rows 4-5) from the packed panel. `vfmaq_laneq_f32(c, b, a, L)`
// is one instruction, c += b * a[L] ("fmla by element"), so A needs no broadcasts: 24 FMAs, 4
// loads of B and 2 of A per step, 30 of the 32 registers. The intrinsics (<arm_neon.h>) are
// there because GCC 12, given the same loop in vector extensions, keeps the six values of A in
// six registers and spills three accumulators to the stack every step.
static_assert(kLanes == 4 && kVecs == 4, "micro_kernel_neon is written for a 6 x 16 tile");
constexpr bool kBuildKernelReadsAInPlace = false;  // it wants A packed: a_rs = 1, a_ks = MR
constexpr bool kBuildKernelReadsShortAInPlace = false;

// One row of the tile, one step of k: c0:c3 += lane L of a * B[k, 0:16].
template <int L, class Lanes>
[[gnu::always_inline]] inline void fma_row(float32x4_t& c0, float32x4_t& c1, float32x4_t& c2,
                                           float32x4_t& c3, Lanes a, float32x4_t b0, float32x4_t b1,
                                           float32x4_t b2, float32x4_t b3) {
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
  prefetch_for_tile(c, ldc, m);
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += b_ks) {
    const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8),
                      b3 = vld1q_f32(b + 12);
    const float32x4_t a03 = vld1q_f32(a);     // A[0:4, k]
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
constexpr MicroKernel kBuildKernel = micro_kernel_neon;
constexpr WideMicroKernel kBuildWideKernel = nullptr;
constexpr const char* kBuildKernelName = "NEON 6x16";
#else
// x86 (AVX-512, AVX2, SSE), 6 x 2 vectors: twelve accumulators, two vectors of B per step of k,
// and each value of A broadcast to a register as it is used. A is read through its strides, so
// the panels of a row-major A can be read where they lie (packed_loops), the short last one too.
static_assert(kVecs == 2, "micro_kernel_simd is written for a 6 x 2-vector tile");
constexpr bool kBuildKernelReadsAInPlace = true;
constexpr bool kBuildKernelReadsShortAInPlace = true;  // micro_kernel_rows<m>: m rows only

// Keeps v in a register. With few rows (R <= 4) GCC 12 folds the loads of B into the
// multiply-adds, as memory operands: B is then loaded again for every row, and the loads, not
// the FMAs, set the pace. The empty asm says v is used as it is, so it is loaded once per step of
// k.
[[gnu::always_inline]] inline void in_register(vec& v) {
  asm("" : "+v"(v));
}

// One row of the tile, one step of k: c0:c1 += A[i, k] * B[k, 0:NR].
[[gnu::always_inline]] inline void fma_row(vec& c0, vec& c1, float a, vec b0, vec b1) {
  c0 = simd::fmadd(a, b0, c0);
  c1 = simd::fmadd(a, b1, c1);
}

// The tile's first R rows (R = MR except in the last panel of A, which may have fewer): rows
// past R are neither read nor computed, so that panel needs no rows of zeros and can be read
// in place, and the 4-row last panel of a 64-row A costs 4 rows of work, not 6. Each element of C
// gets the same multiply-adds in the same order whatever R is, so the bits do not depend on it.
template <int R>
void micro_kernel_rows(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                       int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                       const GemmEpilogue* ep) {
  vec c00{}, c01{}, c10{}, c11{}, c20{}, c21{}, c30{}, c31{}, c40{}, c41{}, c50{}, c51{};
  const int64_t r1 = a_rs, r2 = 2 * a_rs, r3 = 3 * a_rs, r4 = 4 * a_rs, r5 = 5 * a_rs;
  prefetch_for_tile(c, ldc, m);
  for (int64_t k = 0; k < kc; ++k, a += a_ks, b += b_ks) {
    vec b0, b1;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + kLanes, sizeof b1);
    in_register(b0);
    in_register(b1);
    fma_row(c00, c01, a[0], b0, b1);
    if constexpr (R > 1) fma_row(c10, c11, a[r1], b0, b1);
    if constexpr (R > 2) fma_row(c20, c21, a[r2], b0, b1);
    if constexpr (R > 3) fma_row(c30, c31, a[r3], b0, b1);
    if constexpr (R > 4) fma_row(c40, c41, a[r4], b0, b1);
    if constexpr (R > 5) fma_row(c50, c51, a[r5], b0, b1);
  }
  const vec acc[kMR][kVecs] = {{c00, c01}, {c10, c11}, {c20, c21},
                               {c30, c31}, {c40, c41}, {c50, c51}};
  store_vectors<R>(acc, c, ldc, add_to_c, m, n, ep);
}

// Calls f(std::integral_constant<int, R>{}) with R = m for a tile of m = 1 to 5 rows, R = MR
// otherwise: each row count runs its own instance of a kernel template.
template <class F>
[[gnu::always_inline]] inline void with_rows(int64_t m, F f) {
  switch (m) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    default:
      return f(std::integral_constant<int, kMR>{});
  }
}

void micro_kernel_simd(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                       int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                       const GemmEpilogue* ep) {
  with_rows(m, [&](auto rows) {
    micro_kernel_rows<rows()>(kc, a, a_rs, a_ks, b, b_ks, c, ldc, add_to_c, m, n, ep);
  });
}
constexpr MicroKernel kBuildKernel = micro_kernel_simd;

#if QKV_SIMD_LANES == 16
// One row of the wide tile, one step of k: c0:c3 += A[i, k] * B[k, 0:2 NR].
[[gnu::always_inline]] inline void fma_row_wide(vec& c0, vec& c1, vec& c2, vec& c3, float a, vec b0,
                                                vec b1, vec b2, vec b3) {
  fma_row(c0, c1, a, b0, b1);
  fma_row(c2, c3, a, b2, b3);
}

// AVX-512's wide tile, R x 64 (R up to 6): four vectors of B per step of k, 4 R accumulators, 4
// of B and 1 of A, at most 29 of the 32 registers (AVX2 and SSE have 16, so they have none).
// Against two R x 32 tiles, a step of k broadcasts each value of A once instead of twice, and a
// tile's fixed cost (starting, draining the multiply-adds, storing) is paid once for 64 columns.
// Each element of C gets the same multiply-adds in the same order as in a 6 x 32 tile: the bits
// are the same. It takes 6 rows where A is packed, and 4 or 6 where A is read in place, by the
// CPU (GemmTuning::wide_rows_in_place, wide_rows_in_place_on_this_cpu below).
template <int R>
void micro_kernel_wide_rows(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                            int64_t b_half, int64_t b_ks, float* c, int64_t ldc, bool add_to_c,
                            bool prefetch_c, const GemmEpilogue* ep) {
  vec c00{}, c01{}, c02{}, c03{}, c10{}, c11{}, c12{}, c13{}, c20{}, c21{}, c22{}, c23{}, c30{},
      c31{}, c32{}, c33{}, c40{}, c41{}, c42{}, c43{}, c50{}, c51{}, c52{}, c53{};
  const int64_t r1 = a_rs, r2 = 2 * a_rs, r3 = 3 * a_rs, r4 = 4 * a_rs, r5 = 5 * a_rs;
  if (prefetch_c) {
    prefetch_for_tile(c, ldc, R);
    prefetch_for_tile(c + kNR, ldc, R);
  }
  for (int64_t k = 0; k < kc; ++k, a += a_ks, b += b_ks) {
    vec b0, b1, b2, b3;
    std::memcpy(&b0, b, sizeof b0);
    std::memcpy(&b1, b + kLanes, sizeof b1);
    std::memcpy(&b2, b + b_half, sizeof b2);
    std::memcpy(&b3, b + b_half + kLanes, sizeof b3);
    in_register(b0);
    in_register(b1);
    in_register(b2);
    in_register(b3);
    fma_row_wide(c00, c01, c02, c03, a[0], b0, b1, b2, b3);
    if constexpr (R > 1) fma_row_wide(c10, c11, c12, c13, a[r1], b0, b1, b2, b3);
    if constexpr (R > 2) fma_row_wide(c20, c21, c22, c23, a[r2], b0, b1, b2, b3);
    if constexpr (R > 3) fma_row_wide(c30, c31, c32, c33, a[r3], b0, b1, b2, b3);
    if constexpr (R > 4) fma_row_wide(c40, c41, c42, c43, a[r4], b0, b1, b2, b3);
    if constexpr (R > 5) fma_row_wide(c50, c51, c52, c53, a[r5], b0, b1, b2, b3);
  }
  const vec acc[kMR][2 * kVecs] = {{c00, c01, c02, c03}, {c10, c11, c12, c13},
                                   {c20, c21, c22, c23}, {c30, c31, c32, c33},
                                   {c40, c41, c42, c43}, {c50, c51, c52, c53}};
  store_vectors<R, 2 * kVecs>(acc, c, ldc, add_to_c, R, 2 * kNR, ep);
}

void micro_kernel_wide(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                       int64_t b_half, int64_t b_ks, float* c, int64_t ldc, bool add_to_c,
                       bool prefetch_c, int64_t m, const GemmEpilogue* ep) {
  with_rows(m, [&](auto rows) {
    micro_kernel_wide_rows<rows()>(kc, a, a_rs, a_ks, b, b_half, b_ks, c, ldc, add_to_c, prefetch_c,
                                   ep);
  });
}
constexpr WideMicroKernel kBuildWideKernel = micro_kernel_wide;
#else
constexpr WideMicroKernel kBuildWideKernel = nullptr;
#endif
constexpr const char* kBuildKernelName = kLanes == 16  ? "AVX-512 6x32"
                                         : kLanes == 8 ? "AVX2 6x16"
                                                       : "SSE 6x8";
#endif
#else
constexpr MicroKernel kBuildKernel = micro_kernel_portable;
constexpr WideMicroKernel kBuildWideKernel = nullptr;
constexpr bool kBuildKernelReadsAInPlace = true;
constexpr bool kBuildKernelReadsShortAInPlace = false;
constexpr const char* kBuildKernelName = "portable 6x8";
#endif

#if QKV_AVX2_AT_RUN_TIME
// The SSE build's 6 x 8 tile on a CPU with AVX2 and FMA, compiled for those instructions alone
// (target attribute) and chosen at run time (runnable_kernels): each row of the tile is one
// 8-float register, so a step of k is 6 fused multiply-adds, 1 load of B and 6 broadcasts of A,
// where the SSE kernel does 12 multiplies and 12 adds. Most tiles go to its wide twin below,
// two micro-panels side by side (6 x 16, BLIS's Haswell tile), which does 12 multiply-adds for
// the same 6 broadcasts and 2 loads of B: 7 loads per 6 FMAs become 8 per 12, and an FMA's
// result, ready 4 cycles later with 2 started a cycle, has 12 accumulators to go to instead of
// 6. The 6 x 8 kernel is left a micro-panel with no whole neighbour, and the ladder's step 5.
// Both give each element of C the same multiply-adds in the same order (one accumulator each):
// the same bits (bench/notes/2026-12-06-gemm.md).
typedef float vec8 __attribute__((vector_size(32)));

// One row of the tile, one step of k: c += A[i, k] * B[k, 0:8].
__attribute__((target("avx2,fma"), always_inline)) inline void fma_row8(vec8& c, float a, vec8 b) {
#ifdef __OPTIMIZE__
  c += a * b;  // fused by the compiler (-ffp-contract=fast), as simd::fmadd says
#else
  c = reinterpret_cast<vec8>(
      _mm256_fmadd_ps(_mm256_set1_ps(a), reinterpret_cast<__m256>(b), reinterpret_cast<__m256>(c)));
#endif
}

// The accumulators of a 6 x 8 tile as the SSE build's vectors of 4 (the same 48 floats), for
// store_vectors.
__attribute__((target("avx2,fma"), always_inline)) inline void as_sse(const vec8 (&rows)[kMR],
                                                                      vec (&acc)[kMR][kVecs]) {
  std::memcpy(acc, rows, sizeof acc);
}

__attribute__((target("avx2,fma"))) void micro_kernel_avx2_6x8(
    int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_ks, float* c,
    int64_t ldc, bool add_to_c, int64_t m, int64_t n, const GemmEpilogue* ep) {
  static_assert(kMR == 6 && kNR == 8, "micro_kernel_avx2_6x8 is written for a 6 x 8 tile");
  vec8 c0{}, c1{}, c2{}, c3{}, c4{}, c5{};
  prefetch_for_tile(c, ldc, m);
  for (int64_t k = 0; k < kc; ++k, a += a_ks, b += b_ks) {
    vec8 b0;
    std::memcpy(&b0, b, sizeof b0);
    fma_row8(c0, a[0], b0);
    fma_row8(c1, a[a_rs], b0);
    fma_row8(c2, a[2 * a_rs], b0);
    fma_row8(c3, a[3 * a_rs], b0);
    fma_row8(c4, a[4 * a_rs], b0);
    fma_row8(c5, a[5 * a_rs], b0);
  }
  vec acc[kMR][kVecs];
  as_sse({c0, c1, c2, c3, c4, c5}, acc);
  // Clears the upper halves of the 256-bit registers before any SSE code runs again: left
  // set, every SSE instruction after this kernel, anywhere in the program, pays for a merge with
  // those upper halves (a false dependency on the whole register).
  __builtin_ia32_vzeroupper();
  store_vectors(acc, c, ldc, add_to_c, m, n, ep);
}

// The wide twin, 6 x 16: columns [0, 8) of B at b, [8, 16) at b + b_half. It reads all six rows
// of A (this kernel's short panels are packed, with rows of zeros) and stores m of them.
__attribute__((target("avx2,fma"))) void micro_kernel_avx2_wide(int64_t kc, const float* a,
                                                                int64_t a_rs, int64_t a_ks,
                                                                const float* b, int64_t b_half,
                                                                int64_t b_ks, float* c, int64_t ldc,
                                                                bool add_to_c, bool prefetch_c,
                                                                int64_t m, const GemmEpilogue* ep) {
  vec8 l0{}, l1{}, l2{}, l3{}, l4{}, l5{}, r0{}, r1{}, r2{}, r3{}, r4{}, r5{};
  if (prefetch_c) {
    prefetch_for_tile(c, ldc, m);
    prefetch_for_tile(c + kNR, ldc, m);
  }
  for (int64_t k = 0; k < kc; ++k, a += a_ks, b += b_ks) {
    vec8 bl, br;
    std::memcpy(&bl, b, sizeof bl);
    std::memcpy(&br, b + b_half, sizeof br);
    const float a0 = a[0], a1 = a[a_rs], a2 = a[2 * a_rs], a3 = a[3 * a_rs], a4 = a[4 * a_rs],
                a5 = a[5 * a_rs];
    fma_row8(l0, a0, bl), fma_row8(r0, a0, br);
    fma_row8(l1, a1, bl), fma_row8(r1, a1, br);
    fma_row8(l2, a2, bl), fma_row8(r2, a2, br);
    fma_row8(l3, a3, bl), fma_row8(r3, a3, br);
    fma_row8(l4, a4, bl), fma_row8(r4, a4, br);
    fma_row8(l5, a5, bl), fma_row8(r5, a5, br);
  }
  vec left[kMR][kVecs], right[kMR][kVecs];
  as_sse({l0, l1, l2, l3, l4, l5}, left);
  as_sse({r0, r1, r2, r3, r4, r5}, right);
  __builtin_ia32_vzeroupper();  // as in micro_kernel_avx2_6x8
  const GemmEpilogue right_ep = ep ? ep->at(kNR) : GemmEpilogue{};
  store_vectors(left, c, ldc, add_to_c, m, kNR, ep);
  store_vectors(right, c + kNR, ldc, add_to_c, m, kNR, ep ? &right_ep : nullptr);
}
#endif

// The CPU quirks of the tuning table (gemm_kernel.h). AVX-512's wide tile over an A read in
// place takes 4 rows on a Zen 4 (AMD family 19h with AVX-512): a step of the 4-row tile loads 4
// vectors of B (256 bytes) for 16 FMAs, the 6-row one the same 4 for 24, from a KC x 64 panel of
// B that lies in L2. A Zen 4 core starts one 512-bit FMA a cycle (two 256-bit halves), so 4 rows
// ask L2 for 16 bytes a cycle, which it keeps up with (the shape of OpenBLAS's small-matrix
// kernel for AVX-512); a core that starts two a cycle (Intel's, a Zen 5) would ask 32 of 4
// rows: 6 there. Each element of C gets the same multiply-adds in the same order whatever the
// tile's rows: the same bits.
int64_t wide_rows_in_place_on_this_cpu(const FastKernel& kernel) {
#if QKV_SIMD_LANES == 16
  __builtin_cpu_init();  // in case this runs before the run-time library's own constructor
  if (kernel.wide && __builtin_cpu_is("amdfam19h")) return 4;
#endif
  (void)kernel;
  return kMR;
}
// Rows outer under chunks of 512 columns of B for AVX-512's and AVX2's tiles on an Intel CPU. A
// KC block of packed B (KC x N floats: 3-4.5 MiB at N = 2048-3072) outgrows a 2 MiB L2, so in
// BLIS's order every block of A streams it from L3 again; a chunk (KC x 512, 768 KiB) stays in
// L2 while every row tile of A passes under it, the tile's rows of A (6 x KC, 9 KiB) in L1.
// AVX-512's pair of micro-panels (KC x 64, 96 KiB) also overfills L1. Measured on Intel CPUs
// with 2 MiB of L2 (bench/notes/2026-12-06-gemm.md, BM_RowsOuter); the SSE build's AVX2 6 x 8
// kernel showed nothing to win there, and no AMD CPU has been measured: both keep BLIS's order.
int64_t rows_outer_chunk_on_this_cpu() {
#if QKV_SIMD_LANES == 16 || QKV_SIMD_LANES == 8
  __builtin_cpu_init();
  return __builtin_cpu_is("intel") ? 512 : 0;
#else
  return 0;
#endif
}

}  // namespace

const std::vector<FastKernel>& runnable_kernels() {
  static const std::vector<FastKernel> kernels = [] {
    std::vector<FastKernel> k = {{kBuildKernel, kBuildWideKernel, kBuildKernelReadsAInPlace,
                                  kBuildKernelReadsShortAInPlace, kBuildKernelName}};
#if QKV_AVX2_AT_RUN_TIME
    if (cpu_has_avx2_fma())
      k.push_back({micro_kernel_avx2_6x8, micro_kernel_avx2_wide, true, false, "AVX2 6x8"});
#endif
    return k;
  }();
  return kernels;
}

const FastKernel& fast_kernel() {
  return runnable_kernels().back();
}

GemmTuning tuning_for(const FastKernel& kernel) {
  GemmTuning t;
  t.wide_rows_in_place = wide_rows_in_place_on_this_cpu(kernel);
  // Rows outer is for the build's own x86 SIMD tiles (the only ones an AVX-512 or AVX2 build
  // has), which read A in place.
  t.rows_outer_chunk = kernel.reads_a_in_place ? rows_outer_chunk_on_this_cpu() : 0;
  return t;
}

}  // namespace qkv::gemm_detail
