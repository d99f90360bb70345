// Exercise 21.1, after lesson 21: online_softmax_attention.
//
// The online softmax of flash attention (lesson 21): one query's output softmax(scores) v,
// with the keys visited in tiles of `tile`, never holding more than one tile's weights:
//   for each tile: m' = max(m, max of the tile's scores)
//                  acc <- acc * e^(m - m') + sum_j e^(s_j - m') v_j
//                  l   <- l   * e^(m - m') + sum_j e^(s_j - m')        m <- m'
//   output = acc / l
// scores (T,), v (T, D) -> (D,). Start with m = -inf, l = 0, acc = 0 (e^(-inf) = 0). Plain
// loops over to_vector() are fine; the checker uses scores in the hundreds.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 21.1
// (build first: cmake --build --preset release --target check_exercises)
#include <algorithm>
#include <cmath>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor online_softmax_attention(const Tensor& scores, const Tensor& v, int64_t tile) {
  // Write your code here, in place of the line below.
  not_implemented("21.1", "online_softmax_attention",
                  "a running max, a running sum and a rescaled accumulator, tile by tile");
}

}  // namespace qkv::exercises
