// Exercise 12.2 (causal_attention_renormalised): typical wrong answers, each a whole function with
// one mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: multiplies by the triangle but does not renormalise.
Tensor causal_attention_renormalised_missing(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  return matmul(weights * tril(ones({T, T})), v);
}

// Wrong: keeps the upper triangle (the future) instead of the lower.
Tensor causal_attention_renormalised_upper(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  const Tensor kept = weights * triu(ones({T, T}));
  return matmul(kept / sum(kept, -1, /*keepdim=*/true), v);
}

// Wrong: uses tril(..., -1): no token sees itself.
Tensor causal_attention_renormalised_off_by_one(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  const Tensor kept = weights * tril(ones({T, T}), -1);
  return matmul(kept / (sum(kept, -1, /*keepdim=*/true) + 1e-9f), v);
}

}  // namespace qkv::exercises::wrong
