// Exercise 12.2 (causal_attention_renormalised): typical wrong answers, each a whole function with
// one mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: multiplies by the triangle but does not renormalise.
Tensor causal_attention_renormalised_missing(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  return matmul(weights * tril(ones({T, T})), v);
}

// Wrong: keeps the upper triangle (the future) instead of the lower.
Tensor causal_attention_renormalised_upper(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  const Tensor kept = weights * triu(ones({T, T}));
  return matmul(kept / sum(kept, -1, /*keepdim=*/true), v);
}

// Wrong: keeps tril with diagonal -1, hiding the diagonal too: a token cannot see itself (row 0
// keeps nothing: 0 / 0).
Tensor causal_attention_renormalised_hides_diagonal(const Tensor& q, const Tensor& k,
                                                    const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  const Tensor kept = weights * tril(ones({T, T}), -1);
  return matmul(kept / sum(kept, -1, /*keepdim=*/true), v);
}

// Wrong: keeps tril with diagonal 1: query i also sees key i + 1, one step of the future.
Tensor causal_attention_renormalised_off_by_one(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  const Tensor kept = weights * tril(ones({T, T}), 1);
  return matmul(kept / sum(kept, -1, /*keepdim=*/true), v);
}

// Wrong: forgets to divide the scores by sqrt(D).
Tensor causal_attention_renormalised_no_scale(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)), -1) * tril(ones({T, T}));
  return matmul(weights / sum(weights, -1, /*keepdim=*/true), v);
}

// Wrong: scales by the square root of the values' width, not the keys'.
Tensor causal_attention_renormalised_scale_by_value_width(const Tensor& q, const Tensor& k,
                                                          const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(v.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1) * tril(ones({T, T}));
  return matmul(weights / sum(weights, -1, /*keepdim=*/true), v);
}

// Wrong: reads v's memory in order, as if it were contiguous (a sliced view is not).
Tensor causal_attention_renormalised_reads_memory(const Tensor& q, const Tensor& k,
                                                  const Tensor& v) {
  return solution::causal_attention_renormalised(q, k, memory_order(v));
}

// Wrong: attends batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor causal_attention_renormalised_per_batch(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dim() < 3) return solution::causal_attention_renormalised(q, k, v);  // no batch
  std::vector<Tensor> each;
  for (int64_t b = 0; b < q.size(0); ++b)
    each.push_back(
        solution::causal_attention_renormalised(select(q, 0, b), select(k, 0, b), select(v, 0, b)));
  return stack(each, 0);
}

const Catalogue<signature::causal_attention_renormalised>&
causal_attention_renormalised_mistakes() {
  static const Catalogue<signature::causal_attention_renormalised> c = {
      {"causal_attention_renormalised_missing", causal_attention_renormalised_missing,
       "after zeroing the future, divide each row by its new sum so it sums to 1 again",
       "weights = w * tril / sum_j (w * tril)"},
      {"causal_attention_renormalised_upper", causal_attention_renormalised_upper,
       "keep the lower triangle (tril: j <= i), not the upper one",
       "weights = softmax(scores) * tril(ones(T, T)), renormalised"},
      {"causal_attention_renormalised_hides_diagonal", causal_attention_renormalised_hides_diagonal,
       "a token sees itself: keep j <= i (tril with diagonal 0), not j < i",
       "weights = softmax(scores) * tril(ones(T, T)), renormalised"},
      {"causal_attention_renormalised_off_by_one", causal_attention_renormalised_off_by_one,
       "keep j <= i: tril with diagonal 0, not 1; query i saw key i + 1",
       "weights = softmax(scores) * tril(ones(T, T)), renormalised"},
      {"causal_attention_renormalised_no_scale", causal_attention_renormalised_no_scale,
       "divide the scores by sqrt(D) before the softmax",
       "weights = softmax(q k^T / sqrt(D)) * tril, renormalised"},
      {"causal_attention_renormalised_scale_by_value_width",
       causal_attention_renormalised_scale_by_value_width,
       "D in sqrt(D) is the width of q and k (q.size(-1)), not of v",
       "weights = softmax(q k^T / sqrt(D)) * tril, renormalised, D = q.size(-1)"},
      {"causal_attention_renormalised_reads_memory", causal_attention_renormalised_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "sliced view's memory is in another order",
       "v[i, j] is element (i, j) of v as a tensor, not of its memory"},
      {"causal_attention_renormalised_per_batch", causal_attention_renormalised_per_batch,
       "attend the whole batch at once (matmul broadcasts over the leading dims): a loop over the "
       "batch has nothing to stack when the batch is empty",
       "output (..., T, D_v), for any batch, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
