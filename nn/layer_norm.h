// layer_norm.h: LayerNorm over the last dim, with a learned scale and shift.
//
//   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias      over the last dim C
// var is the population variance (divide by C, not C - 1), as torch. weight starts at ones and
// bias at zeros, so a fresh LayerNorm only normalises (and draws no random numbers).
// It calls the fused layer_norm op (one pass forward, one backward: autograd/ops_norm.cpp),
// which tests/autograd/test_fused.cpp holds to this formula composed from primitives.
#pragma once

#include "nn/module.h"

namespace qkv::nn {

class LayerNorm : public UnaryModule {
 public:
  explicit LayerNorm(int64_t normalized_shape, double eps = 1e-5);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;
  int64_t normalized_shape;
  double eps;
};

}  // namespace qkv::nn
