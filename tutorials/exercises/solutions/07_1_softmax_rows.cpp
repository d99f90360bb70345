// Exercise 07.1 (softmax_rows), a reference solution. Try the exercise first:
// tutorials/exercises/learner/07_1_softmax_rows.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor softmax_rows(const Tensor& x) {
  const Tensor m = max(x, -1, /*keepdim=*/true).values;  // (..., 1)
  const Tensor e = exp(x - m);
  return e / sum(e, -1, /*keepdim=*/true);
}

}  // namespace qkv::exercises::solution
