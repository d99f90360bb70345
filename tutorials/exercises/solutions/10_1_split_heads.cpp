// Exercise 10.1 (split_heads), a reference solution. Try the exercise first:
// tutorials/exercises/learner/10_1_split_heads.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor split_heads(const Tensor& x, int64_t heads) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / heads;
  return transpose(view(x, {B, T, heads, D}), 1, 2);
}

}  // namespace qkv::exercises::solution
