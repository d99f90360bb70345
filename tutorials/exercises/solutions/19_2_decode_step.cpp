// Exercise 19.2 (decode_step), a reference solution. Try the exercise first:
// tutorials/exercises/learner/19_2_decode_step.cpp states the task.
#include <cmath>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor decode_step(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k_cache, -2, -1)) / scale, -1), v_cache);
}

}  // namespace qkv::exercises::solution
