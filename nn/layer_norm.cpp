// layer_norm.cpp: normalise the last dim, then scale and shift (see layer_norm.h).
#include "nn/layer_norm.h"

namespace qkv::nn {

LayerNorm::LayerNorm(int64_t c, double e) : normalized_shape(c), eps(e) {
  check(c > 0, "LayerNorm", "a positive normalized_shape, got ", c);
  check(e > 0, "LayerNorm", "a positive eps, got ", e);
  weight = register_parameter("weight", ones({c}));
  bias = register_parameter("bias", zeros({c}));
}

Tensor LayerNorm::forward(const Tensor& x) {
  check(x.defined() && x.dim() >= 1 && x.size(-1) == normalized_shape, "LayerNorm",
        "an input whose last dim is ", normalized_shape, ", got shape ", shape_of(x));
  // One fused op (autograd/ops_norm.cpp); tests hold it to the composed formula in the header.
  return layer_norm(x, weight, bias, eps);
}

}  // namespace qkv::nn
