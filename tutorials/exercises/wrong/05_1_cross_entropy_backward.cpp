// Exercise 05.1 (cross_entropy_backward): the catalogue of known mistakes, each a whole function
// with one mistake, its hint and the line of the math it breaks (wrong.h). The checker names the
// one a learner made; prove_exercises proves it rejects and names every one.
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// one_hot[i, j] = 1 where j is row i's target.
Tensor targets_one_hot(const Tensor& targets, int64_t V) {
  const int64_t N = targets.size(0);
  std::vector<float> hot(static_cast<size_t>(N * V), 0.0f);
  const std::vector<int64_t> t = targets.to_vector<int64_t>();
  for (int64_t i = 0; i < N; ++i) hot[static_cast<size_t>(i * V + t[static_cast<size_t>(i)])] = 1;
  return from_vector(hot, {N, V});
}

// Wrong: the gradient of the summed loss, not of its mean (no division by N).
Tensor cross_entropy_backward_no_mean(const Tensor& logits, const Tensor& targets) {
  return softmax(logits, -1) - targets_one_hot(targets, logits.size(1));
}

// Wrong: one_hot - softmax: the sign turned over (a step up the loss).
Tensor cross_entropy_backward_one_hot_minus_softmax(const Tensor& logits, const Tensor& targets) {
  return (targets_one_hot(targets, logits.size(1)) - softmax(logits, -1)) /
         static_cast<float>(logits.size(0));
}

// Wrong: the softmax as e^x / sum e^x, without the row's max: e^x overflows.
Tensor cross_entropy_backward_no_max(const Tensor& logits, const Tensor& targets) {
  const Tensor e = exp(logits);
  return (e / sum(e, -1, /*keepdim=*/true) - targets_one_hot(targets, logits.size(1))) /
         static_cast<float>(logits.size(0));
}

// Wrong: divides by the vocabulary V instead of the rows N.
Tensor cross_entropy_backward_divides_by_v(const Tensor& logits, const Tensor& targets) {
  return (softmax(logits, -1) - targets_one_hot(targets, logits.size(1))) /
         static_cast<float>(logits.size(1));
}

// Wrong: only the target's -1 / N: forgets that every logit moves the softmax's sum.
Tensor cross_entropy_backward_target_only(const Tensor& logits, const Tensor& targets) {
  return targets_one_hot(targets, logits.size(1)) * (-1.0f / static_cast<float>(logits.size(0)));
}

// Wrong: reads the logits' memory in order, as if it were contiguous (a transposed view is not).
Tensor cross_entropy_backward_reads_memory(const Tensor& logits, const Tensor& targets) {
  return solution::cross_entropy_backward(memory_order(logits), targets);
}

const Catalogue<signature::cross_entropy_backward>& cross_entropy_backward_mistakes() {
  static const Catalogue<signature::cross_entropy_backward> c = {
      {"cross_entropy_backward_no_mean", cross_entropy_backward_no_mean,
       "the loss is the mean over the N rows: divide the gradient by N",
       "dlogits = (softmax(logits) - one_hot(targets)) / N"},
      {"cross_entropy_backward_one_hot_minus_softmax", cross_entropy_backward_one_hot_minus_softmax,
       "softmax minus one_hot, not the other way: the gradient points up the loss",
       "dlogits = (softmax(logits) - one_hot(targets)) / N"},
      {"cross_entropy_backward_no_max", cross_entropy_backward_no_max,
       "subtract each row's max before exp (or call softmax): e^x overflows float32 for x > 88",
       "softmax(z)_j = e^(z_j - m) / sum_k e^(z_k - m), m = max_k z_k"},
      {"cross_entropy_backward_divides_by_v", cross_entropy_backward_divides_by_v,
       "divide by the number of rows N (the mean is over rows), not the vocabulary V",
       "dlogits = (...) / N"},
      {"cross_entropy_backward_target_only", cross_entropy_backward_target_only,
       "every logit gets its probability: log-sum-exp depends on all of them, not only the "
       "target's",
       "dlogits[i, j] = (softmax(logits_i)_j - [j == targets_i]) / N"},
      {"cross_entropy_backward_reads_memory", cross_entropy_backward_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "logits[i, j] is the element at row i, column j of logits as a tensor"}};
  return c;
}

}  // namespace qkv::exercises::wrong
