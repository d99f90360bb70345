// vector_math.h: e^x, erf(x) and tanh(x) written so that loops over them vectorise, in plain
// C++ (internal to the kernels of the tensor and autograd floors: softmax, GELU, LayerNorm).
//
// The C library's expf and erff are calls the compiler cannot turn into vector code: one call
// per float, in passes (softmax, GELU) that touch every activation of a training step. These
// are branch-free polynomials whose selects are bit masks (the compiler will not vectorise a
// `?:` on floats next to arithmetic that may raise a floating-point flag). The same e^x in
// AVX-512's and AVX2's intrinsics is in tensor/simd/exp.h, and sums in 8 lanes in
// tensor/simd/lanes.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tensor/bit_cast.h"

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
  return qkv::bit_cast<float>((qkv::bit_cast<uint32_t>(a) & mask) |
                              (qkv::bit_cast<uint32_t>(b) & ~mask));
}

// a * b + c. Where the target has a fused multiply-add instruction (x86-64 with FMA, every
// aarch64) it is that instruction, one rounding, at every optimisation level: std::fma, which
// the compiler turns into it, instead of a * b + c, which it fuses only when optimising (-O2)
// and leaves as two roundings at -O0. The intrinsic forms of e^x (tensor/simd/exp.h) fuse at the same
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

// vector_exp's numbers, one set for it and for its intrinsic forms (tensor/simd/exp.h).
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
  const float y = er * qkv::bit_cast<float>(bits);
  // Far below the smallest normal float the answer is 0 (and a masked -inf score lands here:
  // its weight must be exactly 0); NaN stays NaN.
  return bit_select(x >= kExpZeroBelow, y, bit_select(x != x, x, 0.0f));
}

// erf(x) by Abramowitz and Stegun 7.1.26: erf|x| = 1 - (a1 t + ... + a5 t^5) e^(-x^2) with
// t = 1 / (1 + p |x|), absolute error below 1.5e-7. It is the formula torch's vectorised
// erf uses (Vectorized<float>::erf), so GELU rounds as PyTorch's does on AVX2 CPUs.
// erf_given_exp takes e = e^(-x^2) from the caller, for one who needs that exponential too
// (GELU's slope: the normal density at x is e^(-(x/sqrt 2)^2) / sqrt(2 pi)).
QKV_ALWAYS_INLINE inline float erf_given_exp(float x, float e) {
  const uint32_t sign = qkv::bit_cast<uint32_t>(x) & 0x80000000u;
  const float ax = qkv::bit_cast<float>(qkv::bit_cast<uint32_t>(x) ^ sign);
  const float t = 1.0f / (0.3275911f * ax + 1.0f);
  float r = 1.061405429f * t + -1.453152027f;
  r = r * t + 1.421413741f;
  r = r * t + -0.284496736f;
  r = r * t + 0.254829592f;
  const float y = 1.0f - e * t * r;
  return qkv::bit_cast<float>(qkv::bit_cast<uint32_t>(y) ^ sign);
}
QKV_ALWAYS_INLINE inline float vector_erf(float x) {
  return erf_given_exp(x, vector_exp(-(x * x)));
}

// tanh(x) by Cephes' tanhf, written to vectorise like vector_exp: for |x| < 0.625 an odd
// polynomial, |x| + |x|^3 P(x^2); beyond it 1 - 2 / (e^(2|x|) + 1), where tanh|x| > 0.55 and
// the subtraction loses nothing; then the sign is put back. Within 2 ulp of the exact value
// (1.31 at worst from -11 to 11: tests/tensor/test_elementwise.cpp), exactly 1 for large |x|,
// NaN stays NaN. The C library's tanhf is a call per element, which keeps GELU's tanh form
// (GPT-2's) from being vectorised. torch likewise runs a vectorised tanh (SLEEF's) in that GELU.
QKV_ALWAYS_INLINE inline float vector_tanh(float x) {
  const uint32_t sign = qkv::bit_cast<uint32_t>(x) & 0x80000000u;
  const float ax = qkv::bit_cast<float>(qkv::bit_cast<uint32_t>(x) ^ sign);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z + -5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z + -3.33332819422e-1f;
  const float near_zero = p * z * ax + ax;
  const float far = 1.0f - 2.0f / (vector_exp(ax + ax) + 1.0f);
  const float t = bit_select(ax < 0.625f, near_zero, far);
  return qkv::bit_cast<float>(qkv::bit_cast<uint32_t>(t) ^ sign);
}

}  // namespace qkv::detail
