// map.h: the loops behind every elementwise op of elementwise.cpp and gelu.cpp: out[i] = f(a[i])
// or f(a[i], b[i]) with PyTorch's broadcasting, split between threads where the work pays for
// it. Internal to the tensor floor.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "tensor/elementwise.h"
#include "tensor/iterate.h"
#include "tensor/thread_pool.h"
#include "tensor/vector_math.h"
#include "tensor/view.h"

namespace qkv::raw::map_detail {

// Math wants float32. Integer or bool inputs to comparisons are converted first.
inline Tensor as_float(const Tensor& a, std::string_view op, bool convert) {
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

inline Tensor scalar(float v) {
  Tensor t = Tensor::empty({}, Dtype::float32);
  *t.data_ptr() = v;
  return t;
}

}  // namespace qkv::raw::map_detail
