// Exercise 16.1, after lesson 16: adamw_step.
//
// One AdamW step (lesson 16's optimizer; torch.optim.AdamW), step = 1 for the first:
//   param <- param * (1 - lr * weight_decay)          the decay, on the weights, decoupled
//   m <- beta1 m + (1 - beta1) grad                   v <- beta2 v + (1 - beta2) grad^2
//   m_hat = m / (1 - beta1^step)                      v_hat = v / (1 - beta2^step)
//   param <- param - lr * m_hat / (sqrt(v_hat) + eps)
// Return the new param, m and v (without history). m and v start at zeros.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 16.1
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

AdamWState adamw_step(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                      int64_t step, const AdamWHyper& h) {
  // Write your code here, in place of the line below.
  not_implemented("16.1", "adamw_step",
                  "the decoupled decay, the two moments with bias correction, the update");
}

}  // namespace qkv::exercises
