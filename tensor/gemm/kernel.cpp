// kernel.cpp: the micro-kernels of kernel.h, one contract for all (MicroKernel): the portable
// one (step 4 of the ladder), the build's SIMD one for x86 (AVX-512, AVX2, SSE) or NEON, and the
// list of those this CPU runs. How a finished tile goes into C is tile.h's; the SSE build's AVX2
// kernels are in kernel_avx2.cpp.
#include <type_traits>
#include <vector>

#include "tensor/gemm/tile.h"

#if QKV_SIMD_LANES > 0 && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace qkv::gemm_detail {

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
// x86 (AVX-512, AVX2, SSE) and WebAssembly SIMD, 6 x 2 vectors: twelve accumulators, two
// vectors of B per step of k, and each value of A broadcast to a register as it is used. A is
// read through its strides, so the panels of a row-major A can be read where they lie
// (packed_loops), the short last one too.
static_assert(kVecs == 2, "micro_kernel_simd is written for a 6 x 2-vector tile");
constexpr bool kBuildKernelReadsAInPlace = true;
constexpr bool kBuildKernelReadsShortAInPlace = true;  // micro_kernel_rows<m>: m rows only

// Keeps v in a register. With few rows (R <= 4) GCC 12 folds the loads of B into the
// multiply-adds, as memory operands: B is then loaded again for every row, and the loads, not
// the FMAs, set the pace. The empty asm says v is used as it is, so it is loaded once per step of
// k.
[[gnu::always_inline]] inline void in_register(vec& v) {
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+v"(v));
#else
  (void)v;  // WebAssembly: its compiler to machine code allocates the registers
#endif
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
#if defined(__wasm_simd128__)
constexpr const char* kBuildKernelName = "WebAssembly SIMD 6x8";
#else
constexpr const char* kBuildKernelName = kLanes == 16 ? "AVX-512 6x32"
                                         : kLanes == 8 ? "AVX2 6x16"
                                                       : "SSE 6x8";
#endif
#endif
#else
constexpr MicroKernel kBuildKernel = micro_kernel_portable;
constexpr WideMicroKernel kBuildWideKernel = nullptr;
constexpr bool kBuildKernelReadsAInPlace = true;
constexpr bool kBuildKernelReadsShortAInPlace = false;
constexpr const char* kBuildKernelName = "portable 6x8";
#endif

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

}  // namespace qkv::gemm_detail
