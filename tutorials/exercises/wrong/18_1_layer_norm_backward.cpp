// Exercise 18.1 (layer_norm_backward): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
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

}  // namespace qkv::exercises::wrong
