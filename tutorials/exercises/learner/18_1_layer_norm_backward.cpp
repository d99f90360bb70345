// Exercise 18.1, after lesson 18: layer_norm_backward.
//
// The backward of LayerNorm over the last dim (lesson 18's layer), eps = 1e-5, for x (N, C),
// w (C,), dy (N, C); the bias only shifts, so only its gradient is needed:
//   mean, var (population) per row     rstd = 1 / sqrt(var + eps)     norm = (x - mean) rstd
//   dnorm = dy * w
//   dx = (dnorm - mean(dnorm) - norm * mean(dnorm * norm)) * rstd     (means over the row)
//   dw = sum over rows of dy * norm     db = sum over rows of dy      (C,) each
//
// Check it: ./build/release/tutorials/exercises/check_exercises 18.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy) {
  // Write your code here, in place of the line below.
  not_implemented("18.1", "layer_norm_backward", "dx, dw and db of y = norm(x) * w + b");
}

}  // namespace qkv::exercises
