// Exercise 12.2, after lesson 12: causal_attention_renormalised.
//
// Causal attention the other way (lesson 12): softmax over all keys first, then multiply the
// weights by the lower triangle (ones on and below the diagonal, zeros above) and divide each
// row by its new sum, so it sums to 1 again. The same weights as -inf before the softmax, as
// long as no hidden score is so far above the visible ones that their weights underflow to 0
// (at scores in the hundreds they do, and 0 / 0 is NaN: one reason models mask with -inf before
// the softmax; the checker keeps to smaller scores here). q, k, v (..., T, D), as many queries
// as keys.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 12.2
// (build first: cmake --build --preset release --target check_exercises)
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor causal_attention_renormalised(const Tensor& q, const Tensor& k, const Tensor& v) {
  // Write your code here, in place of the line below.
  not_implemented("12.2", "causal_attention_renormalised",
                  "softmax, multiply by the lower triangle, renormalise each row");
}

}  // namespace qkv::exercises
