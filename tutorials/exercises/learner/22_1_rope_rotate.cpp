// Exercise 22.1, after lesson 22: rope_rotate.
//
// RoPE (lesson 22), qkv's "rotate half" pairing (GPT-NeoX, Hugging Face Llama): x (..., T, D),
// D even; row t is at position p = offset + t. Dim i < D/2 pairs with dim i + D/2, and the
// pair turns by the angle p * theta_i, theta_i = 10000^(-2i / D):
//   y_i       = x_i cos - x_{i+D/2} sin
//   y_{i+D/2} = x_{i+D/2} cos + x_i sin
// Build cos and sin tables (T, D/2) and combine halves with narrow and cat. (Applied to q and
// k, never v: the scores then depend on relative positions only.)
//
// Check it: ./build/release/tutorials/exercises/check_exercises 22.1
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor rope_rotate(const Tensor& x, int64_t offset) {
  // Write your code here, in place of the line below.
  not_implemented("22.1", "rope_rotate", "rotate each (i, i + D/2) pair by its position's angle");
}

}  // namespace qkv::exercises
