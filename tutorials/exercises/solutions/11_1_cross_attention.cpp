// Exercise 11.1 (cross_attention), a reference solution. Try the exercise first:
// tutorials/exercises/learner/11_1_cross_attention.cpp states the task.
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor cross_attention(const Tensor& x, const Tensor& memory, const Tensor& w_q, const Tensor& w_k,
                       const Tensor& w_v) {
  const Tensor q = matmul(x, w_q), k = matmul(memory, w_k), v = matmul(memory, w_v);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -1), v);
}

}  // namespace qkv::exercises::solution
