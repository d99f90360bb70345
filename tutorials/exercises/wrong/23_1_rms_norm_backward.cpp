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
       "dx = rstd (dxw - x rstd^2 mean(dxw x))"}};
  return c;
}

}  // namespace qkv::exercises::wrong
