// elementwise.cpp: one generic strided loop per arity, and each op's formula once, as a lambda.
#include "tensor/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/iterate.h"
#include "tensor/thread_pool.h"
#include "tensor/simd/exp.h"
#include "tensor/view.h"

namespace qkv {

Shape broadcast_shapes(const Shape& a, const Shape& b, std::string_view op) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {  // align from the right
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    check(da == db || da == 1 || db == 1, op, "shapes that broadcast, got ", a, " and ", b);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace qkv

namespace qkv::raw {
namespace {

// Math wants float32. Integer or bool inputs to comparisons are converted first.
Tensor as_float(const Tensor& a, std::string_view op, bool convert) {
  if (a.dtype() == Dtype::float32) return a;
  check(convert, op, "a float32 tensor, got ", dtype_name(a.dtype()));
  return to(a, Dtype::float32);
}

// out[i] = f(a[i]); a strided, out fresh and contiguous. Contiguous a is split between threads
// from parallel_from elements.
template <class F>
Tensor map_unary(const Tensor& a_in, std::string_view op, F f,
                 int64_t parallel_from = kParallelElements) {
  const Tensor a = as_float(a_in, op, false);
  using R = decltype(f(0.0f));
  Tensor out = Tensor::empty(a.shape(), dtype_of<R>());
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  R* po = out.data_ptr<R>();
  if (a.is_contiguous()) {  // the common case: one flat loop, no walk
    const float* x = pa + a.storage_offset();
    parallel_ranges(a.numel(), a.numel() >= parallel_from, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = f(x[i]);
    });
    return out;
  }
  int64_t next = 0;  // out is contiguous and walked in row-major order: a running index
  walk<1>(a.shape(), {&a.strides()}, {a.storage_offset()},
          [&](std::array<int64_t, 1> o, std::array<int64_t, 1> s, int64_t n) {
            const float* x = pa + o[0];
            R* y = po + next;
            if (s[0] == 1) {
              for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
            } else {
              for (int64_t i = 0; i < n; ++i) y[i] = f(x[i * s[0]]);
            }
            next += n;
          });
  return out;
}

// map_unary for an f that costs far more than a multiply-add, split between threads from fewer
// elements: waking a worker costs microseconds, which a loop of calls into the C library's
// exp, log, tanh or pow (one call per float) repays from a few thousand floats on, and a loop
// of the vectorised exp, erf and tanh of vector_math.h (no calls) from several thousand
// (bench/notes/2026-12-06-memory-and-threads.md).
constexpr int64_t kParallelLibmElements = int64_t{1} << 11;
constexpr int64_t kParallelVectorMathElements = int64_t{1} << 13;
template <class F>
Tensor map_libm(const Tensor& a, std::string_view op, F f) {
  return map_unary(a, op, f, kParallelLibmElements);
}
template <class F>
Tensor map_vector_math(const Tensor& a, std::string_view op, F f) {
  return map_unary(a, op, f, kParallelVectorMathElements);
}

// Whether shape b, its leading 1s left out, is the end of shape a: then b broadcast to a's
// shape is b's elements repeated, one whole copy after another.
inline bool ends_with(const Shape& a, const Shape& b) {
  size_t first = 0;
  while (first < b.size() && b[first] == 1) ++first;
  const size_t n = b.size() - first;
  return n <= a.size() && std::equal(b.begin() + static_cast<std::ptrdiff_t>(first), b.end(),
                                     a.end() - static_cast<std::ptrdiff_t>(n));
}

// out = f(a, b) with broadcasting. The inner loop is specialised for the common layouts (both
// contiguous and of one shape, or b a block repeated along a) so the compiler can vectorise
// them; other layouts walk both operands through their strides.
template <class F>
Tensor map_binary(const Tensor& a_in, const Tensor& b_in, std::string_view op, F f,
                  bool convert = false) {
  check(a_in.defined() && b_in.defined(), op, "defined tensors, got an undefined one");
  const Tensor a = as_float(a_in, op, convert), b = as_float(b_in, op, convert);
  using R = decltype(f(0.0f, 0.0f));
  if (a.shape() == b.shape() && a.is_contiguous() && b.is_contiguous()) {
    // The common case, without broadcasting or strides: one flat loop.
    Tensor out = Tensor::empty(a.shape(), dtype_of<R>());
    const float* x = a.data_ptr();
    const float* y = b.data_ptr();
    R* z = out.data_ptr<R>();
    parallel_chunks(a.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = f(x[i], y[i]);
    });
    return out;
  }
  // The next most common: a contiguous a with a contiguous b that is the end of a's shape
  // (leading 1s aside), such as a bias (C,) or (1, C) on (..., C), or the position embeddings
  // (T, C) on a batch (B, T, C). Block by block, b's elements reused for each block of a.
  if (a.is_contiguous() && b.is_contiguous() && a.dim() >= 1 && b.dim() >= 1 &&
      b.dim() <= a.dim() && b.size(-1) == a.size(-1) && b.numel() > 0 &&
      ends_with(a.shape(), b.shape())) {
    Tensor out = Tensor::empty(a.shape(), dtype_of<R>());
    const float* x = a.data_ptr();
    const float* y = b.data_ptr();
    R* z = out.data_ptr<R>();
    const int64_t C = b.numel(), rows = a.numel() / C;
    parallel_chunks(a.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin / C; r < rows && r * C < end; ++r) {
        const int64_t lo = std::max(begin, r * C) - r * C, hi = std::min(end, (r + 1) * C) - r * C;
        for (int64_t j = lo; j < hi; ++j) z[r * C + j] = f(x[r * C + j], y[j]);
      }
    });
    return out;
  }
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  const Tensor ea = expand(a, shape), eb = expand(b, shape);
  Tensor out = Tensor::empty(shape, dtype_of<R>());
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  const float* pb = reinterpret_cast<const float*>(b.impl().storage->data());
  R* po = out.data_ptr<R>();
  int64_t next = 0;
  walk<2>(shape, {&ea.strides(), &eb.strides()}, {ea.storage_offset(), eb.storage_offset()},
          [&](std::array<int64_t, 2> o, std::array<int64_t, 2> s, int64_t n) {
            const float* x = pa + o[0];
            const float* y = pb + o[1];
            R* z = po + next;
            if (s[0] == 1 && s[1] == 1) {
              for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
            } else if (s[0] == 1 && s[1] == 0) {
              const float yv = *y;
              for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], yv);
            } else if (s[0] == 0 && s[1] == 1) {
              const float xv = *x;
              for (int64_t i = 0; i < n; ++i) z[i] = f(xv, y[i]);
            } else {
              for (int64_t i = 0; i < n; ++i) z[i] = f(x[i * s[0]], y[i * s[1]]);
            }
            next += n;
          });
  return out;
}

