// rms_norm.h: RMSNorm over the last dim (Zhang and Sennrich 2019; Llama, Qwen, Gemma).
//
//   y = x / sqrt(mean(x^2) + eps) * weight                        over the last dim C
// LayerNorm without the mean subtraction and without a bias: it rescales each vector to unit
// root-mean-square and lets weight (ones at first) choose the scale. Composed from
// differentiable primitives, so its backward is theirs (as torch.nn.RMSNorm, torch >= 2.4).
#pragma once

#include "nn/module.h"

namespace qkv::nn {

class RMSNorm : public UnaryModule {
 public:
  explicit RMSNorm(int64_t normalized_shape, double eps = 1e-6);
  Tensor forward(const Tensor& x) override;
  Tensor weight;
  int64_t normalized_shape;
  double eps;
};

}  // namespace qkv::nn
