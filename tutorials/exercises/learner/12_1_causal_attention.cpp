// Exercise 12.1, after lesson 12: causal_attention.
//
// Causal attention, -inf before the softmax (lesson 12): query i may see keys j <= i only.
// q, k, v (..., T, D) with as many queries as keys. Set the scores above the diagonal to
// -inf (masked_fill with the mask of what to hide), then softmax: e^-inf = 0, so the hidden
// keys get weights of exactly 0 and each row still sums to 1.
//   output = softmax(masked(q k^T / sqrt(D))) v
// Write it with qkv's ops: the exercise milestones train a tiny GPT through it.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 12.1
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  // Write your code here, in place of the line below.
  not_implemented("12.1", "causal_attention", "hide keys j > i with -inf before the softmax");
}

}  // namespace qkv::exercises
