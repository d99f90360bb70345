// kernel_avx2.cpp: the SSE build's 6 x 8 tile on a CPU with AVX2 and FMA (an SSE build of
// x86-64 may assume SSE2 only: the `portable` preset, MinGW, a packager's build), and its wide
// 6 x 16 twin, compiled for those instructions alone and chosen at run time (runnable_kernels).
#include "tensor/gemm/tile.h"

#if QKV_AVX2_AT_RUN_TIME
#include <immintrin.h>
#endif

namespace qkv::gemm_detail {

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

}  // namespace qkv::gemm_detail
