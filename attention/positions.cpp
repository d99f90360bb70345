// positions.cpp: RoPE and ALiBi (see positions.h).
#include "attention/positions.h"

#include <cmath>

namespace qkv::attention {

Tensor rope(const Tensor& x, int64_t offset, double base) {
  check(x.defined() && x.dtype() == Dtype::float32 && x.dim() >= 2 && x.size(-1) % 2 == 0, "rope",
        "a float32 input (..., T, D) with D even, got ", dtype_and_shape_of(x));
  check(offset >= 0 && base > 1, "rope", "offset >= 0 and base > 1, got offset ", offset,
        " and base ", base);
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  // cos and sin of every (position, pair) angle, (T, D/2), computed in double.
  Tensor cos_t = Tensor::empty({T, half}), sin_t = Tensor::empty({T, half});
  float *c = cos_t.data_ptr(), *s = sin_t.data_ptr();
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      const double theta =
          std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(2 * half));
      const double angle = static_cast<double>(offset + t) * theta;
      c[t * half + i] = static_cast<float>(std::cos(angle));
      s[t * half + i] = static_cast<float>(std::sin(angle));
    }
  const Tensor x1 = narrow(x, -1, 0, half), x2 = narrow(x, -1, half, half);
  return cat({x1 * cos_t - x2 * sin_t, x2 * cos_t + x1 * sin_t}, -1);
}

std::vector<float> alibi_slopes(int64_t heads) {
  check(heads > 0, "alibi_slopes", "heads > 0, got ", heads);
  auto power_of_two = [](int64_t n) {  // 2^(-8/n), 2^(-16/n), ..., 2^(-8)
    std::vector<float> s;
    for (int64_t h = 0; h < n; ++h)
      s.push_back(static_cast<float>(
          std::pow(2.0, -8.0 * static_cast<double>(h + 1) / static_cast<double>(n))));
    return s;
  };
  int64_t p = 1;
  while (p * 2 <= heads) p *= 2;
  std::vector<float> slopes = power_of_two(p);
  const std::vector<float> next = power_of_two(2 * p);
  for (int64_t h = 0; static_cast<int64_t>(slopes.size()) < heads; h += 2)
    slopes.push_back(next[static_cast<size_t>(h)]);
  return slopes;
}

Tensor alibi_bias(const std::vector<float>& slopes, int64_t T_q, int64_t T_k) {
  check(T_q >= 0 && T_k >= 0, "alibi_bias", "sizes >= 0, got ", T_q, " and ", T_k);
  const int64_t H = static_cast<int64_t>(slopes.size());
  Tensor bias = Tensor::empty({H, T_q, T_k});
  float* b = bias.data_ptr();
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < T_q; ++i)
      for (int64_t j = 0; j < T_k; ++j)
        b[(h * T_q + i) * T_k + j] =
            -(slopes[static_cast<size_t>(h)] * static_cast<float>(std::abs(i + T_k - T_q - j)));
  return bias;
}

}  // namespace qkv::attention
