// Exercise 11.1, after lesson 11: cross_attention.
//
// Cross-attention (lesson 11): queries from x (B, T_q, C), keys and values from memory
// (B, T_k, C), where T_q and T_k differ:
//   q = x w_q    k = memory w_k    v = memory w_v        w_q, w_k (C, D), w_v (C, D_v)
//   output = softmax(q k^T / sqrt(D)) v                   (B, T_q, D_v)
// You may call your attention (08.1).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 11.1
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor cross_attention(const Tensor& x, const Tensor& memory, const Tensor& w_q, const Tensor& w_k,
                       const Tensor& w_v) {
  // Write your code here, in place of the line below.
  not_implemented("11.1", "cross_attention", "queries from x, keys and values from memory");
}

}  // namespace qkv::exercises
