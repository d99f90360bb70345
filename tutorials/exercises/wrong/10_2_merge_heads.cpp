// Exercise 10.2 (merge_heads): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
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

// Wrong: adds the heads together instead of putting them side by side.
Tensor merge_heads_sums_heads(const Tensor& x) {
  return sum(x, 1);
}

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
Tensor merge_heads_reads_memory(const Tensor& x) {
  return solution::merge_heads(memory_order(x));
}

// Wrong: merges each batch element on its own and stacks them: stack() of no tensors (an
// empty batch) is an error.
Tensor merge_heads_per_batch(const Tensor& x) {
  std::vector<Tensor> each;
  for (int64_t b = 0; b < x.size(0); ++b) {
    const Tensor e = transpose(select(x, 0, b), 0, 1);  // (T, H, D)
    each.push_back(reshape(e, {e.size(0), e.size(1) * e.size(2)}));
  }
  return stack(each, 0);
}

const Catalogue<signature::merge_heads>& merge_heads_mistakes() {
  static const Catalogue<signature::merge_heads> c = {
      {"merge_heads_no_transpose", merge_heads_no_transpose,
       "transpose dims 1 and 2 before the reshape: the heads merged in the wrong order",
       "row t = [head 0 of t, head 1 of t, ...]"},
      {"merge_heads_interleaved", merge_heads_interleaved,
       "put each head's D numbers side by side (head-major), not interleaved",
       "columns [h*D, (h+1)*D) of row t = head h of token t"},
      {"merge_heads_wrong_transpose", merge_heads_wrong_transpose,
       "transpose dims 1 and 2 (heads and positions), not 2 and 3",
       "(B, H, T, D) -> (B, T, H, D) -> (B, T, H * D)"},
      {"merge_heads_sums_heads", merge_heads_sums_heads,
       "concatenate the heads (width H * D), do not add them (width D)",
       "(B, H, T, D) -> (B, T, H * D)"},
      {"merge_heads_reads_memory", merge_heads_reads_memory,
       "use transpose and reshape, not data_ptr(): a transposed view's memory is not in "
       "row-major order",
       "columns [h*D, (h+1)*D) of row t = head h of token t, x as a tensor"},
      {"merge_heads_per_batch", merge_heads_per_batch,
       "merge the whole batch at once (transpose and reshape): a loop over the batch has "
       "nothing to stack when the batch is empty",
       "(B, H, T, D) -> (B, T, H, D) -> (B, T, H * D), for any B, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
