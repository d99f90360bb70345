// Exercise 18.1 (layer_norm_backward): the catalogue of known mistakes, each a whole function with
// one mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: does not sum dw and db over the rows.
LayerNormGrads layer_norm_backward_dw_not_reduced(const Tensor& x, const Tensor& w,
                                                  const Tensor& dy) {
  const Tensor mean_x = mean(x, -1, /*keepdim=*/true);
  const Tensor rstd = 1.0f / sqrt(var(x, -1, /*keepdim=*/true, /*correction=*/0) + 1e-5f);
  const Tensor norm = (x - mean_x) * rstd, dnorm = dy * w;
  const Tensor dx = (dnorm - mean(dnorm, -1, /*keepdim=*/true) -
                     norm * mean(dnorm * norm, -1, /*keepdim=*/true)) *
                    rstd;
  return {dx, dy * norm, dy};
}

// Wrong: forgets that every x moves the mean and variance: dx = dnorm * rstd.
LayerNormGrads layer_norm_backward_no_mean_terms(const Tensor& x, const Tensor& w,
                                                 const Tensor& dy) {
  const Tensor mean_x = mean(x, -1, /*keepdim=*/true);
  const Tensor rstd = 1.0f / sqrt(var(x, -1, /*keepdim=*/true, /*correction=*/0) + 1e-5f);
  const Tensor norm = (x - mean_x) * rstd;
  return {dy * w * rstd, sum(dy * norm, 0), sum(dy, 0)};
}

// Wrong: uses the sample variance (C - 1), as torch.var does by default.
LayerNormGrads layer_norm_backward_unbiased_var(const Tensor& x, const Tensor& w,
                                                const Tensor& dy) {
  const Tensor mean_x = mean(x, -1, /*keepdim=*/true);
  const Tensor rstd = 1.0f / sqrt(var(x, -1, /*keepdim=*/true) + 1e-5f);
  const Tensor norm = (x - mean_x) * rstd, dnorm = dy * w;
  const Tensor dx = (dnorm - mean(dnorm, -1, /*keepdim=*/true) -
                     norm * mean(dnorm * norm, -1, /*keepdim=*/true)) *
                    rstd;
  return {dx, sum(dy * norm, 0), sum(dy, 0)};
}

// Wrong: adds eps after the square root: rstd = 1 / (sqrt(var) + eps).
LayerNormGrads layer_norm_backward_eps_outside_sqrt(const Tensor& x, const Tensor& w,
                                                    const Tensor& dy) {
  const Tensor mean_x = mean(x, -1, /*keepdim=*/true);
  const Tensor rstd = 1.0f / (sqrt(var(x, -1, /*keepdim=*/true, /*correction=*/0)) + 1e-5f);
  const Tensor norm = (x - mean_x) * rstd, dnorm = dy * w;
  const Tensor dx = (dnorm - mean(dnorm, -1, /*keepdim=*/true) -
                     norm * mean(dnorm * norm, -1, /*keepdim=*/true)) *
                    rstd;
  return {dx, sum(dy * norm, 0), sum(dy, 0)};
}

// Wrong: the variance as E[x^2] - E[x]^2, which loses every digit in float32 when the mean is
// large against the spread.
LayerNormGrads layer_norm_backward_var_from_moments(const Tensor& x, const Tensor& w,
                                                    const Tensor& dy) {
  const Tensor mean_x = mean(x, -1, /*keepdim=*/true);
  const Tensor variance = relu(mean(x * x, -1, /*keepdim=*/true) - mean_x * mean_x);
  const Tensor rstd = 1.0f / sqrt(variance + 1e-5f);
  const Tensor norm = (x - mean_x) * rstd, dnorm = dy * w;
  const Tensor dx = (dnorm - mean(dnorm, -1, /*keepdim=*/true) -
                     norm * mean(dnorm * norm, -1, /*keepdim=*/true)) *
                    rstd;
  return {dx, sum(dy * norm, 0), sum(dy, 0)};
}

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
LayerNormGrads layer_norm_backward_reads_memory(const Tensor& x, const Tensor& w,
                                                const Tensor& dy) {
  return solution::layer_norm_backward(memory_order(x), w, dy);
}

// Wrong: sums dw and db over the rows starting from row 0: an empty batch has no row 0.
LayerNormGrads layer_norm_backward_sum_from_row_0(const Tensor& x, const Tensor& w,
                                                  const Tensor& dy) {
  const LayerNormGrads g = solution::layer_norm_backward(x, w, dy);
  const Tensor norm = (x - mean(x, -1, /*keepdim=*/true)) /
                      sqrt(var(x, -1, /*keepdim=*/true, /*correction=*/0) + 1e-5f);
  const Tensor dw_rows = dy * norm;
  Tensor dw = select(dw_rows, 0, 0), db = select(dy, 0, 0);
  for (int64_t r = 1; r < x.size(0); ++r) {
    dw = dw + select(dw_rows, 0, r);
    db = db + select(dy, 0, r);
  }
  return {g.dx, dw, db};
}

// Wrong: dnorm = dy, forgetting that the output is norm * w.
LayerNormGrads layer_norm_backward_forgets_w(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const LayerNormGrads g = solution::layer_norm_backward(x, ones_like(w), dy);
  const LayerNormGrads right = solution::layer_norm_backward(x, w, dy);
  return {g.dx, right.dw, right.db};
}

const Catalogue<signature::layer_norm_backward>& layer_norm_backward_mistakes() {
  static const Catalogue<signature::layer_norm_backward> c = {
      {"layer_norm_backward_dw_not_reduced", layer_norm_backward_dw_not_reduced,
       "sum dw and db over the rows: w and b are shared by every row (shape (C,))",
       "dw = sum over rows of dy * norm, db = sum over rows of dy"},
      {"layer_norm_backward_no_mean_terms", layer_norm_backward_no_mean_terms,
       "every x moves its row's mean and variance: subtract mean(dnorm) and norm * "
       "mean(dnorm * norm)",
       "dx = (dnorm - mean(dnorm) - norm * mean(dnorm * norm)) * rstd"},
      {"layer_norm_backward_unbiased_var", layer_norm_backward_unbiased_var,
       "LayerNorm uses the population variance (divide by C, correction 0), not C - 1",
       "var = mean((x - mean)^2)"},
      {"layer_norm_backward_eps_outside_sqrt", layer_norm_backward_eps_outside_sqrt,
       "eps goes inside the square root: rstd = 1 / sqrt(var + eps); it matters when a row's "
       "variance is near eps",
       "rstd = 1 / sqrt(var + eps)"},
      {"layer_norm_backward_var_from_moments", layer_norm_backward_var_from_moments,
       "compute the variance from x - mean (two passes), not as E[x^2] - E[x]^2: in float32 "
       "that subtraction loses every digit when the mean is large against the spread",
       "var = mean((x - mean)^2)"},
      {"layer_norm_backward_reads_memory", layer_norm_backward_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "x[i, j] is element (i, j) of x as a tensor, not of its memory"},
      {"layer_norm_backward_sum_from_row_0", layer_norm_backward_sum_from_row_0,
       "sum dw and db with sum(..., 0), which gives zeros for no rows: a total started from row "
       "0 has no row 0",
       "dw = sum over rows of dy * norm (zeros for no rows)"},
      {"layer_norm_backward_forgets_w", layer_norm_backward_forgets_w,
       "the output is norm * w + b: the gradient reaching norm is dnorm = dy * w",
       "dnorm = dy * w"}};
  return c;
}

}  // namespace qkv::exercises::wrong
