// Exercise 12.2 (causal_attention_renormalised), a reference solution. Try the exercise first:
// tutorials/exercises/learner/12_2_causal_attention_renormalised.cpp states the task.
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor causal_attention_renormalised(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  const Tensor kept = weights * tril(ones({T, T}));  // zeros above the diagonal
  return matmul(kept / sum(kept, -1, /*keepdim=*/true), v);
}

}  // namespace qkv::exercises::solution
