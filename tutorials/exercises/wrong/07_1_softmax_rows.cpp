// Exercise 07.1 (softmax_rows): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: does not subtract the max: e^x overflows.
Tensor softmax_rows_no_max(const Tensor& x) {
  const Tensor e = exp(x);
  return e / sum(e, -1, /*keepdim=*/true);
}

// Wrong: normalises over the first dim instead of the last.
Tensor softmax_rows_wrong_axis(const Tensor& x) {
  const Tensor m = max(x, 0, /*keepdim=*/true).values;
  const Tensor e = exp(x - m);
  return e / sum(e, 0, /*keepdim=*/true);
}

// Wrong: divides by the sum over the whole tensor.
Tensor softmax_rows_global_sum(const Tensor& x) {
  const Tensor m = max(x, -1, /*keepdim=*/true).values;
  const Tensor e = exp(x - m);
  return e / sum(e);
}

}  // namespace qkv::exercises::wrong
