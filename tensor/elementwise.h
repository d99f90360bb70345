// elementwise.h: math applied element by element, with PyTorch's broadcasting.
//
// Broadcasting lines shapes up from the right; a dim of size 1 (or a missing leading dim)
// stretches to match the other: (4, 1, 3) with (2, 3) gives (4, 2, 3). No data is copied to
// stretch it: the stretched operand is read with stride 0 (see expand in view.h).
// Math ops take float32 tensors; comparisons return bool masks, as in PyTorch.
#pragma once

#include <optional>

#include "tensor/tensor.h"

namespace qkv {
// The broadcast shape of a and b, or a qkv::Error naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op = "broadcast");
// Which GELU (see raw::gelu): the exact erf form, or GPT-2's tanh approximation.
enum class GeluApproximation { none, tanh };
}  // namespace qkv

namespace qkv::raw {

Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b
Tensor pow(const Tensor& a, const Tensor& b);  // a ** b
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, float b);
Tensor sub(const Tensor& a, float b);
Tensor sub(float a, const Tensor& b);
Tensor mul(const Tensor& a, float b);
Tensor div(const Tensor& a, float b);
Tensor div(float a, const Tensor& b);
Tensor pow(const Tensor& a, float exponent);

Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);  // 1 / (1 + e^-x)
Tensor relu(const Tensor& a);     // max(x, 0); NaN stays NaN
// gelu: x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); the tanh form is GPT-2's approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Tensor gelu(const Tensor& a, GeluApproximation approximate = GeluApproximation::none);
Tensor clamp(const Tensor& a, std::optional<float> min, std::optional<float> max);
Tensor sign(const Tensor& a);  // -1, 0 or 1 (NaN stays NaN)
// d gelu(x) / dx, pointwise: Phi(x) + x phi(x) for the erf form (phi the normal density), and
// the derivative of the tanh formula for the tanh form.
Tensor gelu_derivative(const Tensor& a, GeluApproximation approximate = GeluApproximation::none);
// dout * gelu'(a) in one pass (a and dout of one shape): GELU's backward for a caller that kept
// the input a rather than the slope (autograd's gelu keeps the slope: gelu_with_slope below).
Tensor gelu_backward(const Tensor& a, const Tensor& dout,
                     GeluApproximation approximate = GeluApproximation::none);
// gelu(a) and gelu'(a) in one pass, bit for bit gelu and gelu_derivative: both need the same
// exponential and erf, so the slope costs a few multiply-adds more. Autograd's gelu keeps the
// slope for its backward, which is then one multiply instead of a second exp and erf.
struct GeluWithSlope {
  Tensor out, slope;
};
GeluWithSlope gelu_with_slope(const Tensor& a,
                              GeluApproximation approximate = GeluApproximation::none);

// Comparisons give bool masks.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, float b);
Tensor lt(const Tensor& a, float b);
Tensor gt(const Tensor& a, float b);
Tensor logical_not(const Tensor& mask);
Tensor logical_and(const Tensor& a, const Tensor& b);  // bool masks, broadcast together
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor isfinite(const Tensor& a);

// where(cond, a, b): a where cond is true, else b; all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// masked_fill: a with `value` wherever mask (bool, broadcast to a's shape) is true, as torch's:
// the mask marks what to replace. (Attention's masks mark the opposite, what a query may see:
// attention/core.h.)
Tensor masked_fill(const Tensor& a, const Tensor& mask, float value);
// tril / triu: keep the lower / upper triangle of the last two dims (diagonal k shifts it:
// tril keeps j <= i + k, triu keeps j >= i + k), zero the rest. Any dtype.
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor triu(const Tensor& a, int64_t diagonal = 0);

}  // namespace qkv::raw
