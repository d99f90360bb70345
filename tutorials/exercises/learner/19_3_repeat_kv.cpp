// Exercise 19.3, after lesson 19: repeat_kv.
//
// Grouped-query attention's sharing (lesson 19; Llama's repeat_kv): kv (B, H_kv, T, D) holds
// the key (or value) heads; each serves `groups` query heads in a row, so query head h reads
// kv head h / groups. Return (B, H_kv * groups, T, D) with kv head j copied to heads
// j * groups ... j * groups + groups - 1:
//   kv heads [k0, k1], groups 2  ->  [k0, k0, k1, k1]          (not [k0, k1, k0, k1])
// unsqueeze a dim after the heads, expand it to `groups`, then reshape. Use qkv's ops: a model
// trains through it.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 19.3
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor repeat_kv(const Tensor& kv, int64_t groups) {
  // Write your code here, in place of the line below.
  not_implemented("19.3", "repeat_kv", "each key/value head repeated groups times, in a row");
}

}  // namespace qkv::exercises