Tensor scalar(float v) {
  Tensor t = Tensor::empty({}, Dtype::float32);
  *t.data_ptr() = v;
  return t;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return map_binary(a, b, "add", std::plus<float>{});
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return map_binary(a, b, "sub", std::minus<float>{});
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return map_binary(a, b, "mul", std::multiplies<float>{});
}
Tensor div(const Tensor& a, const Tensor& b) {
  return map_binary(a, b, "div", std::divides<float>{});
}
Tensor pow(const Tensor& a, const Tensor& b) {
  return map_binary(a, b, "pow", [](float x, float y) { return std::pow(x, y); });
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  // NaN propagates, as in torch.maximum.
  return map_binary(a, b, "maximum", [](float x, float y) {
    return std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y);
  });
}
Tensor minimum(const Tensor& a, const Tensor& b) {
  return map_binary(a, b, "minimum", [](float x, float y) {
    return std::isnan(x) || std::isnan(y) ? NAN : (x < y ? x : y);
  });
}
Tensor add(const Tensor& a, float b) {
  return add(a, scalar(b));
}
Tensor sub(const Tensor& a, float b) {
  return sub(a, scalar(b));
}
Tensor sub(float a, const Tensor& b) {
  return sub(scalar(a), b);
}
Tensor mul(const Tensor& a, float b) {
  return mul(a, scalar(b));
}
Tensor div(const Tensor& a, float b) {
  return div(a, scalar(b));
}
Tensor div(float a, const Tensor& b) {
  return div(scalar(a), b);
}
Tensor pow(const Tensor& a, float e) {
  if (e == 2.0f) return map_unary(a, "pow", [](float x) { return x * x; });
  return map_libm(a, "pow", [e](float x) { return std::pow(x, e); });
}

