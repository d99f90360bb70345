// Exercise 16.1 (adamw_step): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
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

// Wrong: corrects the bias with step - 1 (the count of the steps before this one).
AdamWState adamw_step_bias_step_off_by_one(const Tensor& param, const Tensor& grad, const Tensor& m,
                                           const Tensor& v, int64_t step, const AdamWHyper& h) {
  return solution::adamw_step(param, grad, m, v, step - 1, h);
}

// Wrong: decays the updated weights instead of the weights before the update.
AdamWState adamw_step_decay_after_update(const Tensor& param, const Tensor& grad, const Tensor& m,
                                         const Tensor& v, int64_t step, const AdamWHyper& h) {
  AdamWHyper no_decay = h;
  no_decay.weight_decay = 0;
  AdamWState s = solution::adamw_step(param, grad, m, v, step, no_decay);
  s.param = s.param * static_cast<float>(1 - h.lr * h.weight_decay);
  return s;
}

// Wrong: writes the new values into param, m and v and returns them (the numbers are right,
// but the caller's tensors changed under it).
AdamWState adamw_step_writes_in_place(const Tensor& param, const Tensor& grad, const Tensor& m,
                                      const Tensor& v, int64_t step, const AdamWHyper& h) {
  const AdamWState s = solution::adamw_step(param, grad, m, v, step, h);
  copy_(param, s.param);
  copy_(m, s.m);
  copy_(v, s.v);
  return {param, m, v};
}

// Wrong: reads grad's memory in order, as if it were contiguous (a transposed view is not).
AdamWState adamw_step_reads_memory(const Tensor& param, const Tensor& grad, const Tensor& m,
                                   const Tensor& v, int64_t step, const AdamWHyper& h) {
  return solution::adamw_step(param, memory_order(grad), m, v, step, h);
}

const Catalogue<signature::adamw_step>& adamw_step_mistakes() {
  static const Catalogue<signature::adamw_step> c = {
      {"adamw_step_decay_in_gradient", adamw_step_decay_in_gradient,
       "decay the weights (param *= 1 - lr wd), not the gradient: that is Adam's L2, which "
       "the moments then rescale",
       "param <- param * (1 - lr * weight_decay)"},
      {"adamw_step_no_bias_correction", adamw_step_no_bias_correction,
       "divide m by 1 - beta1^step and v by 1 - beta2^step: both start at 0",
       "m_hat = m / (1 - beta1^step), v_hat = v / (1 - beta2^step)"},
      {"adamw_step_eps_inside_sqrt", adamw_step_eps_inside_sqrt,
       "add eps after the square root: sqrt(v_hat) + eps",
       "param <- param - lr * m_hat / (sqrt(v_hat) + eps)"},
      {"adamw_step_bias_step_off_by_one", adamw_step_bias_step_off_by_one,
       "the first step is step 1: correct with beta^step, not beta^(step - 1)",
       "m_hat = m / (1 - beta1^step)"},
      {"adamw_step_decay_after_update", adamw_step_decay_after_update,
       "decay the weights as they were before this step's update",
       "param <- param * (1 - lr * weight_decay), then param - lr * m_hat / (...)"},
      {"adamw_step_writes_in_place", adamw_step_writes_in_place,
       "return new tensors: the caller's param, m and v must stay as they were",
       "the new param, m and v, returned", "modified its input 'param'"},
      {"adamw_step_reads_memory", adamw_step_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "grad[i, j] is element (i, j) of grad as a tensor, not of its memory"}};
  return c;
}

}  // namespace qkv::exercises::wrong
