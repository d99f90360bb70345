// loss.h: the losses. cross_entropy is a fused op of the autograd floor (one formula, one
// place: autograd/ops_reduce.cpp); mse_loss is composed here.
#pragma once

#include "autograd/ops.h"

namespace qkv::nn {

using qkv::cross_entropy;  // cross_entropy(logits (N, V), targets (N,), ignore_index = -100)

// mse_loss: mean((input - target)^2), shapes broadcast as in torch.
inline Tensor mse_loss(const Tensor& input, const Tensor& target) {
  return mean(pow(input - target, 2.0f));
}

}  // namespace qkv::nn
