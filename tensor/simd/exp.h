// exp.h: e^x for 16 or 8 floats at once in AVX-512's or AVX2's own instructions, bit for bit
// vector_exp (tensor/vector_math.h), and exp_into, which the softmax, the cross-entropy, the
// flash attention's tiles and GELU take their exponentials through. The intrinsics run while
// their switch is on (intrinsics.h: QKV_INTRINSICS); off, or on any other target, exp_into is
// vector_exp's plain loop. The same bits either way, at any optimisation level: vector_exp
// fuses its multiply-adds with std::fma at the places these fuse theirs.
#pragma once

#include <cstdint>

#include "tensor/simd/intrinsics.h"
#include "tensor/simd/simd.h"
#include "tensor/vector_math.h"

// How many floats at once exp_into (below) takes its exponentials in intrinsics: the build's
// vector width where it is x86's (simd.h), 16 on AVX-512 and 8 on AVX2 with FMA; 0 (the plain
// loop only) elsewhere.
#if QKV_SIMD_LANES == 16 || QKV_SIMD_LANES == 8
#define QKV_EXP_LANES QKV_SIMD_LANES
#include <immintrin.h>
#else
#define QKV_EXP_LANES 0
#endif

namespace qkv::detail {

// vector_exp for 16 floats at once in AVX-512's own instructions, bit for bit the compiled loop
// of vector_exp (tests/tensor/test_elementwise.cpp compares 33 million bit patterns). GCC 12
// compiles that loop into 35 instructions for 16 floats, this into 21: the floor is one
// vrndscaleps where the loop truncates, converts back, compares and corrects; 2^n is one
// vscalefps (a multiply by 2^n, exact as the loop's is) for an add, a shift and a multiply; the
// clamps are a max and a min, and the checks at the end two masked moves (timings in
// bench/notes/2026-12-06-memory-and-threads.md). vector_exp8 is the same for AVX2, which has
// the floor (vroundps) but not vscalefps.
#if QKV_EXP_LANES == 16
QKV_ALWAYS_INLINE inline __m512 vector_exp16(__m512 x) {
  // (The maskz_ forms with every lane on are the plain instructions; GCC 12 warns of an
  // uninitialised value inside the plain intrinsics, a false alarm that -Werror would stop on.)
  constexpr __mmask16 all = 0xFFFF;
  // max(x, -88) is -88 for a NaN x (vmaxps returns its second operand then), as bit_select is.
  const __m512 xc = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, x, _mm512_set1_ps(kExpLow)),
                                        _mm512_set1_ps(kExpHigh));
  const __m512 t = _mm512_fmadd_ps(xc, _mm512_set1_ps(kLog2e), _mm512_set1_ps(0.5f));
  const __m512 n = _mm512_maskz_roundscale_ps(all, t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Hi), xc);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(kLn2Lo), r);
  const __m512 r2 = _mm512_mul_ps(r, r);
  __m512 p = _mm512_set1_ps(kExpP[0]);
  for (int k = 1; k < 6; ++k) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpP[k]));
  const __m512 er = _mm512_add_ps(_mm512_fmadd_ps(p, r2, r), _mm512_set1_ps(1.0f));
  const __m512 y = _mm512_maskz_scalef_ps(all, er, n);
  const __mmask16 normal = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpZeroBelow), _CMP_GE_OQ);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(_mm512_maskz_mov_ps(normal, y), nan, x);
}
#elif QKV_EXP_LANES == 8
QKV_ALWAYS_INLINE inline __m256 vector_exp8(__m256 x) {
  // max(x, -88) is -88 for a NaN x (vmaxps returns its second operand then), as bit_select is.
  const __m256 xc =
      _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(kExpLow)), _mm256_set1_ps(kExpHigh));
  const __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(kLog2e), _mm256_set1_ps(0.5f));
  const __m256 n = _mm256_round_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Hi), xc);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(kLn2Lo), r);
  const __m256 r2 = _mm256_mul_ps(r, r);
  __m256 p = _mm256_set1_ps(kExpP[0]);
  for (int k = 1; k < 6; ++k) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpP[k]));
  const __m256 er = _mm256_add_ps(_mm256_fmadd_ps(p, r2, r), _mm256_set1_ps(1.0f));
  // 2^n as a float's bits, as vector_exp makes it.
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_mul_ps(er, _mm256_castsi256_ps(bits));
  const __m256 normal = _mm256_cmp_ps(x, _mm256_set1_ps(kExpZeroBelow), _CMP_GE_OQ);
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  return _mm256_blendv_ps(_mm256_and_ps(y, normal), x, nan);
}
#endif

// y[i] = vector_exp(arg(i)) for i in [0, n): the plain loop, or, where QKV_EXP_LANES is not 0
// and the intrinsics switch is on (intrinsics.h), the arguments first, then vector_exp16 or
// vector_exp8 over them in place (the last few under a mask). The same bits either way. n may be a
// std::integral_constant.
template <class Length, class Arg>
QKV_ALWAYS_INLINE inline void exp_into(float* y, Length n, Arg arg) {
#if QKV_EXP_LANES
  if (intrinsics_enabled()) {
    for (int64_t i = 0; i < n; ++i) y[i] = arg(i);
    int64_t i = 0;
#if QKV_EXP_LANES == 16
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, vector_exp16(_mm512_loadu_ps(y + i)));
    if (i < n) {
      const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
      _mm512_mask_storeu_ps(y + i, tail, vector_exp16(_mm512_maskz_loadu_ps(tail, y + i)));
    }
#else
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, vector_exp8(_mm256_loadu_ps(y + i)));
    if (i < n) {
      const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)),
                                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      _mm256_maskstore_ps(y + i, tail, vector_exp8(_mm256_maskload_ps(y + i, tail)));
    }
#endif
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = vector_exp(arg(i));
}

}  // namespace qkv::detail
