// Exercise 05.1 (cross_entropy_backward), a reference solution. Try the exercise first:
// tutorials/exercises/learner/05_1_cross_entropy_backward.cpp states the task.
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets) {
  const int64_t N = logits.size(0), V = logits.size(1);
  // one_hot[i, j] = 1 where j is row i's target
  std::vector<float> hot(static_cast<size_t>(N * V), 0.0f);
  const std::vector<int64_t> t = targets.to_vector<int64_t>();
  for (int64_t i = 0; i < N; ++i) hot[static_cast<size_t>(i * V + t[static_cast<size_t>(i)])] = 1;
  return (softmax(logits, -1) - from_vector(hot, {N, V})) / static_cast<float>(N);
}

}  // namespace qkv::exercises::solution
