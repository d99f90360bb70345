// Exercise 02.1, after lesson 02: sum_to_shape.
//
// The gradient of a broadcast (lesson 02): when x of `shape` was broadcast into a larger
// result, the result's gradient `grad` reaches x summed over every dim x was stretched along.
// Sum away the leading dims x does not have, then sum (keeping the dim) every dim where x has
// size 1 and grad does not. The result has exactly `shape`.
//   grad (4, 3, 5), shape (3, 1) -> sum over dim 0, then over dim 2 keeping it -> (3, 1)
//
// Check it: ./build/release/tutorials/exercises/check_exercises 02.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor sum_to_shape(const Tensor& grad, const Shape& shape) {
  // Write your code here, in place of the line below.
  not_implemented("02.1", "sum_to_shape",
                  "the gradient summed back to the shape before broadcasting");
}

}  // namespace qkv::exercises
