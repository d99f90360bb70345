// Exercise 10.1 (split_heads): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
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

// Wrong: views (B, T, C) as (B, T, D, heads): heads and D swapped.
Tensor split_heads_d_and_heads_swapped(const Tensor& x, int64_t heads) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / heads;
  return transpose(reshape(x, {B, T, D, heads}), 1, 2);
}

// Wrong: reads x's memory in order, as if it were contiguous (a sliced view is not).
Tensor split_heads_reads_memory(const Tensor& x, int64_t heads) {
  return solution::split_heads(memory_order(x), heads);
}

// Wrong: splits each batch element on its own and stacks them: stack() of no tensors (an
// empty batch) is an error.
Tensor split_heads_per_batch(const Tensor& x, int64_t heads) {
  std::vector<Tensor> each;
  for (int64_t b = 0; b < x.size(0); ++b) {
    const Tensor row = select(x, 0, b);  // (T, C)
    each.push_back(transpose(reshape(row, {row.size(0), heads, row.size(1) / heads}), 0, 1));
  }
  return stack(each, 0);
}

const Catalogue<signature::split_heads>& split_heads_mistakes() {
  static const Catalogue<signature::split_heads> c = {
      {"split_heads_no_transpose", split_heads_no_transpose,
       "view as (B, T, H, D) first, then transpose dims 1 and 2",
       "head h of token t = x[b, t, h*D:(h+1)*D]"},
      {"split_heads_interleaved", split_heads_interleaved,
       "head h takes the D numbers [h*D, (h+1)*D) side by side, not every H-th number",
       "head h of token t = x[b, t, h*D:(h+1)*D]"},
      {"split_heads_transposes_batch", split_heads_transposes_batch,
       "transpose dims 1 and 2 (positions and heads), not 0 and 2", "(B, T, H, D) -> (B, H, T, D)"},
      {"split_heads_d_and_heads_swapped", split_heads_d_and_heads_swapped,
       "the view is (B, T, heads, D): heads first, then each head's D numbers",
       "C = heads * D, head-major"},
      {"split_heads_reads_memory", split_heads_reads_memory,
       "use reshape (or view) and transpose, not data_ptr(): a sliced view's memory is not in "
       "row-major order",
       "head h of token t = x[b, t, h*D:(h+1)*D], x as a tensor"},
      {"split_heads_per_batch", split_heads_per_batch,
       "split the whole batch at once (reshape and transpose): a loop over the batch has "
       "nothing to stack when the batch is empty",
       "(B, T, C) -> (B, T, H, D) -> (B, H, T, D), for any B, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
