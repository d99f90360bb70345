// Exercise 23.1 (rms_norm_backward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/23_1_rms_norm_backward.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

RMSNormGrads rms_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy) {
  const Tensor rstd = 1.0f / sqrt(mean(x * x, -1, /*keepdim=*/true) + 1e-6f);
  const Tensor dxw = dy * w;
  const Tensor dx = rstd * (dxw - x * rstd * rstd * mean(dxw * x, -1, /*keepdim=*/true));
  return {dx, sum(dy * x * rstd, 0)};
}

}  // namespace qkv::exercises::solution
