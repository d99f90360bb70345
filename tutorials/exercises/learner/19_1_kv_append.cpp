// Exercise 19.1, after lesson 19: kv_append.
//
// The KV cache's append (lesson 19): the keys (or values) of new positions, fresh
// (B, H, T_new, D), join the cached ones (B, H, T_cached, D) after them, along the positions:
// the result is (B, H, T_cached + T_new, D). An undefined cache (the first call) is empty.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 19.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor kv_append(const Tensor& cache, const Tensor& fresh) {
  // Write your code here, in place of the line below.
  not_implemented("19.1", "kv_append", "the new positions after the cached ones, along dim 2");
}

}  // namespace qkv::exercises
