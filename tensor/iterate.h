// iterate.h: walking strided tensors in row-major order (internal to the tensor floor).
//
// Every strided kernel (copy, elementwise with broadcasting, reductions) needs the same loop:
// visit each element of a shape, keeping one running offset per operand. `walk` is that loop,
// written once. It first merges neighbouring dims that are laid out back to back in every
// operand, so a contiguous (64, 4) walk is a single inner loop of 256, then runs an odometer
// over the outer dims and hands each innermost row to `inner(offsets, inner_strides, n)`.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace qkv {

template <size_t N, class Inner>
void walk(const Shape& shape_in, const std::array<const Shape*, N>& strides_in,
          std::array<int64_t, N> offs, Inner&& inner) {
  for (int64_t s : shape_in)
    if (s == 0) return;
  // Drop size-1 dims and merge dims that every operand steps through back to back.
  Shape shape;
  std::array<Shape, N> strides;
  for (size_t d = 0; d < shape_in.size(); ++d) {
    if (shape_in[d] == 1) continue;
    bool merge = !shape.empty();
    for (size_t k = 0; k < N && merge; ++k)
      merge = strides[k].back() == (*strides_in[k])[d] * shape_in[d];
    if (merge) {
      shape.back() *= shape_in[d];
      for (size_t k = 0; k < N; ++k) strides[k].back() = (*strides_in[k])[d];
    } else {
      shape.push_back(shape_in[d]);
      for (size_t k = 0; k < N; ++k) strides[k].push_back((*strides_in[k])[d]);
    }
  }
  std::array<int64_t, N> inner_strides{};
  if (shape.empty()) {  // a single element
    inner(offs, inner_strides, int64_t{1});
    return;
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  for (size_t k = 0; k < N; ++k) inner_strides[k] = strides[k][rank - 1];
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  while (true) {
    inner(offs, inner_strides, shape[rank - 1]);
    int64_t d = rank - 2;  // the odometer: bump the last outer dim, carry leftwards
    for (; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) offs[k] += strides[k][d];
      if (++idx[d] < shape[d]) break;
      for (size_t k = 0; k < N; ++k) offs[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

// Calls fn(storage_index) for each element of t in row-major order.
template <class Fn>
void for_each_offset(const Tensor& t, Fn&& fn) {
  walk<1>(t.shape(), {&t.strides()}, {t.storage_offset()},
          [&](std::array<int64_t, 1> o, std::array<int64_t, 1> s, int64_t n) {
            for (int64_t i = 0; i < n; ++i) fn(o[0] + i * s[0]);
          });
}

// Calls fn(storage_index) for each element of t in the order the elements lie in memory
// (dims sorted by decreasing stride). PyTorch's TensorIterator fills a tensor in this order,
// so random fills of a transposed tensor must follow it to draw the same numbers.
template <class Fn>
void for_each_offset_in_memory_order(const Tensor& t, Fn&& fn) {
  std::vector<size_t> order(t.shape().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return t.strides()[x] > t.strides()[y]; });
  Shape shape, strides;
  for (size_t i : order) {
    shape.push_back(t.shape()[i]);
    strides.push_back(t.strides()[i]);
  }
  walk<1>(shape, {&strides}, {t.storage_offset()},
          [&](std::array<int64_t, 1> o, std::array<int64_t, 1> s, int64_t n) {
            for (int64_t i = 0; i < n; ++i) fn(o[0] + i * s[0]);
          });
}

// Calls fn(in_offset, in_stride, out_offset, out_stride, n) once per "row" of `a` along `dim`:
// the n = a.size(dim) elements that a reduction over dim folds into one, or that softmax
// normalises together. `out` has a's shape, or a's shape with size 1 at dim (keepdim form).
template <class Fn>
void for_each_row(const Tensor& a, int64_t dim, const Tensor& out, Fn&& fn) {
  Shape outer = a.shape(), a_strides = a.strides(), o_strides = out.strides();
  const int64_t n = a.shape()[dim], in_stride = a.strides()[dim], out_stride = out.strides()[dim];
  outer.erase(outer.begin() + dim);
  a_strides.erase(a_strides.begin() + dim);
  o_strides.erase(o_strides.begin() + dim);
  walk<2>(outer, {&a_strides, &o_strides}, {a.storage_offset(), out.storage_offset()},
          [&](std::array<int64_t, 2> o, std::array<int64_t, 2> s, int64_t count) {
            for (int64_t i = 0; i < count; ++i)
              fn(o[0] + i * s[0], in_stride, o[1] + i * s[1], out_stride, n);
          });
}

}  // namespace qkv
