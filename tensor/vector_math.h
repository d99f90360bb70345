// vector_math.h: e^x, erf(x), tanh(x) and row sums written so that loops over them vectorise
// (internal to the kernels of the tensor and autograd floors: softmax, GELU, sums, LayerNorm).
//
// The C library's expf and erff are calls the compiler cannot turn into vector code, and in a
// training step they were the largest cost after the GEMM (erff alone was 13% of the tiny GPT's
// time). These are branch-free polynomials whose selects are bit masks (the compiler will not
// vectorise a `?:` on floats next to arithmetic that may raise a floating-point flag). On
// AVX-512 and AVX2, e^x also has a form written in intrinsics, 16 or 8 at a time
// (vector_exp16, vector_exp8, exp_into), with the same bits.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensor/fused.h"
#include "tensor/simd.h"

// How many floats at once exp_into (below) takes its exponentials in intrinsics: the build's
// vector width where it is x86's (simd.h), 16 on AVX-512 and 8 on AVX2 with FMA; 0 (the plain
// loop only) elsewhere.
#if QKV_SIMD_LANES == 16 || QKV_SIMD_LANES == 8
#define QKV_EXP_LANES QKV_SIMD_LANES
#include <immintrin.h>
#else
#define QKV_EXP_LANES 0
#endif

// For lambdas handed to an elementwise loop: without it, a lambda this long may be compiled as
// a call per element, and a loop with a call in it is never vectorised.
#if defined(__GNUC__) || defined(__clang__)
#define QKV_INLINE_LAMBDA __attribute__((always_inline))
#define QKV_ALWAYS_INLINE [[gnu::always_inline]]
#else
#define QKV_ALWAYS_INLINE
#define QKV_INLINE_LAMBDA
#endif

namespace qkv::detail {

// with_constant<V1, V2, ...>(n, f): calls f(std::integral_constant<int64_t, V>{}) for the V
// equal to n, so that f's loops over n elements are compiled with a constant trip count (no
// remainder loop; a short row's sums stay in registers), or f(n) as a plain int64_t when no V
// matches. The column sums of reduce.cpp use it for the last 1 to 7 columns of a block, the
// attention rows of softmax.cpp for rows of 16 to 64 keys. Either way it is one body of code,
// so the arithmetic, and its bits, are the same whichever form runs.
template <int64_t... Vs, class F>
QKV_ALWAYS_INLINE inline void with_constant(int64_t n, F f) {
  const bool matched =
      ((n == Vs ? (f(std::integral_constant<int64_t, Vs>{}), true) : false) || ...);
  if (!matched) f(n);
}

// c ? a : b for floats, with bit masks: the compiler will not turn a `?:` on floats into vector
// code next to arithmetic that may raise a floating-point flag, but it does turn this.
QKV_ALWAYS_INLINE inline float bit_select(bool c, float a, float b) {
  const uint32_t mask = c ? 0xFFFFFFFFu : 0u;
  return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & mask) |
                              (std::bit_cast<uint32_t>(b) & ~mask));
}

// a * b + c. Where the target has a fused multiply-add instruction (x86-64 with FMA, every
// aarch64) it is that instruction, one rounding, at every optimisation level: std::fma, which
// the compiler turns into it, instead of a * b + c, which it fuses only when optimising (-O2)
// and leaves as two roundings at -O0. The intrinsic forms of e^x below fuse at the same
// places, so the two give the same bits in a Debug build as in a Release one. Elsewhere it is
// two roundings, always: such a target has no instruction to fuse with.
#if defined(__FMA__) || defined(__aarch64__)
QKV_ALWAYS_INLINE inline float fmadd(float a, float b, float c) {
  return std::fma(a, b, c);
}
#else
QKV_ALWAYS_INLINE inline float fmadd(float a, float b, float c) {
  return a * b + c;
}
#endif

