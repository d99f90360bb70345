// softmax.h: the numerically stable softmax and log_softmax over any dim.
//
// softmax(x)_i = e^(x_i - m) / sum_j e^(x_j - m), with m = max_j x_j.
// Subtracting m changes nothing mathematically (it cancels) but keeps e^(...) <= 1, so a logit
// of 100 does not overflow float32's e^88 limit. A row that is all -inf (every key masked)
// gives NaN, exactly as torch.softmax does; the attention core decides what that row means.
#pragma once

#include "tensor/tensor.h"

namespace qkv::raw {

Tensor softmax(const Tensor& a, int64_t dim);
// log_softmax(x)_i = x_i - m - log(sum_j e^(x_j - m)): never takes the log of a rounded-to-0
// probability, which is why cross-entropy is built on it rather than on log(softmax(x)).
Tensor log_softmax(const Tensor& a, int64_t dim);
// softmax's backward: s * (dout - sum(dout * s)) along dim, given the softmax output s.
Tensor softmax_backward(const Tensor& s, const Tensor& dout, int64_t dim);

}  // namespace qkv::raw
