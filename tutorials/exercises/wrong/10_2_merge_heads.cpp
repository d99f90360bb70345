// Exercise 10.2 (merge_heads): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: reshapes without the transpose: the heads merged in the wrong order.
Tensor merge_heads_no_transpose(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return reshape(x, {B, T, H * D});
}

// Wrong: puts D before H: the heads' numbers interleaved.
Tensor merge_heads_interleaved(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return reshape(permute(x, {0, 2, 3, 1}), {B, T, H * D});
}

// Wrong: transposes dims 2 and 3 instead of 1 and 2.
Tensor merge_heads_wrong_transpose(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return reshape(transpose(x, 2, 3), {B, T, H * D});
}

}  // namespace qkv::exercises::wrong
