// Exercise 05.1, after lesson 05: cross_entropy_backward.
//
// The gradient of the mean cross-entropy loss (lesson 05's loss, torch's F.cross_entropy) with
// respect to the logits, from the logits alone: logits (N, V) float32, targets (N,) int64.
//   loss = mean over rows i of -log softmax(logits_i)[targets_i]
//   dlogits[i, j] = (softmax(logits_i)_j - [j == targets_i]) / N
// The softmax of each row is a probability distribution; the gradient pushes every logit by its
// probability and pulls the right one back by 1, and the mean divides by the N rows. Take the
// softmax so that it cannot overflow (the checker uses logits in the hundreds).
//
// Check it: ./build/release/tutorials/exercises/check_exercises 05.1
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets) {
  // Write your code here, in place of the line below.
  not_implemented("05.1", "cross_entropy_backward",
                  "(softmax(logits) - one_hot(targets)) / N, row by row");
}

}  // namespace qkv::exercises