// vector_exp's numbers, one set for it and for its intrinsics forms (vector_exp16, vector_exp8).
constexpr float kExpLow = -88.0f, kExpHigh = 88.0f;  // the clamps
constexpr float kExpZeroBelow = -87.0f;              // e^x is 0 below this
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;  // ln 2 in two parts
// e^r = 1 + r + r^2 P(r) for |r| <= ln2 / 2, P's coefficients from the highest power down.
constexpr float kExpP[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                            4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// e^x, written so the compiler can run 8 or 16 of them at once (no calls, no branches):
// Cephes' expf, as in avx_mathfun. x = n ln2 + r with |r| <= ln2 / 2, then e^x = 2^n e^r with
// e^r from a degree-5 polynomial. Within 2 ulp of the exact value for x in [-87, 88]; 0 below
// (a masked -inf score gives exactly 0); NaN stays NaN. torch's kernels likewise use a
// vectorised exp (SLEEF's), not the C library's.
QKV_ALWAYS_INLINE inline float vector_exp(float x) {
  // Clamp to [-88, 88] first so the int conversion below is always defined (a NaN becomes -88
  // here and is put back at the end).
  float xc = bit_select(x > kExpLow, x, kExpLow);
  xc = bit_select(xc < kExpHigh, xc, kExpHigh);
  // n = round(x / ln2) = floor(x / ln2 + 1/2), floor written as truncation then a fix for
  // negatives (std::floor would block vectorisation: it may raise a floating-point flag).
  const float t = fmadd(xc, kLog2e, 0.5f);
  int32_t n_int = static_cast<int32_t>(t);
  n_int -= static_cast<float>(n_int) > t ? 1 : 0;
  const float n = static_cast<float>(n_int);
  const float r = fmadd(-n, kLn2Lo, fmadd(-n, kLn2Hi, xc));  // x - n ln2
  const float r2 = r * r;
  float p = kExpP[0];
  for (int k = 1; k < 6; ++k) p = fmadd(p, r, kExpP[k]);  // Horner's rule
  const float er = fmadd(p, r2, r) + 1.0f;  // e^r
  const int32_t bits = (n_int + 127) << 23;  // 2^n as a float's bits
  const float y = er * std::bit_cast<float>(bits);
  // Far below the smallest normal float the answer is 0 (and a masked -inf score lands here:
  // its weight must be exactly 0); NaN stays NaN.
  return bit_select(x >= kExpZeroBelow, y, bit_select(x != x, x, 0.0f));
}

// vector_exp for 16 floats at once in AVX-512's own instructions, bit for bit the compiled loop
// of vector_exp (tests/tensor/test_elementwise.cpp compares 33 million bit patterns). GCC 12
// compiles that loop into 35 instructions for 16 floats, this into 21: the floor is one
// vrndscaleps where the loop truncates, converts back, compares and corrects; 2^n is one
// vscalefps (a multiply by 2^n, exact as the loop's is) for an add, a shift and a multiply; the
// clamps are a max and a min, and the checks at the end two masked moves. Over 64 Ki floats on
// one core of a Zen 5: 0.15 ns a float instead of 0.29. vector_exp8 is the same for AVX2,
// which has the floor (vroundps) but not vscalefps: 0.30 ns instead of 0.44 on that core.
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
// and the fused switch is on (fused.h), the arguments first, then vector_exp16 or vector_exp8
// over them in place (the last few under a mask). The same bits either way. n may be a
// std::integral_constant.
template <class Length, class Arg>
QKV_ALWAYS_INLINE inline void exp_into(float* y, Length n, Arg arg) {
#if QKV_EXP_LANES
  if (fused_enabled()) {
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

// erf(x) by Abramowitz and Stegun 7.1.26: erf|x| = 1 - (a1 t + ... + a5 t^5) e^(-x^2) with
// t = 1 / (1 + p |x|), absolute error below 1.5e-7. It is the formula torch's vectorised
// erf uses (Vectorized<float>::erf), so GELU rounds as PyTorch's does on AVX2 CPUs.
// erf_given_exp takes e = e^(-x^2) from the caller, for one who needs that exponential too
// (GELU's slope: the normal density at x is e^(-(x/sqrt 2)^2) / sqrt(2 pi)).
QKV_ALWAYS_INLINE inline float erf_given_exp(float x, float e) {
  const uint32_t sign = std::bit_cast<uint32_t>(x) & 0x80000000u;
  const float ax = std::bit_cast<float>(std::bit_cast<uint32_t>(x) ^ sign);
  const float t = 1.0f / (0.3275911f * ax + 1.0f);
  float r = 1.061405429f * t + -1.453152027f;
  r = r * t + 1.421413741f;
  r = r * t + -0.284496736f;
  r = r * t + 0.254829592f;
  const float y = 1.0f - e * t * r;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(y) ^ sign);
}
QKV_ALWAYS_INLINE inline float vector_erf(float x) {
  return erf_given_exp(x, vector_exp(-(x * x)));
}

// tanh(x) by Cephes' tanhf, written to vectorise like vector_exp: for |x| < 0.625 an odd
// polynomial, |x| + |x|^3 P(x^2); beyond it 1 - 2 / (e^(2|x|) + 1), where tanh|x| > 0.55 and
// the subtraction loses nothing; then the sign is put back. Within 2 ulp of the exact value
// (1.31 at worst from -11 to 11: tests/tensor/test_elementwise.cpp), exactly 1 for large |x|,
// NaN stays NaN. The C library's tanhf is a call per element: GELU's tanh form (GPT-2's) took
// about 18 ns a float with it on an Intel Xeon, about 1 ns with this. torch likewise runs a
// vectorised tanh (SLEEF's) in that GELU.
QKV_ALWAYS_INLINE inline float vector_tanh(float x) {
  const uint32_t sign = std::bit_cast<uint32_t>(x) & 0x80000000u;
  const float ax = std::bit_cast<float>(std::bit_cast<uint32_t>(x) ^ sign);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z + -5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z + -3.33332819422e-1f;
  const float near_zero = p * z * ax + ax;
  const float far = 1.0f - 2.0f / (vector_exp(ax + ax) + 1.0f);
  const float t = bit_select(ax < 0.625f, near_zero, far);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(t) ^ sign);
}

// Row sums in 8 interleaved lanes. One running sum is a chain of dependent additions that waits
// on the adder's latency at every element (and the compiler may not reorder float additions to
// break it); eight independent ones fill a vector register. Element j always goes to lane
// j % 8, the lanes are combined pairwise, then the tail (the last n % 8 elements) is added in
// order: the order depends on n alone, so the result never depends on threads, and is the same
// order with or without the vector types below (the compiler may still fuse a multiply and an
// add into one FMA in one form and not the other: a difference in the last bit).
//
// lane_sum<T>(n, term) sums term(at) for j in [0, n), where at(p) reads p[j]: the caller
// writes the summand once, as `[&](auto at) { return at(dy) * at(w); }`. On GCC and Clang,
// `at` hands over 8 elements at once as one vector (Lanes8<float>), so the same expression is
// computed 8 lanes at a time: GCC 12 turns the scalar form into 8 scalar loads and shuffles
// per step (LayerNorm's backward ran 2x slower). Elsewhere at(p) is one float. widen(v) turns
// floats into doubles, for sums kept in double.
#if !defined(QKV_LANE_VECTORS) && (defined(__GNUC__) || defined(__clang__))
#define QKV_LANE_VECTORS 1
#endif
#if QKV_LANE_VECTORS
template <class T>
struct LanesOf;
template <>
struct LanesOf<float> {
  typedef float type __attribute__((vector_size(32)));
};
#if defined(__AVX512F__)
// Eight doubles fill one AVX-512 register.
template <>
struct LanesOf<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <class T>
using Lanes8 = typename LanesOf<T>::type;
QKV_ALWAYS_INLINE inline Lanes8<double> widen(Lanes8<float> v) {
  return __builtin_convertvector(v, Lanes8<double>);
}
#else
// Elsewhere (AVX2, SSE, NEON) eight doubles are two halves of four, each lane's arithmetic
// unchanged: GCC 12 splits a 64-byte vector of doubles through the stack on AVX2, and LayerNorm's
// forward, which sums in double, ran 5 times slower than on AVX-512.
struct Doubles8 {
  typedef double Half __attribute__((vector_size(32)));
  Half lo, hi;  // lanes 0-3 and 4-7
  QKV_ALWAYS_INLINE double operator[](int i) const { return i < 4 ? lo[i] : hi[i - 4]; }
  QKV_ALWAYS_INLINE Doubles8& operator+=(const Doubles8& o) {
    lo += o.lo;
    hi += o.hi;
    return *this;
  }
  QKV_ALWAYS_INLINE friend Doubles8 operator*(const Doubles8& a, const Doubles8& b) {
    return {a.lo * b.lo, a.hi * b.hi};
  }
};
template <>
struct LanesOf<double> {
  typedef Doubles8 type;
};
template <class T>
using Lanes8 = typename LanesOf<T>::type;
QKV_ALWAYS_INLINE inline Lanes8<double> widen(Lanes8<float> v) {
  typedef float Floats4 __attribute__((vector_size(16)));
  Floats4 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return {__builtin_convertvector(lo, Doubles8::Half), __builtin_convertvector(hi, Doubles8::Half)};
}
#endif
#endif
QKV_ALWAYS_INLINE inline double widen(float x) {
  return static_cast<double>(x);
}

template <class T, class Term>
QKV_ALWAYS_INLINE inline T lane_sum(int64_t n, Term term) {
  int64_t j = 0;
#if QKV_LANE_VECTORS
  Lanes8<T> lane = {};
  for (; j + 8 <= n; j += 8)
    lane += term([j](const float* p) QKV_INLINE_LAMBDA {
      Lanes8<float> v;
      std::memcpy(&v, p + j, sizeof v);
      return v;
    });
#else
  T lane[8] = {};
  for (; j + 8 <= n; j += 8)
    for (int64_t l = 0; l < 8; ++l)
      lane[l] += term([i = j + l](const float* p) QKV_INLINE_LAMBDA { return p[i]; });
#endif
  T acc = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (; j < n; ++j) acc += term([j](const float* p) QKV_INLINE_LAMBDA { return p[j]; });
  return acc;
}

}  // namespace qkv::detail
