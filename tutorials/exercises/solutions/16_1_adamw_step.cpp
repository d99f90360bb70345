// Exercise 16.1 (adamw_step), a reference solution. Try the exercise first:
// tutorials/exercises/learner/16_1_adamw_step.cpp states the task.
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

AdamWState adamw_step(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                      int64_t step, const AdamWHyper& h) {
  NoGradGuard no_grad;
  const double c1 = 1 - std::pow(h.beta1, static_cast<double>(step));
  const double c2 = 1 - std::pow(h.beta2, static_cast<double>(step));
  const Tensor decayed = param * static_cast<float>(1 - h.lr * h.weight_decay);
  const Tensor m2 = m * static_cast<float>(h.beta1) + grad * static_cast<float>(1 - h.beta1);
  const Tensor v2 = v * static_cast<float>(h.beta2) + grad * grad * static_cast<float>(1 - h.beta2);
  const Tensor m_hat = m2 / static_cast<float>(c1), v_hat = v2 / static_cast<float>(c2);
  return {decayed - m_hat / (sqrt(v_hat) + static_cast<float>(h.eps)) * static_cast<float>(h.lr),
          m2, v2};
}

}  // namespace qkv::exercises::solution
