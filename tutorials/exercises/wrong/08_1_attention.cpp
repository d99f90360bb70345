// Exercise 08.1 (attention): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: forgets to divide the scores by sqrt(D).
Tensor attention_no_scale(const Tensor& q, const Tensor& k, const Tensor& v) {
  return matmul(softmax(matmul(q, transpose(k, -2, -1)), -1), v);
}

// Wrong: takes the softmax over the queries (dim -2).
Tensor attention_softmax_over_queries(const Tensor& q, const Tensor& k, const Tensor& v) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -2), v);
}

// Wrong: divides by D instead of sqrt(D).
Tensor attention_scale_by_d(const Tensor& q, const Tensor& k, const Tensor& v) {
  const float D = static_cast<float>(q.size(-1));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / D, -1), v);
}

}  // namespace qkv::exercises::wrong
