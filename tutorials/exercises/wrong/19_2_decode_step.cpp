// Exercise 19.2 (decode_step): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: applies a causal mask aligned to the first key: sees key 0 only.
Tensor decode_step_left_aligned_mask(const Tensor& q, const Tensor& k_cache,
                                     const Tensor& v_cache) {
  const int64_t T = k_cache.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k_cache, -2, -1)) / scale;  // (..., 1, T)
  const Tensor hidden = triu(ones({1, T}, Dtype::boolean), 1);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v_cache);
}

// Wrong: forgets to divide the scores by sqrt(D).
Tensor decode_step_no_scale(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  return matmul(softmax(matmul(q, transpose(k_cache, -2, -1)), -1), v_cache);
}

// Wrong: attends to the newest key only.
Tensor decode_step_last_key_only(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  (void)q;
  (void)k_cache;
  return narrow(v_cache, -2, v_cache.size(-2) - 1, 1);
}

}  // namespace qkv::exercises::wrong
