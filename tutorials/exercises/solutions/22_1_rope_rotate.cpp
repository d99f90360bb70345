// Exercise 22.1 (rope_rotate), a reference solution. Try the exercise first:
// tutorials/exercises/learner/22_1_rope_rotate.cpp states the task.
#include <cmath>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor rope_rotate(const Tensor& x, int64_t offset) {
  const int64_t T = x.size(-2), D = x.size(-1), half = D / 2;
  std::vector<float> c(static_cast<size_t>(T * half)), s(c.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double theta =
          std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(D));
      const double angle = static_cast<double>(offset + t) * theta;
      c[static_cast<size_t>(t * half + i)] = static_cast<float>(std::cos(angle));
      s[static_cast<size_t>(t * half + i)] = static_cast<float>(std::sin(angle));
    }
  const Tensor cos_t = from_vector(c, {T, half}), sin_t = from_vector(s, {T, half});
  const Tensor x1 = narrow(x, -1, 0, half), x2 = narrow(x, -1, half, half);
  return cat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);
}

}  // namespace qkv::exercises::solution
