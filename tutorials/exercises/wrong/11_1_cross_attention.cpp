// Exercise 11.1 (cross_attention): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <cmath>
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

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
Tensor cross_attention_reads_memory(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                    const Tensor& w_k, const Tensor& w_v) {
  return solution::cross_attention(memory_order(x), memory, w_q, w_k, w_v);
}

// Wrong: attends batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor cross_attention_per_batch(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                 const Tensor& w_k, const Tensor& w_v) {
  std::vector<Tensor> each;
  for (int64_t b = 0; b < x.size(0); ++b)
    each.push_back(solution::cross_attention(select(x, 0, b), select(memory, 0, b), w_q, w_k, w_v));
  return stack(each, 0);
}

// Wrong: takes both the keys and the values from x (self-attention over x).
Tensor cross_attention_keys_and_values_from_x(const Tensor& x, const Tensor& memory,
                                              const Tensor& w_q, const Tensor& w_k,
                                              const Tensor& w_v) {
  (void)memory;
  return solution::cross_attention(x, x, w_q, w_k, w_v);
}

// Wrong: the softmax as e^s / sum e^s, without subtracting each row's max: e^s overflows when
// the scores reach the hundreds.
Tensor cross_attention_softmax_without_max(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                           const Tensor& w_k, const Tensor& w_v) {
  const Tensor q = matmul(x, w_q), k = matmul(memory, w_k), v = matmul(memory, w_v);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor e = exp(matmul(q, transpose(k, -2, -1)) / scale);
  return matmul(e / sum(e, -1, /*keepdim=*/true), v);
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
       "the queries come from x: one output row per position of x (T_q of them)", "q = x w_q"},
      {"cross_attention_reads_memory", cross_attention_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "x[i, j] is element (i, j) of x as a tensor, not of its memory"},
      {"cross_attention_per_batch", cross_attention_per_batch,
       "attend the whole batch at once (matmul broadcasts over it): a loop over the batch has "
       "nothing to stack when the batch is empty",
       "output (B, T_q, D_v), for any B, 0 included"},
      {"cross_attention_keys_and_values_from_x", cross_attention_keys_and_values_from_x,
       "the keys and the values come from the memory: that is what x attends to",
       "k = memory w_k, v = memory w_v"},
      {"cross_attention_softmax_without_max", cross_attention_softmax_without_max,
       "take the softmax with softmax(..., -1) or your softmax_rows (each row's max subtracted "
       "first): e^s overflows float32 for s > 88",
       "output = softmax(q k^T / sqrt(D)) v, e^(s - max) / sum e^(s - max)"}};
  return c;
}

}  // namespace qkv::exercises::wrong
