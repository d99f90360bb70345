// Exercise 10.1 (split_heads): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: views (B, T, C) as (B, H, T, D) directly.
Tensor split_heads_no_transpose(const Tensor& x, int64_t heads) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / heads;
  return view(x, {B, heads, T, D});
}

// Wrong: splits C as (D, heads): head h takes every heads-th number.
Tensor split_heads_interleaved(const Tensor& x, int64_t heads) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / heads;
  return permute(view(x, {B, T, D, heads}), {0, 3, 1, 2});
}

// Wrong: transposes dims 0 and 2 instead of 1 and 2.
Tensor split_heads_transposes_batch(const Tensor& x, int64_t heads) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / heads;
  return transpose(view(x, {B, T, heads, D}), 0, 2);
}

}  // namespace qkv::exercises::wrong
