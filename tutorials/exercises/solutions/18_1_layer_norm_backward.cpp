// Exercise 18.1 (layer_norm_backward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/18_1_layer_norm_backward.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const float eps = 1e-5f;
  const Tensor mean_x = mean(x, -1, /*keepdim=*/true);
  const Tensor var_x = var(x, -1, /*keepdim=*/true, /*correction=*/0);
  const Tensor rstd = 1.0f / sqrt(var_x + eps);
  const Tensor norm = (x - mean_x) * rstd;
  const Tensor dnorm = dy * w;
  const Tensor dx = (dnorm - mean(dnorm, -1, /*keepdim=*/true) -
                     norm * mean(dnorm * norm, -1, /*keepdim=*/true)) *
                    rstd;
  return {dx, sum(dy * norm, 0), sum(dy, 0)};
}

}  // namespace qkv::exercises::solution
