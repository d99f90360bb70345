// Exercise 18.2 (gelu_backward): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <cmath>
#include <numbers>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// The tanh form's derivative with u's slope given by `slope`, and with or without the product
// rule's second term.
Tensor gelu_tanh_slope(const Tensor& x, const Tensor& slope, bool second_term = true) {
  const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi)), c = 0.044715f;
  const Tensor t = tanh((x + x * x * x * c) * k);
  const Tensor first = (t + 1.0f) * 0.5f;
  return second_term ? first + x * (1.0f - t * t) * slope * 0.5f : first;
}

// Wrong: only 0.5 (1 + tanh(u)): the product rule's second term is missing.
Tensor gelu_backward_one_term(const Tensor& x, const Tensor& dy) {
  return dy * gelu_tanh_slope(x, x, /*second_term=*/false);
}

// Wrong: u's slope taken as sqrt(2 / pi), forgetting the cubic's derivative.
Tensor gelu_backward_no_cubic_slope(const Tensor& x, const Tensor& dy) {
  const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi));
  return dy * gelu_tanh_slope(x, ones_like(x) * k);
}

// Wrong: u's slope with 0.044715 x^2 where the derivative of x^3 gives 3 * 0.044715 x^2.
Tensor gelu_backward_cubic_slope_without_3(const Tensor& x, const Tensor& dy) {
  const float k = static_cast<float>(std::sqrt(2.0 / std::numbers::pi)), c = 0.044715f;
  return dy * gelu_tanh_slope(x, (x * x * c + 1.0f) * k);
}

// Wrong: the exact (erf) GELU's derivative, Phi(x) + x phi(x), where GPT-2 uses the tanh form.
Tensor gelu_backward_exact_form(const Tensor& x, const Tensor& dy) {
  const std::vector<float> xs = contiguous(x).to_vector<float>();
  std::vector<float> d(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double v = xs[i];
    d[i] = static_cast<float>(0.5 * (1 + std::erf(v / std::sqrt(2.0))) +
                              v * std::exp(-0.5 * v * v) / std::sqrt(2 * std::numbers::pi));
  }
  return dy * from_vector(d, x.shape());
}

// Wrong: returns gelu'(x) without multiplying by dy.
Tensor gelu_backward_forgets_dy(const Tensor& x, const Tensor& dy) {
  return solution::gelu_backward(x, ones_like(dy));
}

// Wrong: reads dy's memory in order, as if it were contiguous (a transposed view is not).
Tensor gelu_backward_reads_memory(const Tensor& x, const Tensor& dy) {
  return solution::gelu_backward(x, memory_order(dy));
}

// Wrong: works row by row and stacks the rows: stack() of no rows (an empty batch) is an
// error.
Tensor gelu_backward_per_row(const Tensor& x, const Tensor& dy) {
  if (x.dim() < 2) return solution::gelu_backward(x, dy);
  std::vector<Tensor> rows;
  for (int64_t r = 0; r < x.size(0); ++r)
    rows.push_back(solution::gelu_backward(select(x, 0, r), select(dy, 0, r)));
  return stack(rows, 0);
}

const Catalogue<signature::gelu_backward>& gelu_backward_mistakes() {
  static const Catalogue<signature::gelu_backward> c = {
      {"gelu_backward_one_term", gelu_backward_one_term,
       "gelu is a product, 0.5 x times (1 + tanh(u)): differentiate the tanh too (product rule)",
       "dx = dy (0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u')"},
      {"gelu_backward_no_cubic_slope", gelu_backward_no_cubic_slope,
       "u's derivative includes the cubic: u' = sqrt(2 / pi) (1 + 3 * 0.044715 x^2)",
       "u' = sqrt(2 / pi) (1 + 3 * 0.044715 x^2)"},
      {"gelu_backward_cubic_slope_without_3", gelu_backward_cubic_slope_without_3,
       "the derivative of x^3 is 3 x^2: u' = sqrt(2 / pi) (1 + 3 * 0.044715 x^2)",
       "u' = sqrt(2 / pi) (1 + 3 * 0.044715 x^2)"},
      {"gelu_backward_exact_form", gelu_backward_exact_form,
       "GPT-2's GELU is the tanh approximation: differentiate 0.5 x (1 + tanh(u)), not x Phi(x)",
       "gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))"},
      {"gelu_backward_forgets_dy", gelu_backward_forgets_dy,
       "multiply the derivative by the upstream gradient dy (the chain rule)",
       "dx = dy * gelu'(x)"},
      {"gelu_backward_reads_memory", gelu_backward_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "dy[i, j] is the element at row i, column j of dy as a tensor"},
      {"gelu_backward_per_row", gelu_backward_per_row,
       "work on the whole tensor at once (the formula is elementwise): a loop over the rows has "
       "nothing to stack when there are none",
       "dx = dy * gelu'(x), elementwise, for any shape, empty included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
