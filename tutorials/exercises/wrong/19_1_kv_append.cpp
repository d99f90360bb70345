// Exercise 19.1 (kv_append): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
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

}  // namespace qkv::exercises::wrong
