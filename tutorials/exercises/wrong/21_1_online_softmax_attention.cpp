// Exercise 21.1 (online_softmax_attention): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <algorithm>
#include <cmath>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: does not rescale acc and l when the max grows.
Tensor online_softmax_no_rescale(const Tensor& scores, const Tensor& v, int64_t tile) {
  const int64_t T = scores.size(0), D = v.size(1);
  const std::vector<float> s = scores.to_vector<float>(), vv = v.to_vector<float>();
  float m = -INFINITY, l = 0.0f;
  std::vector<float> acc(static_cast<size_t>(D), 0.0f);
  for (int64_t t0 = 0; t0 < T; t0 += tile) {
    const int64_t t1 = std::min(T, t0 + tile);
    for (int64_t j = t0; j < t1; ++j) m = std::max(m, s[static_cast<size_t>(j)]);
    for (int64_t j = t0; j < t1; ++j) {
      const float p = std::exp(s[static_cast<size_t>(j)] - m);
      l += p;
      for (int64_t d = 0; d < D; ++d)
        acc[static_cast<size_t>(d)] += p * vv[static_cast<size_t>(j * D + d)];
    }
  }
  for (float& a : acc) a /= l;
  return from_vector(acc, {D});
}

// Wrong: keeps no running max: e^s overflows.
Tensor online_softmax_no_max(const Tensor& scores, const Tensor& v, int64_t tile) {
  const int64_t T = scores.size(0), D = v.size(1);
  const std::vector<float> s = scores.to_vector<float>(), vv = v.to_vector<float>();
  float l = 0.0f;
  std::vector<float> acc(static_cast<size_t>(D), 0.0f);
  (void)tile;
  for (int64_t j = 0; j < T; ++j) {
    const float p = std::exp(s[static_cast<size_t>(j)]);
    l += p;
    for (int64_t d = 0; d < D; ++d)
      acc[static_cast<size_t>(d)] += p * vv[static_cast<size_t>(j * D + d)];
  }
  for (float& a : acc) a /= l;
  return from_vector(acc, {D});
}

// Wrong: rescales the running sum but not the accumulator.
Tensor online_softmax_rescales_l_only(const Tensor& scores, const Tensor& v, int64_t tile) {
  const int64_t T = scores.size(0), D = v.size(1);
  const std::vector<float> s = scores.to_vector<float>(), vv = v.to_vector<float>();
  float m = -INFINITY, l = 0.0f;
  std::vector<float> acc(static_cast<size_t>(D), 0.0f);
  for (int64_t t0 = 0; t0 < T; t0 += tile) {
    const int64_t t1 = std::min(T, t0 + tile);
    float m_new = m;
    for (int64_t j = t0; j < t1; ++j) m_new = std::max(m_new, s[static_cast<size_t>(j)]);
    l *= std::exp(m - m_new);
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

}  // namespace qkv::exercises::wrong
