// Exercise 08.1 (attention), a reference solution. Try the exercise first:
// tutorials/exercises/learner/08_1_attention.cpp states the task.
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const double D = static_cast<double>(q.size(-1));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / static_cast<float>(std::sqrt(D));
  return matmul(softmax(scores, -1), v);
}

}  // namespace qkv::exercises::solution
