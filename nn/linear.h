// linear.h: Linear, y = x W^T + b, with PyTorch's weight layout and initialisation.
//
//   x (..., in_features) -> y (..., out_features)
//   weight (out_features, in_features), bias (out_features)
// Both drawn uniform in (-1/sqrt(in), 1/sqrt(in)), weight first, then bias: what
// torch.nn.Linear draws (kaiming_uniform_ with a = sqrt(5) reduces to exactly this bound).
#pragma once

#include "nn/module.h"

namespace qkv::nn {

class Linear : public UnaryModule {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  Tensor weight, bias;  // bias is undefined when bias = false
  int64_t in_features, out_features;
};

}  // namespace qkv::nn
