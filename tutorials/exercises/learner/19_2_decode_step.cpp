// Exercise 19.2, after lesson 19: decode_step.
//
// One decoding step with a KV cache (lesson 19): the newest token's query q (B, H, 1, D)
// attends to every cached key, its own included: all of them are in its past, so no mask.
//   output = softmax(q k_cache^T / sqrt(D)) v_cache          (B, H, 1, D_v)
// k_cache (B, H, T, D), v_cache (B, H, T, D_v).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 19.2
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor decode_step(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  // Write your code here, in place of the line below.
  not_implemented("19.2", "decode_step", "the one query against every cached key and value");
}

}  // namespace qkv::exercises
