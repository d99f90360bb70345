// Exercise 10.2 (merge_heads), a reference solution. Try the exercise first:
// tutorials/exercises/learner/10_2_merge_heads.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor merge_heads(const Tensor& x) {
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return reshape(transpose(x, 1, 2), {B, T, H * D});
}

}  // namespace qkv::exercises::solution
