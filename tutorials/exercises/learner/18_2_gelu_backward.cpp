// Exercise 18.2, after lesson 18: gelu_backward.
//
// The backward of GPT-2's GELU, the tanh form (lesson 18), pointwise, x and dy of any shape:
//   gelu(x) = 0.5 x (1 + tanh(u)),   u = sqrt(2 / pi) (x + 0.044715 x^3)
//   dx = dy * (0.5 (1 + tanh(u)) + 0.5 x (1 - tanh(u)^2) sqrt(2 / pi) (1 + 3 * 0.044715 x^2))
// The product rule gives the two terms: the first differentiates x, the second the tanh (its
// derivative is 1 - tanh^2, times u's derivative).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 18.2
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  // Write your code here, in place of the line below.
  not_implemented("18.2", "gelu_backward", "dy times the derivative of 0.5 x (1 + tanh(u))");
}

}  // namespace qkv::exercises
