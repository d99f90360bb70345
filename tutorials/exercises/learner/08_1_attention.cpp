// Exercise 08.1, after lesson 08: attention.
//
// Scaled dot-product attention, no mask (lesson 08):
//   weights = softmax(q k^T / sqrt(D))     (..., T_q, T_k), over the keys
//   output  = weights v                    (..., T_q, D_v)
// q (..., T_q, D), k (..., T_k, D), v (..., T_k, D_v); the leading dims broadcast. You may
// call your softmax_rows (07.1).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 08.1
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  // Write your code here, in place of the line below.
  not_implemented("08.1", "attention", "softmax(q k^T / sqrt(D)) v");
}

}  // namespace qkv::exercises
