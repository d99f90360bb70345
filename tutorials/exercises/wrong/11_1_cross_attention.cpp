// Exercise 11.1 (cross_attention): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: takes the values from x instead of the memory.
Tensor cross_attention_values_from_x(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                     const Tensor& w_k, const Tensor& w_v) {
  const Tensor q = matmul(x, w_q), k = matmul(memory, w_k), v = matmul(x, w_v);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -1), v);
}

// Wrong: takes the keys from x instead of the memory.
Tensor cross_attention_keys_from_x(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                   const Tensor& w_k, const Tensor& w_v) {
  const Tensor q = matmul(x, w_q), k = matmul(x, w_k), v = matmul(memory, w_v);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -1), v);
}

// Wrong: forgets to divide the scores by sqrt(D).
Tensor cross_attention_no_scale(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                const Tensor& w_k, const Tensor& w_v) {
  const Tensor q = matmul(x, w_q), k = matmul(memory, w_k), v = matmul(memory, w_v);
  return matmul(softmax(matmul(q, transpose(k, -2, -1)), -1), v);
}

}  // namespace qkv::exercises::wrong
