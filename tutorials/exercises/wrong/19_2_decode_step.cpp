// Exercise 19.2 (decode_step): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <cmath>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: applies a causal mask aligned to the first key: sees key 0 only.
Tensor decode_step_left_aligned_mask(const Tensor& q, const Tensor& k_cache,
                                     const Tensor& v_cache) {
  const int64_t T = k_cache.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k_cache, -2, -1)) / scale;  // (..., 1, T)
  const Tensor hidden = triu(ones({1, T}, Dtype::boolean), 1);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v_cache);
}

// Wrong: forgets to divide the scores by sqrt(D).
Tensor decode_step_no_scale(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  return matmul(softmax(matmul(q, transpose(k_cache, -2, -1)), -1), v_cache);
}

// Wrong: attends to the newest key only.
Tensor decode_step_last_key_only(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  (void)q;
  (void)k_cache;
  return narrow(v_cache, -2, v_cache.size(-2) - 1, 1);
}

// Wrong: scales by the square root of the values' width, not the keys'.
Tensor decode_step_scale_by_value_width(const Tensor& q, const Tensor& k_cache,
                                        const Tensor& v_cache) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(v_cache.size(-1))));
  return matmul(softmax(matmul(q, transpose(k_cache, -2, -1)) / scale, -1), v_cache);
}

// Wrong: the softmax over the queries (dim -2, of size 1): every weight becomes 1.
Tensor decode_step_softmax_over_queries(const Tensor& q, const Tensor& k_cache,
                                        const Tensor& v_cache) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  return matmul(softmax(matmul(q, transpose(k_cache, -2, -1)) / scale, -2), v_cache);
}

// Wrong: reads k_cache's memory in order, as if it were contiguous (a transposed view is not).
Tensor decode_step_reads_memory(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  return solution::decode_step(q, memory_order(k_cache), v_cache);
}

// Wrong: decodes batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor decode_step_per_batch(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache) {
  std::vector<Tensor> each;
  for (int64_t b = 0; b < q.size(0); ++b)
    each.push_back(
        solution::decode_step(select(q, 0, b), select(k_cache, 0, b), select(v_cache, 0, b)));
  return stack(each, 0);
}

// Wrong: the softmax as e^s / sum e^s, without subtracting the row's max: e^s overflows when
// the scores reach the hundreds.
Tensor decode_step_softmax_without_max(const Tensor& q, const Tensor& k_cache,
                                       const Tensor& v_cache) {
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor e = exp(matmul(q, transpose(k_cache, -2, -1)) / scale);
  return matmul(e / sum(e, -1, /*keepdim=*/true), v_cache);
}

const Catalogue<signature::decode_step>& decode_step_mistakes() {
  static const Catalogue<signature::decode_step> c = {
      {"decode_step_left_aligned_mask", decode_step_left_aligned_mask,
       "the newest query sees every cached key: no mask aligned to the first key",
       "output = softmax(q k_cache^T / sqrt(D)) v_cache, over all T keys"},
      {"decode_step_no_scale", decode_step_no_scale,
       "divide the scores by sqrt(D) before the softmax",
       "output = softmax(q k_cache^T / sqrt(D)) v_cache"},
      {"decode_step_last_key_only", decode_step_last_key_only,
       "attend to every cached key, not the newest alone",
       "output = softmax(q k_cache^T / sqrt(D)) v_cache, over all T keys"},
      {"decode_step_scale_by_value_width", decode_step_scale_by_value_width,
       "D in sqrt(D) is the width of q and the keys, not of the values",
       "output = softmax(q k_cache^T / sqrt(D)) v_cache, D = q.size(-1)"},
      {"decode_step_softmax_over_queries", decode_step_softmax_over_queries,
       "take the softmax over the keys (dim -1): over the one query every weight is 1",
       "softmax over the T keys"},
      {"decode_step_reads_memory", decode_step_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "k_cache[i, j] is element (i, j) of k_cache as a tensor, not of its memory"},
      {"decode_step_per_batch", decode_step_per_batch,
       "attend the whole batch at once (matmul broadcasts over it): a loop over the batch has "
       "nothing to stack when the batch is empty",
       "output (B, H, 1, D_v), for any B, 0 included"},
      {"decode_step_softmax_without_max", decode_step_softmax_without_max,
       "take the softmax with softmax(..., -1) (the row's max subtracted first): e^s overflows "
       "float32 for s > 88",
       "output = softmax(q k_cache^T / sqrt(D)) v_cache, e^(s - max) / sum e^(s - max)"}};
  return c;
}

}  // namespace qkv::exercises::wrong
