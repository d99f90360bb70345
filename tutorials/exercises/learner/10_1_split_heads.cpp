// Exercise 10.1, after lesson 10: split_heads.
//
// Split a projection into heads (lesson 10): x (B, T, C) with C = heads * D becomes
// (B, heads, T, D), where head h holds the D-wide slice [h*D, (h+1)*D) of every token's vector.
// A view (B, T, heads, D), then a transpose of dims 1 and 2.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 10.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor split_heads(const Tensor& x, int64_t heads) {
  // Write your code here, in place of the line below.
  not_implemented("10.1", "split_heads", "(B, T, C) -> (B, H, T, D): view, then transpose");
}

}  // namespace qkv::exercises
