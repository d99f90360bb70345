// Exercise 01.1, after lesson 01: broadcast_add.
//
// a + b with broadcasting, by index arithmetic (lesson 01). Align the shapes from the right;
// a dim of size 1, or a missing one, stretches to the other's size. For every output element,
// work out which element of a and which of b it reads: an output index i along a dim where an
// input has size 1 reads that input's index 0.
//   a (3, 1, 5) + b (4, 1) -> (3, 4, 5)       a (7,) + b (1,) -> (7,)
// Use a.to_vector<float>() (row-major) and from_vector(values, shape); float32 inputs.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 01.1
// (build first: cmake --build --preset release --target check_exercises)
#include <algorithm>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor broadcast_add(const Tensor& a, const Tensor& b) {
  // Write your code here, in place of the line below.
  not_implemented("01.1", "broadcast_add",
                  "a + b by walking every output index and each input's index into it");
}

}  // namespace qkv::exercises
