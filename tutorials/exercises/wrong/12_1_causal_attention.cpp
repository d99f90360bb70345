// Exercise 12.1 (causal_attention): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: hides the diagonal too (j >= i): each token cannot see itself.
Tensor causal_attention_hides_diagonal(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor hidden = triu(ones({T, T}, Dtype::boolean), 0);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: lets query i see key i + 1.
Tensor causal_attention_off_by_one(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor hidden = triu(ones({T, T}, Dtype::boolean), 2);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: zeroes the future after the softmax, without renormalising.
Tensor causal_attention_mask_after_softmax(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  return matmul(masked_fill(weights, triu(ones({T, T}, Dtype::boolean), 1), 0.0f), v);
}

}  // namespace qkv::exercises::wrong
