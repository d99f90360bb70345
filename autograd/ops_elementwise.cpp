// ops_elementwise.cpp: elementwise ops, each forward with its backward right under it.
//
// Broadcasting: when a (2, 3) meets a (3,), the gradient for the (3,) comes back here with the
// shape (2, 3); the engine sums it down to (3,). So every backward below states only the local
// derivative, at the output's shape.
#include <cmath>

#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/view.h"

namespace qkv {
namespace {
Tensor scalar(float v) {
  return scalar_tensor(v);
}
Tensor as_float(const Tensor& mask) {
  return raw::to(mask, Dtype::float32);
}
}  // namespace

// add: out = a + b            da = dout, db = dout
Tensor add(const Tensor& a, const Tensor& b) {
  return record("AddBackward0", raw::add(a, b), {a, b}, [](const Tensor& dout) -> Grads {
    return {dout, dout};
  });
}

// sub: out = a - b            da = dout, db = -dout
Tensor sub(const Tensor& a, const Tensor& b) {
  return record("SubBackward0", raw::sub(a, b), {a, b}, [](const Tensor& dout) -> Grads {
    return {dout, raw::neg(dout)};
  });
}

// mul: out = a * b            da = dout * b, db = dout * a
Tensor mul(const Tensor& a, const Tensor& b) {
  return record("MulBackward0", raw::mul(a, b), {a, b},
                [a = SavedTensor(a), b = SavedTensor(b), need_a = requires_grad(a),
                 need_b = requires_grad(b)](const Tensor& dout) -> Grads {
                  return {need_a ? raw::mul(dout, b.get()) : Tensor(),
                          need_b ? raw::mul(dout, a.get()) : Tensor()};
                });
}

// div: out = a / b            da = dout / b, db = -dout * a / b^2 = -dout * out / b
Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = raw::div(a, b);
  return record("DivBackward0", out, {a, b},
                [b = SavedTensor(b), out = SavedTensor(out),
                 need_b = requires_grad(b)](const Tensor& dout) -> Grads {
                  const Tensor da = raw::div(dout, b.get());
                  return {da, need_b ? raw::neg(raw::mul(da, out.get())) : Tensor()};
                });
}

// pow: out = a ^ b            da = dout * b * a^(b-1), db = dout * out * log(a)
Tensor pow(const Tensor& a, const Tensor& b) {
  Tensor out = raw::pow(a, b);
  return record(
      "PowBackward1", out, {a, b},
      [a = SavedTensor(a), b = SavedTensor(b), out = SavedTensor(out),
       need_b = requires_grad(b)](const Tensor& dout) -> Grads {
        const Tensor da =
            raw::mul(dout, raw::mul(b.get(), raw::pow(a.get(), raw::sub(b.get(), 1.0f))));
        return {da, need_b ? raw::mul(dout, raw::mul(out.get(), raw::log(a.get()))) : Tensor()};
      });
}

// pow by a number: out = a ^ e     da = dout * e * a^(e-1)
Tensor pow(const Tensor& a, float e) {
  return record(
      "PowBackward0", raw::pow(a, e), {a}, [a = SavedTensor(a), e](const Tensor& dout) -> Grads {
        const Tensor local =
            e == 2.0f ? raw::mul(a.get(), 2.0f) : raw::mul(raw::pow(a.get(), e - 1.0f), e);
        return {raw::mul(dout, local)};
      });
}

