// softmax.cpp: one pass for the max, one for the sum of exponentials, one to write.
#include "tensor/softmax.h"

#include <cmath>

#include "tensor/iterate.h"

namespace qkv::raw {
namespace {

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
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  float* po = out.data_ptr();
  for_each_row(a, dim, out, [&](int64_t ia, int64_t sa, int64_t io, int64_t so, int64_t n) {
    const float* x = pa + ia;
    float* y = po + io;
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i * sa]);
    float s = 0;
    for (int64_t i = 0; i < n; ++i) {
      const float e = std::exp(x[i * sa] - m);
      s += e;
      if constexpr (!kLog) y[i * so] = e;
    }
    if constexpr (kLog) {
      const float log_s = std::log(s);
      for (int64_t i = 0; i < n; ++i) y[i * so] = x[i * sa] - m - log_s;
    } else {
      for (int64_t i = 0; i < n; ++i) y[i * so] /= s;  // divide, as torch does, not * (1/s)
    }
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
