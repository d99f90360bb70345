// tile.h: how the micro-kernels (kernel.cpp, kernel_avx2.cpp) put a finished tile into C: the
// epilogue on each element, a whole tile stored a vector at a time, an edge tile through a
// buffer; the SIMD kernels' vector type and the prefetches of C. Internal to tensor/gemm/.
#pragma once

#include <cassert>
#include <cstdint>
#include <cstring>

#include "tensor/gemm/kernel.h"
#include "tensor/simd/simd.h"

namespace qkv::gemm_detail {

// The epilogue on one finished element of C (j its column in the tile).
inline float finish(float x, const GemmEpilogue* ep, int64_t j) {
  return ep->bias ? x + ep->bias[j] : x;
}

// Writes a computed tile into C: all of it, or its in-range corner at an edge.
inline void store_tile(const float* tile, float* c, int64_t ldc, bool add_to_c, int64_t m,
                       int64_t n, const GemmEpilogue* ep) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float x = add_to_c ? c[i * ldc + j] + tile[i * kNR + j] : tile[i * kNR + j];
      c[i * ldc + j] = ep ? finish(x, ep, j) : x;
    }
}

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
#endif

#if QKV_AVX2_AT_RUN_TIME
// The SSE build's AVX2 kernels for its 6 x 8 tile and their wide 6 x 16 twin (kernel_avx2.cpp),
// chosen at run time on a CPU with AVX2 and FMA (runnable_kernels).
__attribute__((target("avx2,fma"))) void micro_kernel_avx2_6x8(
    int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b, int64_t b_ks, float* c,
    int64_t ldc, bool add_to_c, int64_t m, int64_t n, const GemmEpilogue* ep);
__attribute__((target("avx2,fma"))) void micro_kernel_avx2_wide(int64_t kc, const float* a,
                                                                int64_t a_rs, int64_t a_ks,
                                                                const float* b, int64_t b_half,
                                                                int64_t b_ks, float* c, int64_t ldc,
                                                                bool add_to_c, bool prefetch_c,
                                                                int64_t m, const GemmEpilogue* ep);
#endif

}  // namespace qkv::gemm_detail
