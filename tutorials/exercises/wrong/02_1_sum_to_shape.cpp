// Exercise 02.1 (sum_to_shape): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
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

// Wrong: sums only the first stretched size-1 dim (a break after the first).
Tensor sum_to_shape_first_stretched_only(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  while (g.dim() > static_cast<int64_t>(shape.size())) g = sum(g, 0);
  for (int64_t d = 0; d < g.dim(); ++d)
    if (shape[static_cast<size_t>(d)] == 1 && g.size(d) != 1) {
      g = sum(g, d, /*keepdim=*/true);
      break;
    }
  return g;
}

// Wrong: sums one leading dim (an if where a while belongs).
Tensor sum_to_shape_one_leading_dim(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  if (g.dim() > static_cast<int64_t>(shape.size())) g = sum(g, 0);
  for (int64_t d = 0; d < g.dim() && d < static_cast<int64_t>(shape.size()); ++d)
    if (shape[static_cast<size_t>(d)] == 1 && g.size(d) != 1) g = sum(g, d, /*keepdim=*/true);
  return g;
}

// Wrong: averages over the broadcast dims instead of summing.
Tensor sum_to_shape_mean(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  while (g.dim() > static_cast<int64_t>(shape.size())) g = mean(g, 0);
  for (int64_t d = 0; d < g.dim(); ++d)
    if (shape[static_cast<size_t>(d)] == 1 && g.size(d) != 1) g = mean(g, d, /*keepdim=*/true);
  return g;
}

// Wrong: reads grad's memory in order, as if it were contiguous (a transposed view is not).
Tensor sum_to_shape_reads_memory(const Tensor& grad, const Shape& shape) {
  return solution::sum_to_shape(memory_order(grad), shape);
}

// Wrong: sums each leading dim starting from its index 0 (grad[0] + grad[1] + ...): an empty
// batch has no index 0.
Tensor sum_to_shape_sum_from_index_0(const Tensor& grad, const Shape& shape) {
  Tensor g = grad;
  while (g.dim() > static_cast<int64_t>(shape.size())) {
    Tensor total = select(g, 0, 0);
    for (int64_t i = 1; i < g.size(0); ++i) total = total + select(g, 0, i);
    g = total;
  }
  return solution::sum_to_shape(g, shape);
}

const Catalogue<signature::sum_to_shape>& sum_to_shape_mistakes() {
  static const Catalogue<signature::sum_to_shape> c = {
      {"sum_to_shape_not_reduced", sum_to_shape_not_reduced,
       "sum the gradient over every dim that was broadcast (size 1 or missing in x)",
       "dx = grad summed over the leading dims x lacks and the dims where x has size 1"},
      {"sum_to_shape_leading_only", sum_to_shape_leading_only,
       "after the leading dims, also sum (keepdim) every dim where x has size 1",
       "dx[.., 0, ..] = sum over i of grad[.., i, ..] where x has size 1"},
      {"sum_to_shape_drops_dims", sum_to_shape_drops_dims,
       "keep the summed size-1 dims (keepdim=true): the result must have exactly x's shape",
       "dx has x's shape"},
      {"sum_to_shape_first_stretched_only", sum_to_shape_first_stretched_only,
       "sum every dim where x has size 1, not only the first: x (1, 3, 1) was stretched along "
       "dims 0 and 2",
       "dx[.., 0, ..] = sum over i of grad[.., i, ..], for each dim where x has size 1"},
      {"sum_to_shape_one_leading_dim", sum_to_shape_one_leading_dim,
       "sum away every leading dim x does not have (a loop, not one sum): (2, 3, 4) to (4,) "
       "sums two",
       "dx = grad summed over the leading grad.dim() - x.dim() dims"},
      {"sum_to_shape_mean", sum_to_shape_mean,
       "sum, do not average: every copy of x's element added its gradient",
       "dx = sum (not mean) of grad over the broadcast dims"},
      {"sum_to_shape_reads_memory", sum_to_shape_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "grad[i, j] is element (i, j) of grad as a tensor, not of its memory"},
      {"sum_to_shape_sum_from_index_0", sum_to_shape_sum_from_index_0,
       "sum with sum(g, 0), which gives zeros for an empty dim: a total started from g[0] has no "
       "g[0] to start from",
       "the sum over no elements is 0"}};
  return c;
}

}  // namespace qkv::exercises::wrong
