// Exercise 11.1 (cross_attention): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>
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

// Wrong: scales by the square root of the values' width, not the keys'.
Tensor cross_attention_scale_by_value_width(const Tensor& x, const Tensor& memory,
                                            const Tensor& w_q, const Tensor& w_k,
                                            const Tensor& w_v) {
  const Tensor q = matmul(x, w_q), k = matmul(memory, w_k), v = matmul(memory, w_v);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(v.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -1), v);
}

// Wrong: takes the queries from the memory too (self-attention over the memory).
Tensor cross_attention_queries_from_memory(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                           const Tensor& w_k, const Tensor& w_v) {
  (void)x;
  const Tensor q = matmul(memory, w_q), k = matmul(memory, w_k), v = matmul(memory, w_v);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -1), v);
}

const Catalogue<signature::cross_attention>& cross_attention_mistakes() {
  static const Catalogue<signature::cross_attention> c = {
      {"cross_attention_values_from_x", cross_attention_values_from_x,
       "the values come from the memory, as the keys do", "v = memory w_v"},
      {"cross_attention_keys_from_x", cross_attention_keys_from_x,
       "the keys come from the memory: x only asks (queries)", "k = memory w_k"},
      {"cross_attention_no_scale", cross_attention_no_scale,
       "divide the scores by sqrt(D) before the softmax", "output = softmax(q k^T / sqrt(D)) v"},
      {"cross_attention_scale_by_value_width", cross_attention_scale_by_value_width,
       "D in sqrt(D) is the width of q and k (w_q's columns), not of v",
       "output = softmax(q k^T / sqrt(D)) v, D = w_q.size(1)"},
      {"cross_attention_queries_from_memory", cross_attention_queries_from_memory,
       "the queries come from x: one output row per position of x (T_q of them)", "q = x w_q"}};
  return c;
}

}  // namespace qkv::exercises::wrong
