// Exercise 10.2, after lesson 10: merge_heads.
//
// Merge the heads back (lesson 10): x (B, H, T, D) -> (B, T, H * D), head h's vector of
// token t at columns [h*D, (h+1)*D) of row t: transpose dims 1 and 2, then reshape (a copy,
// since the transpose is not contiguous).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 10.2
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor merge_heads(const Tensor& x) {
  // Write your code here, in place of the line below.
  not_implemented("10.2", "merge_heads", "(B, H, T, D) -> (B, T, H * D): transpose, then reshape");
}

}  // namespace qkv::exercises
