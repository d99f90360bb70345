// Exercise 19.1 (kv_append): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: joins along the heads (dim 1) instead of the positions.
Tensor kv_append_wrong_dim(const Tensor& cache, const Tensor& fresh) {
  if (!cache.defined()) return fresh;
  return cat({cache, fresh}, 1);
}

// Wrong: puts the new positions before the cached ones.
Tensor kv_append_prepends(const Tensor& cache, const Tensor& fresh) {
  if (!cache.defined()) return fresh;
  return cat({fresh, cache}, 2);
}

// Wrong: keeps only the new positions.
Tensor kv_append_forgets(const Tensor& cache, const Tensor& fresh) {
  (void)cache;
  return fresh;
}

// Wrong: on the first call (no cache yet) returns the empty cache instead of the fresh keys.
Tensor kv_append_first_call_undefined(const Tensor& cache, const Tensor& fresh) {
  if (!cache.defined()) return cache;
  return cat({cache, fresh}, 2);
}

// Wrong: joins along the last dim (the features) instead of the positions.
Tensor kv_append_last_dim(const Tensor& cache, const Tensor& fresh) {
  if (!cache.defined()) return fresh;
  return cat({cache, fresh}, -1);
}

// Wrong: reads fresh's memory in order, as if it were contiguous (a transposed view is not).
Tensor kv_append_reads_memory(const Tensor& cache, const Tensor& fresh) {
  return solution::kv_append(cache, memory_order(fresh));
}

// Wrong: appends batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor kv_append_per_batch(const Tensor& cache, const Tensor& fresh) {
  if (!cache.defined()) return fresh;
  std::vector<Tensor> each;
  for (int64_t b = 0; b < fresh.size(0); ++b)
    each.push_back(cat({select(cache, 0, b), select(fresh, 0, b)}, 1));
  return stack(each, 0);
}

const Catalogue<signature::kv_append>& kv_append_mistakes() {
  static const Catalogue<signature::kv_append> c = {
      {"kv_append_wrong_dim", kv_append_wrong_dim,
       "join along the positions (dim 2), not the heads",
       "(B, H, T_cached, D) + (B, H, T_new, D) -> (B, H, T_cached + T_new, D)"},
      {"kv_append_prepends", kv_append_prepends,
       "the new positions go after the cached ones: cat({cache, fresh}, 2)",
       "positions 0 .. T_cached - 1 from the cache, then the new ones"},
      {"kv_append_forgets", kv_append_forgets, "keep the cached positions: the new ones join them",
       "(B, H, T_cached + T_new, D)"},
      {"kv_append_first_call_undefined", kv_append_first_call_undefined,
       "the first call has no cache (undefined): the result is then the fresh positions",
       "an undefined cache is empty"},
      {"kv_append_last_dim", kv_append_last_dim,
       "join along the positions (dim 2), not the features (dim -1)",
       "(B, H, T_cached + T_new, D)"},
      {"kv_append_reads_memory", kv_append_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "fresh[i, j] is element (i, j) of fresh as a tensor, not of its memory"},
      {"kv_append_per_batch", kv_append_per_batch,
       "join the whole batch at once (cat along dim 2): a loop over the batch has nothing to "
       "stack when the batch is empty",
       "(B, H, T_cached + T_new, D), for any B, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
