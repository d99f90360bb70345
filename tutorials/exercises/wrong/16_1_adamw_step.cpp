// Exercise 16.1 (adamw_step): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: adds the decay to the gradient (Adam's L2), not to the weights.
AdamWState adamw_step_decay_in_gradient(const Tensor& param, const Tensor& grad, const Tensor& m,
                                        const Tensor& v, int64_t step, const AdamWHyper& h) {
  NoGradGuard no_grad;
  const Tensor g = grad + param * static_cast<float>(h.weight_decay);
  const double c1 = 1 - std::pow(h.beta1, static_cast<double>(step));
  const double c2 = 1 - std::pow(h.beta2, static_cast<double>(step));
  const Tensor m2 = m * static_cast<float>(h.beta1) + g * static_cast<float>(1 - h.beta1);
  const Tensor v2 = v * static_cast<float>(h.beta2) + g * g * static_cast<float>(1 - h.beta2);
  const Tensor m_hat = m2 / static_cast<float>(c1), v_hat = v2 / static_cast<float>(c2);
  return {param - m_hat / (sqrt(v_hat) + static_cast<float>(h.eps)) * static_cast<float>(h.lr), m2,
          v2};
}

// Wrong: skips the bias correction of m and v.
AdamWState adamw_step_no_bias_correction(const Tensor& param, const Tensor& grad, const Tensor& m,
                                         const Tensor& v, int64_t step, const AdamWHyper& h) {
  NoGradGuard no_grad;
  (void)step;
  const Tensor decayed = param * static_cast<float>(1 - h.lr * h.weight_decay);
  const Tensor m2 = m * static_cast<float>(h.beta1) + grad * static_cast<float>(1 - h.beta1);
  const Tensor v2 = v * static_cast<float>(h.beta2) + grad * grad * static_cast<float>(1 - h.beta2);
  return {decayed - m2 / (sqrt(v2) + static_cast<float>(h.eps)) * static_cast<float>(h.lr), m2, v2};
}

// Wrong: puts eps inside the square root.
AdamWState adamw_step_eps_inside_sqrt(const Tensor& param, const Tensor& grad, const Tensor& m,
                                      const Tensor& v, int64_t step, const AdamWHyper& h) {
  NoGradGuard no_grad;
  const double c1 = 1 - std::pow(h.beta1, static_cast<double>(step));
  const double c2 = 1 - std::pow(h.beta2, static_cast<double>(step));
  const Tensor decayed = param * static_cast<float>(1 - h.lr * h.weight_decay);
  const Tensor m2 = m * static_cast<float>(h.beta1) + grad * static_cast<float>(1 - h.beta1);
  const Tensor v2 = v * static_cast<float>(h.beta2) + grad * grad * static_cast<float>(1 - h.beta2);
  const Tensor m_hat = m2 / static_cast<float>(c1), v_hat = v2 / static_cast<float>(c2);
  return {decayed - m_hat / sqrt(v_hat + static_cast<float>(h.eps)) * static_cast<float>(h.lr), m2,
          v2};
}

}  // namespace qkv::exercises::wrong
