// Exercise 02.1 (sum_to_shape): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: returns the gradient unreduced.
Tensor sum_to_shape_not_reduced(const Tensor& grad, const Shape& shape) {
  (void)shape;
  return grad;
}

// Wrong: sums the leading dims but not the stretched size-1 ones.
Tensor sum_to_shape_leading_only(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  while (g.dim() > static_cast<int64_t>(shape.size())) g = sum(g, 0);
  return g;
}

// Wrong: sums the size-1 dims without keeping them.
Tensor sum_to_shape_drops_dims(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  while (g.dim() > static_cast<int64_t>(shape.size())) g = sum(g, 0);
  for (int64_t d = g.dim() - 1; d >= 0; --d)
    if (shape[static_cast<size_t>(d)] == 1 && g.size(d) != 1) g = sum(g, d);
  return g;
}

}  // namespace qkv::exercises::wrong
