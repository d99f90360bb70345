// Exercise 19.3 (repeat_kv), a reference solution. Try the exercise first:
// tutorials/exercises/learner/19_3_repeat_kv.cpp states the task.
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor repeat_kv(const Tensor& kv, int64_t groups) {
  const int64_t B = kv.size(0), H_kv = kv.size(1), T = kv.size(2), D = kv.size(3);
  const Tensor spread = expand(unsqueeze(kv, 2), {B, H_kv, groups, T, D});
  return reshape(spread, {B, H_kv * groups, T, D});
}

}  // namespace qkv::exercises::solution
