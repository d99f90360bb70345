// Exercise 19.3 (repeat_kv): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: tiles the heads (torch's repeat): [k0, k1, k0, k1] where GQA needs [k0, k0, k1, k1].
Tensor repeat_kv_tiled(const Tensor& kv, int64_t groups) {
  return cat(std::vector<Tensor>(static_cast<size_t>(groups), kv), 1);
}

// Wrong: repeats along the positions (dim 2) instead of the heads.
Tensor repeat_kv_along_positions(const Tensor& kv, int64_t groups) {
  const int64_t B = kv.size(0), H = kv.size(1), T = kv.size(2), D = kv.size(3);
  return reshape(expand(unsqueeze(kv, 3), {B, H, T, groups, D}), {B, H, T * groups, D});
}

// Wrong: returns the key/value heads as they are.
Tensor repeat_kv_not_repeated(const Tensor& kv, int64_t groups) {
  (void)groups;
  return kv;
}

// Wrong: repeats each head H_kv times (the number of key/value heads), not `groups` times.
Tensor repeat_kv_heads_as_count(const Tensor& kv, int64_t groups) {
  (void)groups;
  return solution::repeat_kv(kv, kv.size(1));
}

// Wrong: reads kv's memory in order, as if it were contiguous (a transposed view is not).
Tensor repeat_kv_reads_memory(const Tensor& kv, int64_t groups) {
  return solution::repeat_kv(memory_order(kv), groups);
}

// Wrong: repeats batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor repeat_kv_per_batch(const Tensor& kv, int64_t groups) {
  std::vector<Tensor> each;
  for (int64_t b = 0; b < kv.size(0); ++b)
    each.push_back(select(solution::repeat_kv(narrow(kv, 0, b, 1), groups), 0, 0));
  return stack(each, 0);
}

const Catalogue<signature::repeat_kv>& repeat_kv_mistakes() {
  static const Catalogue<signature::repeat_kv> c = {
      {"repeat_kv_tiled", repeat_kv_tiled,
       "repeat each head in a row ([k0, k0, k1, k1]), not the whole set of heads "
       "([k0, k1, k0, k1]): query head h reads kv head h / groups",
       "out[:, h] = kv[:, h / groups]"},
      {"repeat_kv_along_positions", repeat_kv_along_positions,
       "repeat along the heads (dim 1), not the positions (dim 2)",
       "(B, H_kv, T, D) -> (B, H_kv * groups, T, D)"},
      {"repeat_kv_not_repeated", repeat_kv_not_repeated,
       "each key/value head serves `groups` query heads: repeat it that many times",
       "(B, H_kv, T, D) -> (B, H_kv * groups, T, D)"},
      {"repeat_kv_heads_as_count", repeat_kv_heads_as_count,
       "repeat each head `groups` times (H / H_kv), not H_kv times",
       "(B, H_kv, T, D) -> (B, H_kv * groups, T, D)"},
      {"repeat_kv_reads_memory", repeat_kv_reads_memory,
       "use unsqueeze, expand and reshape (or to_vector()), not data_ptr(): a transposed view's "
       "memory is in another order",
       "kv[b, j, t, d] is the element of kv as a tensor"},
      {"repeat_kv_per_batch", repeat_kv_per_batch,
       "repeat the whole batch at once (unsqueeze, expand, reshape): a loop over the batch has "
       "nothing to stack when the batch is empty",
       "(B, H_kv * groups, T, D), for any B, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
