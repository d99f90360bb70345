// reduce.h: reductions over one dim, several dims, or every element, with keepdim.
//
// sum(x, 1) folds dim 1 away: (B, T, C) -> (B, C); with keepdim it stays as size 1:
// (B, 1, C), which still broadcasts against x. Sums accumulate in double, so a long row of
// floats loses no digits that PyTorch's pairwise float sum would keep.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace qkv::raw {

Tensor sum(const Tensor& a);  // every element -> a 0-d tensor
Tensor sum(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, int64_t dim, bool keepdim = false);
// var: sum((x - mean)^2) / (n - correction); correction 1 is torch's default (unbiased).
Tensor var(const Tensor& a, int64_t correction = 1);
Tensor var(const Tensor& a, int64_t dim, bool keepdim, int64_t correction = 1);

struct ValuesIndices {
  Tensor values;   // float32
  Tensor indices;  // int64: the first position of the extreme value along the dim
};
Tensor max(const Tensor& a);  // every element -> 0-d
Tensor min(const Tensor& a);
ValuesIndices max(const Tensor& a, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& a);  // index into the flattened tensor
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim = false);

// Sums a (broadcast) gradient back down to `shape`: the reverse of broadcasting.
Tensor sum_to_shape(const Tensor& a, const Shape& shape);

}  // namespace qkv::raw
