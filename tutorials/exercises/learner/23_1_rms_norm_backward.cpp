// Exercise 23.1, after lesson 23: rms_norm_backward.
//
// The backward of RMSNorm over the last dim (lesson 23's QK-norm; Llama's and Qwen's norm),
// eps = 1e-6, for x (N, C), w (C,), dy (N, C):
//   y = x * rstd * w,   rstd = 1 / sqrt(mean(x^2) + eps)          (mean over the row)
//   dxw = dy * w
//   dx = rstd * (dxw - x * rstd^2 * mean(dxw * x))                 (mean over the row)
//   dw = sum over rows of dy * x * rstd                            (C,)
// LayerNorm without the mean: every x moves its row's rstd, hence the second term.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 23.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

RMSNormGrads rms_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy) {
  // Write your code here, in place of the line below.
  not_implemented("23.1", "rms_norm_backward", "dx and dw of y = x / rms(x) * w");
}

}  // namespace qkv::exercises
