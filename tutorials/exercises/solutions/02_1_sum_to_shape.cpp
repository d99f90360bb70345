// Exercise 02.1 (sum_to_shape), a reference solution. Try the exercise first:
// tutorials/exercises/learner/02_1_sum_to_shape.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  while (g.dim() > static_cast<int64_t>(shape.size())) g = sum(g, 0);  // leading dims x lacks
  for (int64_t d = 0; d < g.dim(); ++d)
    if (shape[static_cast<size_t>(d)] == 1 && g.size(d) != 1) g = sum(g, d, /*keepdim=*/true);
  return g;
}

}  // namespace qkv::exercises::solution
