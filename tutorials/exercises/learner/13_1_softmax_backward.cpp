// Exercise 13.1, after lesson 13: softmax_backward.
//
// The backward of y = softmax(x) over the last dim (lesson 13), from y and dy alone:
//   dx_i = y_i (dy_i - sum_j dy_j y_j)        (per row)
// (The Jacobian is diag(y) - y y^T; multiplied by dy that is the line above.) y, dy (..., N).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 13.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  // Write your code here, in place of the line below.
  not_implemented("13.1", "softmax_backward", "dx = y * (dy - rowsum(dy * y))");
}

}  // namespace qkv::exercises