// Tensor-number arithmetic: the number is a constant, so only the tensor gets a gradient. The
// names are PyTorch's: it wraps the number as a tensor and records the tensor op (x + 1 is an
// AddBackward0), except for number - tensor (RsubBackward1) and number / tensor, which it
// computes as a reciprocal times the number, as below.
Tensor add(const Tensor& a, float b) {
  return record("AddBackward0", raw::add(a, b), {a},
                [](const Tensor& dout) -> Grads { return {dout}; });
}
Tensor sub(const Tensor& a, float b) {
  return record("SubBackward0", raw::sub(a, b), {a},
                [](const Tensor& dout) -> Grads { return {dout}; });
}
Tensor sub(float a, const Tensor& b) {  // out = a - b     db = -dout
  return record("RsubBackward1", raw::sub(a, b), {b},
                [](const Tensor& dout) -> Grads { return {raw::neg(dout)}; });
}
Tensor mul(const Tensor& a, float b) {  // da = dout * b
  return record("MulBackward0", raw::mul(a, b), {a},
                [b](const Tensor& dout) -> Grads { return {raw::mul(dout, b)}; });
}
Tensor div(const Tensor& a, float b) {  // da = dout / b
  return record("DivBackward0", raw::div(a, b), {a},
                [b](const Tensor& dout) -> Grads { return {raw::div(dout, b)}; });
}
// reciprocal: out = 1 / a      da = -dout * out^2
Tensor reciprocal(const Tensor& a) {
  Tensor out = raw::div(1.0f, a);
  return record("ReciprocalBackward0", out, {a},
                [out = SavedTensor(out)](const Tensor& dout) -> Grads {
                  return {raw::neg(raw::mul(dout, raw::mul(out.get(), out.get())))};
                });
}
// a / b = reciprocal(b) * a, as torch's Tensor.__rdiv__ computes it (the same rounding).
Tensor div(float a, const Tensor& b) {
  return mul(reciprocal(b), a);
}

// neg: out = -a               da = -dout
Tensor neg(const Tensor& a) {
  return record("NegBackward0", raw::neg(a), {a},
                [](const Tensor& dout) -> Grads { return {raw::neg(dout)}; });
}

// exp: out = e^a              da = dout * out   (exp saves its output, not its input)
Tensor exp(const Tensor& a) {
  Tensor out = raw::exp(a);
  return record("ExpBackward0", out, {a}, [out = SavedTensor(out)](const Tensor& dout) -> Grads {
    return {raw::mul(dout, out.get())};
  });
}

// log: out = ln a             da = dout / a
Tensor log(const Tensor& a) {
  return record(
      "LogBackward0", raw::log(a), {a},
      [a = SavedTensor(a)](const Tensor& dout) -> Grads { return {raw::div(dout, a.get())}; });
}

// sqrt: out = a^(1/2)         da = dout / (2 out)
Tensor sqrt(const Tensor& a) {
  Tensor out = raw::sqrt(a);
  return record("SqrtBackward0", out, {a}, [out = SavedTensor(out)](const Tensor& dout) -> Grads {
    return {raw::div(dout, raw::mul(out.get(), 2.0f))};
  });
}

// abs: out = |a|              da = dout * sign(a)   (0 at a = 0, as torch)
Tensor abs(const Tensor& a) {
  return record("AbsBackward0", raw::abs(a), {a},
                [a = SavedTensor(a)](const Tensor& dout) -> Grads {
                  return {raw::mul(dout, raw::sign(a.get()))};
                });
}

// tanh: out = tanh a          da = dout * (1 - out^2)
Tensor tanh(const Tensor& a) {
  Tensor out = raw::tanh(a);
  return record("TanhBackward0", out, {a}, [out = SavedTensor(out)](const Tensor& dout) -> Grads {
    return {raw::mul(dout, raw::sub(1.0f, raw::pow(out.get(), 2.0f)))};
  });
}

// sigmoid: out = 1 / (1 + e^-a)     da = dout * out * (1 - out)
Tensor sigmoid(const Tensor& a) {
  Tensor out = raw::sigmoid(a);
  return record("SigmoidBackward0", out, {a},
                [out = SavedTensor(out)](const Tensor& dout) -> Grads {
                  return {raw::mul(dout, raw::mul(out.get(), raw::sub(1.0f, out.get())))};
                });
}

// relu: out = max(a, 0)       da = dout where a > 0, else 0
Tensor relu(const Tensor& a) {
  Tensor out = raw::relu(a);
  return record("ReluBackward0", out, {a}, [out = SavedTensor(out)](const Tensor& dout) -> Grads {
    return {raw::mul(dout, as_float(raw::gt(out.get(), 0.0f)))};
  });
}

// gelu: out = a * Phi(a)      da = dout * (Phi(a) + a * phi(a))   (or the tanh form's slope)
// When a gradient will be wanted, the forward computes the slope alongside the output (same
// exp and erf) and keeps it instead of a: the backward is then one multiply, the same product
// raw::gelu_backward would compute, without a second pass of exponentials.
Tensor gelu(const Tensor& a, GeluApproximation approximate) {
  const bool keep_slope = is_grad_enabled() && requires_grad(a);
  raw::GeluWithSlope r = keep_slope ? raw::gelu_with_slope(a, approximate)
                                    : raw::GeluWithSlope{raw::gelu(a, approximate), Tensor()};
  return record("GeluBackward0", r.out, {a},
                [slope = std::move(r.slope)](const Tensor& dout) -> Grads {
                  return {raw::mul(dout, slope)};
                });
}