Tensor neg(const Tensor& a) {
  return map_unary(a, "neg", [](float x) { return -x; });
}
Tensor exp(const Tensor& a) {
  return map_libm(a, "exp", [](float x) { return std::exp(x); });
}
Tensor log(const Tensor& a) {
  return map_libm(a, "log", [](float x) { return std::log(x); });
}
Tensor sqrt(const Tensor& a) {
  return map_unary(a, "sqrt", [](float x) { return std::sqrt(x); });
}
Tensor abs(const Tensor& a) {
  return map_unary(a, "abs", [](float x) { return std::fabs(x); });
}
Tensor tanh(const Tensor& a) {
  return map_libm(a, "tanh", [](float x) { return std::tanh(x); });
}
Tensor sigmoid(const Tensor& a) {
  return map_libm(a, "sigmoid", [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}
Tensor relu(const Tensor& a) {
  return map_unary(a, "relu", [](float x) { return x < 0.0f ? 0.0f : x; });
}
Tensor sign(const Tensor& a) {
  return map_unary(a, "sign", [](float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); });
}
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
Tensor clamp(const Tensor& a, std::optional<float> min, std::optional<float> max) {
  check(!min || !max || *min <= *max, "clamp", "min <= max, got min ", min.value_or(0), " and max ",
        max.value_or(0));
  const float lo = min.value_or(-INFINITY), hi = max.value_or(INFINITY);
  return map_unary(a, "clamp", [lo, hi](float x) { return x < lo ? lo : (x > hi ? hi : x); });
}

Tensor eq(const Tensor& a, const Tensor& b) {
  return map_binary(
      a, b, "eq", [](float x, float y) { return x == y; }, true);
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return map_binary(
      a, b, "ne", [](float x, float y) { return x != y; }, true);
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return map_binary(
      a, b, "lt", [](float x, float y) { return x < y; }, true);
}
Tensor le(const Tensor& a, const Tensor& b) {
  return map_binary(
      a, b, "le", [](float x, float y) { return x <= y; }, true);
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return map_binary(
      a, b, "gt", [](float x, float y) { return x > y; }, true);
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return map_binary(
      a, b, "ge", [](float x, float y) { return x >= y; }, true);
}
Tensor eq(const Tensor& a, float b) {
  return eq(a, scalar(b));
}
Tensor lt(const Tensor& a, float b) {
  return lt(a, scalar(b));
}
Tensor gt(const Tensor& a, float b) {
  return gt(a, scalar(b));
}
Tensor logical_not(const Tensor& mask) {
  check(mask.dtype() == Dtype::boolean, "logical_not", "a bool tensor, got ",
        dtype_name(mask.dtype()));
  return eq(mask, 0.0f);
}
// Through float 0/1: masks are built once per shape, so clarity wins over a dedicated kernel.
Tensor logical_and(const Tensor& a, const Tensor& b) {
  check(a.dtype() == Dtype::boolean && b.dtype() == Dtype::boolean, "logical_and",
        "bool tensors, got ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  return gt(mul(to(a, Dtype::float32), to(b, Dtype::float32)), 0.0f);
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
  check(a.dtype() == Dtype::boolean && b.dtype() == Dtype::boolean, "logical_or",
        "bool tensors, got ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  return gt(add(to(a, Dtype::float32), to(b, Dtype::float32)), 0.0f);
}
Tensor isfinite(const Tensor& a) {
  return map_unary(a, "isfinite", [](float x) { return std::isfinite(x); });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check(cond.dtype() == Dtype::boolean, "where", "a bool condition, got ",
        dtype_name(cond.dtype()));
  check(a.dtype() == Dtype::float32 && b.dtype() == Dtype::float32, "where", "float32 values, got ",
        dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  const Shape shape =
      broadcast_shapes(cond.shape(), broadcast_shapes(a.shape(), b.shape(), "where"), "where");
  const Tensor c = expand(cond, shape), x = expand(a, shape), y = expand(b, shape);
  Tensor out = Tensor::empty(shape);
  float* po = out.data_ptr();
  const bool* pc = reinterpret_cast<const bool*>(c.impl().storage->data());
  const float* px = reinterpret_cast<const float*>(x.impl().storage->data());
  const float* py = reinterpret_cast<const float*>(y.impl().storage->data());
  int64_t next = 0;
  walk<3>(shape, {&c.strides(), &x.strides(), &y.strides()},
          {c.storage_offset(), x.storage_offset(), y.storage_offset()},
          [&](std::array<int64_t, 3> o, std::array<int64_t, 3> s, int64_t n) {
            for (int64_t i = 0; i < n; ++i)
              po[next + i] = pc[o[0] + i * s[0]] ? px[o[1] + i * s[1]] : py[o[2] + i * s[2]];
            next += n;
          });
  return out;
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, float value) {
  check(mask.dtype() == Dtype::boolean, "masked_fill", "a bool mask, got ",
        dtype_name(mask.dtype()));
  check(broadcast_shapes(a.shape(), mask.shape(), "masked_fill") == a.shape(), "masked_fill",
        "a mask that broadcasts to the input's shape ", a.shape(), ", got ", mask.shape());
  return where(mask, scalar(value), a);
}

namespace {
// Zeroes, in a fresh copy, every (i, j) of the last two dims where `drop(i, j)` holds.
template <class Drop>
Tensor keep_triangle(const Tensor& a, std::string_view op, Drop drop) {
  check(a.dim() >= 2, op, "a tensor with at least 2 dims, got shape ", a.shape());
  Tensor out = clone(a);
  const int64_t rows = a.size(-2), cols = a.size(-1),
                es = static_cast<int64_t>(element_size(a.dtype()));
  const int64_t matrices = rows * cols == 0 ? 0 : out.numel() / (rows * cols);
  std::byte* base = out.impl().storage->data();
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (drop(i, j)) std::memset(base + ((m * rows + i) * cols + j) * es, 0, es);
  return out;
}
}  // namespace

Tensor tril(const Tensor& a, int64_t k) {
  return keep_triangle(a, "tril", [k](int64_t i, int64_t j) { return j > i + k; });
}
Tensor triu(const Tensor& a, int64_t k) {
  return keep_triangle(a, "triu", [k](int64_t i, int64_t j) { return j < i + k; });
}

}  // namespace qkv::raw
