// Exercise 22.1 (rope_rotate): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include <cmath>
#include <functional>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: counts positions from 0, ignoring the offset (a cached prefix).
Tensor rope_rotate_ignores_offset(const Tensor& x, int64_t offset) {
  (void)offset;
  return solution::rope_rotate(x, 0);
}

// Wrong: pairs neighbours (2i, 2i + 1), in and out: Meta's and llama2.c's convention (and
// RoFormer's), where qkv, like Hugging Face, pairs the halves.
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
  const Tensor turned = stack({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);
  return reshape(turned, x.shape());  // back to neighbours side by side
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

// The rotation with the angle of position p and pair i given by `angle(p, i)`.
Tensor rope_with_angles(const Tensor& x, int64_t offset,
                        const std::function<double(int64_t, int64_t)>& angle) {
  const int64_t T = x.size(-2), D = x.size(-1), half = D / 2;
  std::vector<float> c(static_cast<size_t>(T * half)), s(c.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      c[static_cast<size_t>(t * half + i)] = static_cast<float>(std::cos(angle(offset + t, i)));
      s[static_cast<size_t>(t * half + i)] = static_cast<float>(std::sin(angle(offset + t, i)));
    }
  const Tensor cos_t = from_vector(c, {T, half}), sin_t = from_vector(s, {T, half});
  const Tensor x1 = narrow(x, -1, 0, half), x2 = narrow(x, -1, half, half);
  return cat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);
}

// Wrong: theta_i = 10000^(-i / D), without the 2.
Tensor rope_rotate_theta_exponent(const Tensor& x, int64_t offset) {
  const double D = static_cast<double>(x.size(-1));
  return rope_with_angles(x, offset, [D](int64_t p, int64_t i) {
    return static_cast<double>(p) * std::pow(10000.0, -static_cast<double>(i) / D);
  });
}

// Wrong: counts positions from 1 (row t at offset + t + 1).
Tensor rope_rotate_positions_from_one(const Tensor& x, int64_t offset) {
  return solution::rope_rotate(x, offset + 1);
}

// Wrong: reads x's memory in order, as if it were contiguous (a transposed view is not).
Tensor rope_rotate_reads_memory(const Tensor& x, int64_t offset) {
  return solution::rope_rotate(memory_order(x), offset);
}

const Catalogue<signature::rope_rotate>& rope_rotate_mistakes() {
  static const Catalogue<signature::rope_rotate> c = {
      {"rope_rotate_ignores_offset", rope_rotate_ignores_offset,
       "row t is at position offset + t (the cached tokens come first)", "p = offset + t"},
      {"rope_rotate_neighbours", rope_rotate_neighbours,
       "qkv pairs dim i with dim i + D/2 (rotate half, Hugging Face's), not neighbours 2i and "
       "2i + 1 (Meta's and llama2.c's)",
       "y_i = x_i cos - x_{i+D/2} sin"},
      {"rope_rotate_backwards", rope_rotate_backwards,
       "turn forwards: y_i = x_i cos - x_{i+D/2} sin (the sign of sin swapped)",
       "y_i = x_i cos - x_{i+D/2} sin, y_{i+D/2} = x_{i+D/2} cos + x_i sin"},
      {"rope_rotate_theta_exponent", rope_rotate_theta_exponent,
       "theta_i = 10000^(-2i / D): the exponent has a 2", "theta_i = 10000^(-2i / D)"},
      {"rope_rotate_positions_from_one", rope_rotate_positions_from_one,
       "positions count from 0: row t of a fresh sequence is at position t", "p = offset + t"},
      {"rope_rotate_reads_memory", rope_rotate_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "x[i, j] is element (i, j) of x as a tensor, not of its memory"}};
  return c;
}

}  // namespace qkv::exercises::wrong
