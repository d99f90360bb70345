// Exercise 12.1 (causal_attention), a reference solution. Try the exercise first:
// tutorials/exercises/learner/12_1_causal_attention.cpp states the task.
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;  // (..., T, T)
  const Tensor future = triu(ones({T, T}, Dtype::boolean), 1);    // true where j > i
  return matmul(softmax(masked_fill(scores, future, -INFINITY), -1), v);
}

}  // namespace qkv::exercises::solution
