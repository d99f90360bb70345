// Exercise 08.1 (attention): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <cmath>
#include <vector>
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

// Wrong: scales by the square root of the values' width, not the keys'.
Tensor attention_scale_by_value_width(const Tensor& q, const Tensor& k, const Tensor& v) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(v.size(-1))));
  return matmul(softmax(matmul(q, transpose(k, -2, -1)) / scale, -1), v);
}

// Wrong: subtracts the max of every score at once before its own softmax: right while the
// scores are few and small, but an empty batch has no max.
Tensor attention_global_max(const Tensor& q, const Tensor& k, const Tensor& v) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor e = exp(scores - max(scores));
  return matmul(e / sum(e, -1, /*keepdim=*/true), v);
}

// Wrong: reads k's and v's memory in order, as if they were contiguous (a transposed or
// sliced view is not).
Tensor attention_reads_memory(const Tensor& q, const Tensor& k, const Tensor& v) {
  return solution::attention(q, memory_order(k), memory_order(v));
}

// Wrong: the softmax as e^s / sum e^s, without subtracting each row's max: e^s overflows when
// the scores reach the hundreds.
Tensor attention_softmax_without_max(const Tensor& q, const Tensor& k, const Tensor& v) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor e = exp(matmul(q, transpose(k, -2, -1)) / scale);
  return matmul(e / sum(e, -1, /*keepdim=*/true), v);
}

// Wrong: attends batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor attention_per_batch(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (k.dim() < 3) return solution::attention(q, k, v);  // no batch
  std::vector<Tensor> each;
  for (int64_t b = 0; b < k.size(0); ++b)
    each.push_back(solution::attention(q.dim() == k.dim() ? select(q, 0, b) : q, select(k, 0, b),
                                       select(v, 0, b)));
  return stack(each, 0);
}

const Catalogue<signature::attention>& attention_mistakes() {
  static const Catalogue<signature::attention> c = {
      {"attention_no_scale", attention_no_scale, "divide the scores by sqrt(D) before the softmax",
       "weights = softmax(q k^T / sqrt(D))"},
      {"attention_softmax_over_queries", attention_softmax_over_queries,
       "take the softmax over the keys (the last dim), not the queries",
       "weights = softmax(q k^T / sqrt(D)) over the keys: each query's row sums to 1"},
      {"attention_scale_by_d", attention_scale_by_d, "the scale is 1 / sqrt(D), not 1 / D",
       "weights = softmax(q k^T / sqrt(D))"},
      {"attention_scale_by_value_width", attention_scale_by_value_width,
       "D in sqrt(D) is the width of q and k (q.size(-1)), not of v",
       "weights = softmax(q k^T / sqrt(D)), D = q.size(-1)"},
      {"attention_global_max", attention_global_max,
       "use softmax over dim -1 (or subtract each row's own max): the max of the whole tensor "
       "does not exist for an empty batch",
       "weights = softmax(q k^T / sqrt(D)), one softmax per query"},
      {"attention_reads_memory", attention_reads_memory,
       "use qkv's ops (matmul, transpose), not data_ptr(): a transposed or sliced view's "
       "memory is not in row-major order",
       "k[j, d] is the element at row j, column d of k as a tensor"},
      {"attention_softmax_without_max", attention_softmax_without_max,
       "take the softmax with softmax(..., -1) or your softmax_rows (each row's max subtracted "
       "first): e^s overflows float32 for s > 88",
       "weights = softmax(q k^T / sqrt(D)), e^(s - max) / sum e^(s - max)"},
      {"attention_per_batch", attention_per_batch,
       "attend the whole batch at once (matmul broadcasts over the leading dims): a loop over "
       "the batch has nothing to stack when the batch is empty",
       "output (..., T_q, D_v), for any batch, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
