// Exercise 21.1 (online_softmax_attention), a reference solution. Try the exercise first:
// tutorials/exercises/learner/21_1_online_softmax_attention.cpp states the task.
#include <algorithm>
#include <cmath>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor online_softmax_attention(const Tensor& scores, const Tensor& v, int64_t tile) {
  const int64_t T = scores.size(0), D = v.size(1);
  const std::vector<float> s = scores.to_vector<float>(), vv = v.to_vector<float>();
  float m = -INFINITY, l = 0.0f;
  std::vector<float> acc(static_cast<size_t>(D), 0.0f);
  for (int64_t t0 = 0; t0 < T; t0 += tile) {
    const int64_t t1 = std::min(T, t0 + tile);
    float m_new = m;
    for (int64_t j = t0; j < t1; ++j) m_new = std::max(m_new, s[static_cast<size_t>(j)]);
    const float rescale = std::exp(m - m_new);  // 0 on the first tile: e^(-inf)
    l *= rescale;
    for (float& a : acc) a *= rescale;
    for (int64_t j = t0; j < t1; ++j) {
      const float p = std::exp(s[static_cast<size_t>(j)] - m_new);
      l += p;
      for (int64_t d = 0; d < D; ++d)
        acc[static_cast<size_t>(d)] += p * vv[static_cast<size_t>(j * D + d)];
    }
    m = m_new;
  }
  for (float& a : acc) a /= l;
  return from_vector(acc, {D});
}

}  // namespace qkv::exercises::solution
