// Exercise 22.1 (rope_rotate): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <cmath>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: counts positions from 0, ignoring the offset (a cached prefix).
Tensor rope_rotate_ignores_offset(const Tensor& x, int64_t offset) {
  (void)offset;
  return solution::rope_rotate(x, 0);
}

// Wrong: pairs neighbours (2i, 2i + 1) instead of halves.
Tensor rope_rotate_neighbours(const Tensor& x, int64_t offset) {
  const int64_t T = x.size(-2), D = x.size(-1), half = D / 2;
  Shape pairs = x.shape();
  pairs.back() = half;
  pairs.push_back(2);
  const Tensor xp = reshape(x, pairs);  // (..., T, D/2, 2)
  const Tensor x1 = select(xp, -1, 0), x2 = select(xp, -1, 1);
  std::vector<float> c(static_cast<size_t>(T * half)), s(c.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(offset + t) *
          std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(D));
      c[static_cast<size_t>(t * half + i)] = static_cast<float>(std::cos(angle));
      s[static_cast<size_t>(t * half + i)] = static_cast<float>(std::sin(angle));
    }
  const Tensor cos_t = from_vector(c, {T, half}), sin_t = from_vector(s, {T, half});
  return cat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);
}

// Wrong: turns the other way (the sign of sin swapped).
Tensor rope_rotate_backwards(const Tensor& x, int64_t offset) {
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
  return cat({x1 * cos_t + x2 * sin_t, x2 * cos_t - x1 * sin_t}, -1);
}

}  // namespace qkv::exercises::wrong
