// softmax.cpp: one pass for the max, one for the sum of exponentials, one to write.
#include "tensor/softmax.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "tensor/iterate.h"
#include "tensor/thread_pool.h"

namespace qkv::raw {
namespace {

// e^x for the softmax, written so the compiler can run 8 or 16 of them at once (no calls, no
// branches): Cephes' expf, as in avx_mathfun. x = n ln2 + r with |r| <= ln2 / 2, then
// e^x = 2^n e^r with e^r from a degree-5 polynomial. Within 2 ulp of the exact value; torch's
// softmax likewise uses a vectorised exp (SLEEF's), not the C library's.
inline float exp_for_softmax(float x) {
  // Clamp to [-88, 88] first so the int conversion below is always defined (a NaN becomes -88
  // here and is put back at the end). Selected with bit masks rather than `?:` on floats, which
  // the compiler will not turn into vector code next to arithmetic that may raise a flag.
  const auto select = [](bool c, float a, float b) {
    const uint32_t mask = c ? 0xFFFFFFFFu : 0u;
    return std::bit_cast<float>((std::bit_cast<uint32_t>(a) & mask) |
                                (std::bit_cast<uint32_t>(b) & ~mask));
  };
  float xc = select(x > -88.0f, x, -88.0f);
  xc = select(xc < 88.0f, xc, 88.0f);
  // n = round(x / ln2) = floor(x / ln2 + 1/2), floor written as truncation then a fix for
  // negatives (std::floor would block vectorisation: it may raise a floating-point flag).
  const float t = xc * 1.44269504088896341f + 0.5f;
  int32_t n_int = static_cast<int32_t>(t);
  n_int -= static_cast<float>(n_int) > t ? 1 : 0;
  const float n = static_cast<float>(n_int);
  const float r = xc - n * 0.693359375f - n * -2.12194440e-4f;  // x - n ln2, ln2 in two parts
  const float r2 = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r2 + r + 1.0f;        // e^r
  const int32_t bits = (n_int + 127) << 23;  // 2^n as a float's bits
  const float y = er * std::bit_cast<float>(bits);
  // Far below the smallest normal float the answer is 0 (and a masked -inf score lands here:
  // its weight must be exactly 0); NaN stays NaN.
  return select(x >= -87.0f, y, select(x != x, x, 0.0f));
}

// y[i] = e^(x[i] - m) for a row, and the sum of them. Three plain loops the compiler turns
// into vector code (subtract, exp, then a sum over kLanes independent accumulators, whose
// order of additions depends only on n: the same result on any number of threads).
float exp_and_sum(const float* x, float m, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
  for (int64_t i = 0; i < n; ++i) y[i] = exp_for_softmax(y[i]);
  constexpr int kLanes = 16;
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += y[i + j];
  float s = 0.0f;
  for (int j = 0; j < kLanes; ++j) s += lane[j];
  for (; i < n; ++i) s += y[i];
  return s;
}

float row_max(const float* x, int64_t n) {
  constexpr int kLanes = 16;
  float lane[kLanes];
  for (float& l : lane) l = -INFINITY;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
  float m = -INFINITY;
  for (int j = 0; j < kLanes; ++j) m = std::max(m, lane[j]);
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// One contiguous row: m = max, s = sum e^(x - m), then y = e^(x - m) / s (or x - m - log s).
template <bool kLog>
void softmax_row(const float* x, float* y, int64_t n) {
  const float m = row_max(x, n);
  const float s = exp_and_sum(x, m, y, n);
  if constexpr (kLog) {
    const float log_s = std::log(s);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m - log_s;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] /= s;  // divide, as torch does, not * (1/s)
  }
}

template <bool kLog>
Tensor softmax_impl(const Tensor& a, int64_t dim_in, std::string_view op) {
  check(a.defined() && a.dtype() == Dtype::float32, op, "a float32 tensor, got ",
        a.defined() ? dtype_name(a.dtype()) : "an undefined one");
  const int64_t dim = wrap_dim(dim_in, a.dim(), op);
  Tensor out = Tensor::empty(a.shape());
  if (a.numel() == 0) return out;
  if (a.dim() == 0) {  // softmax of one number is 1 (log: 0), as in torch
    *out.data_ptr() = kLog ? 0.0f : 1.0f;
    return out;
  }
  // The common case, softmax over the last dim of a contiguous tensor (attention's rows):
  // rows are independent, so they are split statically over the thread pool.
  if (dim == a.dim() - 1 && a.is_contiguous()) {
    const int64_t n = a.size(dim), rows = a.numel() / n;
    const float* x = a.data_ptr();
    float* y = out.data_ptr();
    const int64_t parts = a.numel() >= (1 << 15) ? std::min<int64_t>(rows, num_threads()) : 1;
    parallel_for(parts, [&](int64_t part) {
      const int64_t begin = rows * part / parts, end = rows * (part + 1) / parts;
      for (int64_t r = begin; r < end; ++r) softmax_row<kLog>(x + r * n, y + r * n, n);
    });
    return out;
  }
  // Any other dim or layout: the same row function on a contiguous copy of each row.
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  float* po = out.data_ptr();
  std::vector<float> row_in, row_out;
  for_each_row(a, dim, out, [&](int64_t ia, int64_t sa, int64_t io, int64_t so, int64_t n) {
    row_in.resize(static_cast<size_t>(n));
    row_out.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) row_in[static_cast<size_t>(i)] = pa[ia + i * sa];
    softmax_row<kLog>(row_in.data(), row_out.data(), n);
    for (int64_t i = 0; i < n; ++i) po[io + i * so] = row_out[static_cast<size_t>(i)];
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& a, int64_t dim) {
  return softmax_impl<false>(a, dim, "softmax");
}
Tensor log_softmax(const Tensor& a, int64_t dim) {
  return softmax_impl<true>(a, dim, "log_softmax");
}

}  // namespace qkv::raw