// clamp: out = min(max(a, lo), hi)     da = dout where lo <= a <= hi, else 0
Tensor clamp(const Tensor& a, std::optional<float> min, std::optional<float> max) {
  return record("ClampBackward1", raw::clamp(a, min, max), {a},
                [a = SavedTensor(a), min, max](const Tensor& dout) -> Grads {
                  Tensor pass = ones(a.get().shape());
                  if (min) pass = raw::mul(pass, as_float(raw::ge(a.get(), scalar(*min))));
                  if (max) pass = raw::mul(pass, as_float(raw::le(a.get(), scalar(*max))));
                  return {raw::mul(dout, pass)};
                });
}

// maximum: out = max(a, b)    the larger input gets dout; a tie splits it in half (as torch)
Tensor maximum(const Tensor& a, const Tensor& b) {
  return record("MaximumBackward0", raw::maximum(a, b), {a, b},
                [a = SavedTensor(a), b = SavedTensor(b)](const Tensor& dout) -> Grads {
                  const Tensor share =
                      raw::add(as_float(raw::gt(a.get(), b.get())),
                               raw::mul(as_float(raw::eq(a.get(), b.get())), 0.5f));
                  return {raw::mul(dout, share), raw::mul(dout, raw::sub(1.0f, share))};
                });
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return record("MinimumBackward0", raw::minimum(a, b), {a, b},
                [a = SavedTensor(a), b = SavedTensor(b)](const Tensor& dout) -> Grads {
                  const Tensor share =
                      raw::add(as_float(raw::lt(a.get(), b.get())),
                               raw::mul(as_float(raw::eq(a.get(), b.get())), 0.5f));
                  return {raw::mul(dout, share), raw::mul(dout, raw::sub(1.0f, share))};
                });
}

// where: out = cond ? a : b   da = dout where cond, db = dout elsewhere
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return record("WhereBackward0", raw::where(cond, a, b), {a, b},
                [cond = SavedTensor(cond)](const Tensor& dout) -> Grads {
                  const Tensor zero = scalar(0.0f);
                  return {raw::where(cond.get(), dout, zero), raw::where(cond.get(), zero, dout)};
                });
}

// masked_fill: out = mask ? value : a     da = dout where the mask is false, exactly 0 where
// it is true: a masked position has no say in the output, so it gets no gradient.
Tensor masked_fill(const Tensor& a, const Tensor& mask, float value) {
  return record("MaskedFillBackward0", raw::masked_fill(a, mask, value), {a},
                [mask = SavedTensor(mask)](const Tensor& dout) -> Grads {
                  return {raw::masked_fill(dout, mask.get(), 0.0f)};
                });
}

// tril / triu: the kept triangle passes dout through, the zeroed one gets 0.
Tensor tril(const Tensor& a, int64_t diagonal) {
  return record("TrilBackward0", raw::tril(a, diagonal), {a},
                [diagonal](const Tensor& dout) -> Grads { return {raw::tril(dout, diagonal)}; });
}
Tensor triu(const Tensor& a, int64_t diagonal) {
  return record("TriuBackward0", raw::triu(a, diagonal), {a},
                [diagonal](const Tensor& dout) -> Grads { return {raw::triu(dout, diagonal)}; });
}

Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
Tensor operator-(const Tensor& a) {
  return neg(a);
}
Tensor operator+(const Tensor& a, float b) {
  return add(a, b);
}
Tensor operator+(float a, const Tensor& b) {
  return add(b, a);
}
Tensor operator-(const Tensor& a, float b) {
  return sub(a, b);
}
Tensor operator-(float a, const Tensor& b) {
  return sub(a, b);
}
Tensor operator*(const Tensor& a, float b) {
  return mul(a, b);
}
Tensor operator*(float a, const Tensor& b) {
  return mul(b, a);
}
Tensor operator/(const Tensor& a, float b) {
  return div(a, b);
}
Tensor operator/(float a, const Tensor& b) {
  return div(a, b);
}

}  // namespace qkv
