// Exercise 23.1 (rms_norm_backward): the catalogue of known mistakes, each a whole function with
// one mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: dx = dy * w * rstd: forgets that every x moves its row's rstd.
RMSNormGrads rms_norm_backward_no_rstd_term(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const Tensor rstd = 1.0f / sqrt(mean(x * x, -1, /*keepdim=*/true) + 1e-6f);
  return {dy * w * rstd, sum(dy * x * rstd, 0)};
}

// Wrong: does not sum dw over the rows.
RMSNormGrads rms_norm_backward_dw_not_reduced(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const RMSNormGrads g = solution::rms_norm_backward(x, w, dy);
  const Tensor rstd = 1.0f / sqrt(mean(x * x, -1, /*keepdim=*/true) + 1e-6f);
  return {g.dx, dy * x * rstd};
}

// Wrong: adds eps after the square root: rstd = 1 / (sqrt(mean(x^2)) + eps).
RMSNormGrads rms_norm_backward_eps_outside_sqrt(const Tensor& x, const Tensor& w,
                                                const Tensor& dy) {
  const Tensor rstd = 1.0f / (sqrt(mean(x * x, -1, /*keepdim=*/true)) + 1e-6f);
  const Tensor dxw = dy * w;
  const Tensor dx = rstd * (dxw - x * rstd * rstd * mean(dxw * x, -1, /*keepdim=*/true));
  return {dx, sum(dy * x * rstd, 0)};
}

// Wrong: LayerNorm's backward (x - mean, the variance): RMSNorm subtracts no mean.
RMSNormGrads rms_norm_backward_layer_norm_formula(const Tensor& x, const Tensor& w,
                                                  const Tensor& dy) {
  const Tensor rstd = 1.0f / sqrt(var(x, -1, /*keepdim=*/true, /*correction=*/0) + 1e-6f);
  const Tensor norm = (x - mean(x, -1, /*keepdim=*/true)) * rstd, dnorm = dy * w;
  const Tensor dx = (dnorm - mean(dnorm, -1, /*keepdim=*/true) -
                     norm * mean(dnorm * norm, -1, /*keepdim=*/true)) *
                    rstd;
  return {dx, sum(dy * norm, 0)};
}

// Wrong: sums dxw * x over the row where the mean belongs (C times too large).
RMSNormGrads rms_norm_backward_sum_not_mean(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const Tensor rstd = 1.0f / sqrt(mean(x * x, -1, /*keepdim=*/true) + 1e-6f);
  const Tensor dxw = dy * w;
  const Tensor dx = rstd * (dxw - x * rstd * rstd * sum(dxw * x, -1, /*keepdim=*/true));
  return {dx, sum(dy * x * rstd, 0)};
}

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
RMSNormGrads rms_norm_backward_reads_memory(const Tensor& x, const Tensor& w, const Tensor& dy) {
  return solution::rms_norm_backward(memory_order(x), w, dy);
}

// Wrong: sums dw over the rows starting from row 0: an empty batch has no row 0.
RMSNormGrads rms_norm_backward_sum_from_row_0(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const RMSNormGrads g = solution::rms_norm_backward(x, w, dy);
  const Tensor dw_rows = dy * x / sqrt(mean(x * x, -1, /*keepdim=*/true) + 1e-6f);
  Tensor dw = select(dw_rows, 0, 0);
  for (int64_t r = 1; r < x.size(0); ++r) dw = dw + select(dw_rows, 0, r);
  return {g.dx, dw};
}

const Catalogue<signature::rms_norm_backward>& rms_norm_backward_mistakes() {
  static const Catalogue<signature::rms_norm_backward> c = {
      {"rms_norm_backward_no_rstd_term", rms_norm_backward_no_rstd_term,
       "every x moves its row's rstd: subtract x * rstd^2 * mean(dxw * x)",
       "dx = rstd (dxw - x rstd^2 mean(dxw x))"},
      {"rms_norm_backward_dw_not_reduced", rms_norm_backward_dw_not_reduced,
       "sum dw over the rows: w is shared by every row (shape (C,))",
       "dw = sum over rows of dy x rstd"},
      {"rms_norm_backward_eps_outside_sqrt", rms_norm_backward_eps_outside_sqrt,
       "eps goes inside the square root: rstd = 1 / sqrt(mean(x^2) + eps); it matters when a "
       "row's mean square is near eps",
       "rstd = 1 / sqrt(mean(x^2) + eps)"},
      {"rms_norm_backward_layer_norm_formula", rms_norm_backward_layer_norm_formula,
       "RMSNorm subtracts no mean: rstd comes from mean(x^2), and x is not centred",
       "y = x rstd w, rstd = 1 / sqrt(mean(x^2) + eps)"},
      {"rms_norm_backward_sum_not_mean", rms_norm_backward_sum_not_mean,
       "a mean over the row, not a sum: rstd is built from mean(x^2)",
       "dx = rstd (dxw - x rstd^2 mean(dxw x))"},
      {"rms_norm_backward_reads_memory", rms_norm_backward_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "x[i, j] is element (i, j) of x as a tensor, not of its memory"},
      {"rms_norm_backward_sum_from_row_0", rms_norm_backward_sum_from_row_0,
       "sum dw with sum(..., 0), which gives zeros for no rows: a total started from row 0 has "
       "no row 0",
       "dw = sum over rows of dy x rstd (zeros for no rows)"}};
  return c;
}

}  // namespace qkv::exercises::wrong
