// gelu.cpp: GELU, its slope and its backward, in both forms (raw::gelu and friends,
// elementwise.h), over the loops of map.h and, for the value with its slope, the fast
// exponentials of tensor/simd/exp.h.
#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/map.h"
#include "tensor/simd/exp.h"

namespace qkv::raw {

using namespace map_detail;

namespace {
// GELU and its slope at x, both forms: the one place their formulas live (gelu,
// gelu_derivative, gelu_backward and gelu_with_slope all call these).
//   exact: x Phi(x),  slope Phi(x) + x phi(x)
//   tanh form: 0.5 x (1 + tanh(u(x))),  slope its derivative
constexpr float kAlpha = 0.7071067811865476f;       // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
constexpr float kBeta = 0.7978845608028654f;        // sqrt(2 / pi)
constexpr float kKappa = 0.044715f;

// The pieces both need, computed once. Exact form: Phi(x) = 0.5 (1 + erf(u)) with u = x / sqrt 2,
// and e = e^(-u^2) = e^(-x^2 / 2), which the erf uses and the density phi(x) = e / sqrt(2 pi)
// reuses. Tanh form: t = tanh(u(x)).
struct GeluParts {
  float erf_or_tanh, e;
};
// The exact form in two halves, for a loop that takes the exponentials of a block at once
// (gelu_with_slope_impl): the exponent, -u^2, and the parts given e = e^(-u^2).
QKV_ALWAYS_INLINE inline float gelu_exp_arg(float x) {
  const float u = x * kAlpha;
  return -(u * u);
}
QKV_ALWAYS_INLINE inline GeluParts gelu_parts_given_exp(float x, float e) {
  return {detail::erf_given_exp(x * kAlpha, e), e};
}
template <GeluApproximation kApprox>
QKV_ALWAYS_INLINE inline GeluParts gelu_parts(float x) {
  if constexpr (kApprox == GeluApproximation::tanh) {
    return {detail::vector_tanh(kBeta * (x + kKappa * x * x * x)), 0.0f};
  } else {
    return gelu_parts_given_exp(x, detail::vector_exp(gelu_exp_arg(x)));
  }
}
QKV_ALWAYS_INLINE inline float gelu_value(float x, GeluParts p) {  // the same in both forms
  return 0.5f * x * (1.0f + p.erf_or_tanh);
}
template <GeluApproximation kApprox>
QKV_ALWAYS_INLINE inline float gelu_slope(float x, GeluParts p) {
  if constexpr (kApprox == GeluApproximation::tanh) {
    const float t = p.erf_or_tanh;
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kBeta * (1.0f + 3.0f * kKappa * x * x);
  } else {
    return 0.5f * (1.0f + p.erf_or_tanh) + x * kInvSqrt2Pi * p.e;
  }
}
template <GeluApproximation kApprox>
QKV_ALWAYS_INLINE inline float gelu_slope(float x) {
  return gelu_slope<kApprox>(x, gelu_parts<kApprox>(x));
}

template <GeluApproximation kApprox>
GeluWithSlope gelu_with_slope_impl(const Tensor& a_in) {
  const Tensor a = contiguous(as_float(a_in, "gelu_with_slope", false));
  GeluWithSlope r{Tensor::empty(a.shape()), Tensor::empty(a.shape())};
  const float* x = a.data_ptr();
  float *y = r.out.data_ptr(), *s = r.slope.data_ptr();
  parallel_ranges(a.numel(), a.numel() >= kParallelVectorMathElements,
                  [&](int64_t begin, int64_t end) {
                    if constexpr (kApprox == GeluApproximation::tanh) {
                      for (int64_t i = begin; i < end; ++i) {
                        const GeluParts p = gelu_parts<kApprox>(x[i]);
                        y[i] = gelu_value(x[i], p);
                        s[i] = gelu_slope<kApprox>(x[i], p);
                      }
                    } else {
                      // The exact form a block at a time: the block's exponentials first
                      // (detail::exp_into, 16 or 8 at a time on AVX-512 or AVX2), then the
                      // rest of each element's formula. The same bits as gelu_parts element
                      // by element.
                      constexpr int64_t kBlock = 256;
                      float e[kBlock];
                      for (int64_t b = begin; b < end; b += kBlock) {
                        const int64_t n = std::min(kBlock, end - b);
                        const float* xb = x + b;
                        detail::exp_into(
                            e, n, [&](int64_t i) QKV_INLINE_LAMBDA { return gelu_exp_arg(xb[i]); });
                        for (int64_t i = 0; i < n; ++i) {
                          const GeluParts p = gelu_parts_given_exp(xb[i], e[i]);
                          y[b + i] = gelu_value(xb[i], p);
                          s[b + i] = gelu_slope<kApprox>(xb[i], p);
                        }
                      }
                    }
                  });
  return r;
}
}  // namespace

Tensor gelu(const Tensor& a, GeluApproximation approximate) {
  if (approximate == GeluApproximation::tanh)
    return map_vector_math(a, "gelu", [](float x) QKV_INLINE_LAMBDA {
      return gelu_value(x, gelu_parts<GeluApproximation::tanh>(x));
    });
  return map_vector_math(a, "gelu", [](float x) QKV_INLINE_LAMBDA {
    return gelu_value(x, gelu_parts<GeluApproximation::none>(x));
  });
}
GeluWithSlope gelu_with_slope(const Tensor& a, GeluApproximation approximate) {
  return approximate == GeluApproximation::tanh ? gelu_with_slope_impl<GeluApproximation::tanh>(a)
                                                : gelu_with_slope_impl<GeluApproximation::none>(a);
}

Tensor gelu_derivative(const Tensor& a, GeluApproximation approximate) {
  if (approximate == GeluApproximation::tanh)
    return map_vector_math(a, "gelu_derivative", [](float x) QKV_INLINE_LAMBDA {
      return gelu_slope<GeluApproximation::tanh>(x);
    });
  return map_vector_math(a, "gelu_derivative", [](float x) QKV_INLINE_LAMBDA {
    return gelu_slope<GeluApproximation::none>(x);
  });
}
Tensor gelu_backward(const Tensor& a, const Tensor& dout, GeluApproximation approximate) {
  check(a.defined() && dout.defined() && a.shape() == dout.shape(), "gelu_backward",
        "a and dout of one shape, got ", shape_of(a), " and ", shape_of(dout));
  if (approximate == GeluApproximation::tanh)
    return map_binary(a, dout, "gelu_backward", [](float x, float d) QKV_INLINE_LAMBDA {
      return d * gelu_slope<GeluApproximation::tanh>(x);
    });
  return map_binary(a, dout, "gelu_backward", [](float x, float d) QKV_INLINE_LAMBDA {
    return d * gelu_slope<GeluApproximation::none>(x);
  });
}

}  // namespace qkv::raw
