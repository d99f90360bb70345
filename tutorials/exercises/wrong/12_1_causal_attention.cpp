// Exercise 12.1 (causal_attention): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <cmath>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: hides the diagonal too (j >= i): each token cannot see itself.
Tensor causal_attention_hides_diagonal(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor hidden = triu(ones({T, T}, Dtype::boolean), 0);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: lets query i see key i + 1.
Tensor causal_attention_off_by_one(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor hidden = triu(ones({T, T}, Dtype::boolean), 2);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: zeroes the future after the softmax, without renormalising.
Tensor causal_attention_mask_after_softmax(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor weights = softmax(matmul(q, transpose(k, -2, -1)) / scale, -1);
  return matmul(masked_fill(weights, triu(ones({T, T}, Dtype::boolean), 1), 0.0f), v);
}

// Wrong: forgets to divide the scores by sqrt(D).
Tensor causal_attention_no_scale(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const Tensor scores = matmul(q, transpose(k, -2, -1));
  const Tensor hidden = triu(ones({T, T}, Dtype::boolean), 1);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: scales by the square root of the values' width, not the keys'.
Tensor causal_attention_scale_by_value_width(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(v.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor hidden = triu(ones({T, T}, Dtype::boolean), 1);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: hides the past instead of the future (the mask upside down: query i sees j >= i).
Tensor causal_attention_inverted_mask(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor hidden = tril(ones({T, T}, Dtype::boolean), -1);
  return matmul(softmax(masked_fill(scores, hidden, -INFINITY), -1), v);
}

// Wrong: the right numbers from loops over to_vector(), with no history: no gradient flows
// through it, so a model cannot learn through it.
Tensor causal_attention_loops(const Tensor& q, const Tensor& k, const Tensor& v) {
  const Tensor out = solution::causal_attention(detach(q), detach(k), detach(v));
  return from_vector(out.to_vector<float>(), out.shape());
}

// Wrong: reads v's memory in order, as if it were contiguous (a sliced view is not).
Tensor causal_attention_reads_memory(const Tensor& q, const Tensor& k, const Tensor& v) {
  return solution::causal_attention(q, k, memory_order(v));
}

// Wrong: passes masked_fill the mask of what to keep (tril), so it hides the past and the
// diagonal and keeps the future.
Tensor causal_attention_keep_mask(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  return matmul(softmax(masked_fill(scores, tril(ones({T, T}, Dtype::boolean)), -INFINITY), -1), v);
}

// Wrong: the softmax as e^s / sum e^s, without subtracting each row's max: e^s overflows when
// the scores reach the hundreds.
Tensor causal_attention_softmax_without_max(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  const Tensor e = exp(masked_fill(scores, triu(ones({T, T}, Dtype::boolean), 1), -INFINITY));
  return matmul(e / sum(e, -1, /*keepdim=*/true), v);
}

// Wrong: hides the future with -100 instead of -inf: e^-100 is not 0 next to scores that are
// themselves below -100, so the future leaks in.
Tensor causal_attention_mask_minus_100(const Tensor& q, const Tensor& k, const Tensor& v) {
  const int64_t T = q.size(-2);
  const float scale = static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale;
  return matmul(softmax(masked_fill(scores, triu(ones({T, T}, Dtype::boolean), 1), -100.0f), -1),
                v);
}

// Wrong: attends batch element by batch element and stacks the results: stack() of none (an
// empty batch) is an error.
Tensor causal_attention_per_batch(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.dim() < 3) return solution::causal_attention(q, k, v);  // no batch
  std::vector<Tensor> each;
  for (int64_t b = 0; b < q.size(0); ++b)
    each.push_back(solution::causal_attention(select(q, 0, b), select(k, 0, b), select(v, 0, b)));
  return stack(each, 0);
}

const Catalogue<signature::causal_attention>& causal_attention_mistakes() {
  static const Catalogue<signature::causal_attention> c = {
      {"causal_attention_hides_diagonal", causal_attention_hides_diagonal,
       "a token sees itself: hide j > i (triu with diagonal 1), not j >= i",
       "query i may see keys j <= i"},
      {"causal_attention_off_by_one", causal_attention_off_by_one,
       "hide every j > i (triu with diagonal 1): query i saw key i + 1, one step of the future",
       "query i may see keys j <= i"},
      {"causal_attention_mask_after_softmax", causal_attention_mask_after_softmax,
       "mask with -inf before the softmax (or renormalise each row after zeroing): the rows "
       "no longer sum to 1",
       "output = softmax(masked(q k^T / sqrt(D))) v"},
      {"causal_attention_no_scale", causal_attention_no_scale,
       "divide the scores by sqrt(D) before the mask and the softmax",
       "output = softmax(masked(q k^T / sqrt(D))) v"},
      {"causal_attention_scale_by_value_width", causal_attention_scale_by_value_width,
       "D in sqrt(D) is the width of q and k (q.size(-1)), not of v",
       "output = softmax(masked(q k^T / sqrt(D))) v, D = q.size(-1)"},
      {"causal_attention_inverted_mask", causal_attention_inverted_mask,
       "hide the future (j > i: triu with diagonal 1), not the past",
       "query i may see keys j <= i"},
      {"causal_attention_loops", causal_attention_loops,
       "write it with qkv's ops (matmul, masked_fill, softmax): numbers copied through "
       "to_vector() carry no gradient, so the tiny GPT cannot learn through them",
       "output = softmax(masked(q k^T / sqrt(D))) v, recorded by autograd", "no gradient flows"},
      {"causal_attention_reads_memory", causal_attention_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "sliced view's memory is in another order",
       "v[i, j] is element (i, j) of v as a tensor, not of its memory"},
      {"causal_attention_keep_mask", causal_attention_keep_mask,
       "masked_fill writes -inf where its mask is true: give it what to hide (triu with "
       "diagonal 1, the future), not what to keep",
       "query i may see keys j <= i"},
      {"causal_attention_softmax_without_max", causal_attention_softmax_without_max,
       "take the softmax with softmax(..., -1) (each row's max subtracted first): e^s overflows "
       "float32 for s > 88",
       "output = softmax(masked(q k^T / sqrt(D))) v, e^(s - max) / sum e^(s - max)"},
      {"causal_attention_mask_minus_100", causal_attention_mask_minus_100,
       "hide with -inf, not a large negative number: scores can be lower than it, and then the "
       "future gets weight",
       "masked(s)[i, j] = -inf for j > i, so e^-inf = 0 exactly"},
      {"causal_attention_per_batch", causal_attention_per_batch,
       "attend the whole batch at once (matmul broadcasts over the leading dims): a loop over the "
       "batch has nothing to stack when the batch is empty",
       "output (..., T, D_v), for any batch, 0 included"}};
  return c;
}

}  // namespace qkv::exercises::wrong
