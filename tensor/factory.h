// factory.h: making tensors: filled, ranged, identity, and from C++ values.
//
//   auto x = qkv::tensor({{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}});   // (2, 3)
//   auto ids = qkv::from_vector(std::vector<int64_t>{0, 4, 5}, {3});         // int64
#pragma once

#include <concepts>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "tensor/tensor.h"

namespace qkv {

Tensor zeros(const Shape& shape, Dtype dtype = Dtype::float32);
Tensor ones(const Shape& shape, Dtype dtype = Dtype::float32);
Tensor full(const Shape& shape, double value, Dtype dtype = Dtype::float32);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor scalar_tensor(float value);  // a 0-d tensor
// eye: the (n, m) identity (m = n when left out).
Tensor eye(int64_t n, int64_t m = -1);

// arange: [start, end) in steps. Integer arguments give int64 (torch.arange(5)); floating
// ones give float32 (torch.arange(0., 1., 0.25)), as in Python.
Tensor arange_int(int64_t start, int64_t end, int64_t step);
Tensor arange_float(double start, double end, double step);
template <class T>
requires std::is_arithmetic_v<T> Tensor arange(T end) {
  if constexpr (std::is_integral_v<T>)
    return arange_int(0, end, 1);
  else
    return arange_float(0.0, static_cast<double>(end), 1.0);
}
template <class T>
requires std::is_arithmetic_v<T> Tensor arange(T start, T end, T step = T(1)) {
  if constexpr (std::is_integral_v<T>)
    return arange_int(start, end, step);
  else
    return arange_float(start, end, step);
}

// From flat data and a shape (data.size() must equal the shape's numel).
Tensor from_vector(const std::vector<float>& data, const Shape& shape);
Tensor from_vector(const std::vector<int64_t>& data, const Shape& shape);
Tensor from_vector(const std::vector<bool>& data, const Shape& shape);

// From nested braces, like torch.tensor([[...], [...]]); rows must all have one length. The
// dtype follows the literals, as torch.tensor's does: whole numbers give int64
// (tensor({0, 1}), like torch.tensor([0, 1])), numbers with a point float32 (tensor({1., 2.})
// or {1.f, 2.f}), true/false bool. C++ needs one type per list: write {1., 2.}, not {1., 2}.
namespace detail {
// The flat values, in the dtype the element type C++ deduced gives, as a tensor of `shape`.
template <class T>
Tensor tensor_from(const std::vector<T>& flat, const Shape& shape) {
  if constexpr (std::is_same_v<T, bool>) {
    return from_vector(std::vector<bool>(flat.begin(), flat.end()), shape);
  } else if constexpr (std::is_integral_v<T>) {
    return from_vector(std::vector<int64_t>(flat.begin(), flat.end()), shape);
  } else {
    return from_vector(std::vector<float>(flat.begin(), flat.end()), shape);
  }
}
// The length every row must have, or a qkv::Error naming the first that differs.
void check_equal_lengths(size_t expected, size_t got, const char* what);
}  // namespace detail

template <class T>
requires std::is_arithmetic_v<T> Tensor tensor(std::initializer_list<T> values) {
  return detail::tensor_from(std::vector<T>(values), {static_cast<int64_t>(values.size())});
}
template <class T>
requires std::is_arithmetic_v<T> Tensor tensor(
    std::initializer_list<std::initializer_list<T>> values) {
  std::vector<T> flat;
  const size_t cols = values.size() == 0 ? 0 : values.begin()->size();
  for (const auto& row : values) {
    detail::check_equal_lengths(cols, row.size(), "rows");
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return detail::tensor_from(flat, {static_cast<int64_t>(values.size()), static_cast<int64_t>(cols)});
}
template <class T>
requires std::is_arithmetic_v<T> Tensor tensor(
    std::initializer_list<std::initializer_list<std::initializer_list<T>>> values) {
  std::vector<T> flat;
  const size_t rows = values.size() == 0 ? 0 : values.begin()->size();
  const size_t cols = rows == 0 ? 0 : values.begin()->begin()->size();
  for (const auto& plane : values) {
    detail::check_equal_lengths(rows, plane.size(), "planes' rows");
    for (const auto& row : plane) {
      detail::check_equal_lengths(cols, row.size(), "rows");
      flat.insert(flat.end(), row.begin(), row.end());
    }
  }
  return detail::tensor_from(flat, {static_cast<int64_t>(values.size()),
                                    static_cast<int64_t>(rows), static_cast<int64_t>(cols)});
}

}  // namespace qkv
