// elementwise.cpp: each elementwise op's formula once, as a lambda, over the strided loops of
// map.h (GELU and its slope: gelu.cpp).
#include "tensor/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/map.h"

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

using namespace map_detail;

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
