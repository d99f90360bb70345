// Exercise 18.2 (gelu_backward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/18_2_gelu_backward.cpp states the task.
#include <cmath>
#include <numbers>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor gelu_backward(const Tensor& x, const Tensor& dy) {
  const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi)), c = 0.044715f;
  const Tensor t = tanh((x + x * x * x * c) * k);
  const Tensor du = (x * x * (3 * c) + 1.0f) * k;
  return dy * ((t + 1.0f) * 0.5f + x * (1.0f - t * t) * du * 0.5f);
}

}  // namespace qkv::exercises::solution
