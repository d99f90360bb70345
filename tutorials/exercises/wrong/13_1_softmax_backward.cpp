// Exercise 13.1 (softmax_backward): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: drops the sum term: dx = y * dy.
Tensor softmax_backward_no_sum(const Tensor& y, const Tensor& dy) {
  return y * dy;
}

// Wrong: sums over the first dim instead of the row.
Tensor softmax_backward_wrong_axis(const Tensor& y, const Tensor& dy) {
  return y * (dy - sum(dy * y, 0, /*keepdim=*/true));
}

// Wrong: forgets the leading y: dx = dy - sum(dy * y).
Tensor softmax_backward_missing_y(const Tensor& y, const Tensor& dy) {
  return dy - sum(dy * y, -1, /*keepdim=*/true);
}

}  // namespace qkv::exercises::wrong
