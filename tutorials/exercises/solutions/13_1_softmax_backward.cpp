// Exercise 13.1 (softmax_backward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/13_1_softmax_backward.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  return y * (dy - sum(dy * y, -1, /*keepdim=*/true));
}

}  // namespace qkv::exercises::solution
