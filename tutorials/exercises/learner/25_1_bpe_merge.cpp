// Exercise 25.1, after lesson 25: bpe_merge.
//
// One merge of byte-pair encoding (lesson 25; minbpe's merge): in the token ids (N,) int64,
// replace every occurrence of the adjacent pair (a, b) by new_id, scanning left to right; a
// merged pair is consumed, so the scan goes on after it:
//   ids [5, 5, 5, 7], pair (5, 5) -> [new, 5, 7]          ids [1, 2, 3], pair (2, 3) -> [1, new]
// Return the new ids (N - number of merges,). Plain loops over ids.to_vector<int64_t>() and
// from_vector are fine; leave ids as it was.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 25.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor bpe_merge(const Tensor& ids, int64_t a, int64_t b, int64_t new_id) {
  // Write your code here, in place of the line below.
  not_implemented("25.1", "bpe_merge", "every adjacent (a, b), left to right, becomes new_id");
}

}  // namespace qkv::exercises
