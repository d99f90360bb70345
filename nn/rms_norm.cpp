// rms_norm.cpp: divide by the root mean square, then scale (see rms_norm.h).
#include "nn/rms_norm.h"

namespace qkv::nn {

RMSNorm::RMSNorm(int64_t c, double e) : normalized_shape(c), eps(e) {
  check(c > 0, "RMSNorm", "a positive normalized_shape, got ", c);
  check(e > 0, "RMSNorm", "a positive eps, got ", e);
  weight = register_parameter("weight", ones({c}));
}

Tensor RMSNorm::forward(const Tensor& x) {
  check(x.defined() && x.dim() >= 1 && x.size(-1) == normalized_shape, "RMSNorm",
        "an input whose last dim is ", normalized_shape, ", got shape ", shape_of(x));
  const Tensor rms = sqrt(mean(x * x, -1, true) + static_cast<float>(eps));  // (..., 1)
  return x / rms * weight;
}

}  // namespace qkv::nn
