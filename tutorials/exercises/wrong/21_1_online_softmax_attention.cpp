// Exercise 21.1 (online_softmax_attention): the catalogue of known mistakes, each a whole function
// with one mistake, its hint and the line of the math it breaks (wrong.h). The checker names the
// one a learner made; prove_exercises proves it rejects and names every one.
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

// Wrong: visits whole tiles only: the keys of a last, partial tile are never seen.
Tensor online_softmax_drops_partial_tile(const Tensor& scores, const Tensor& v, int64_t tile) {
  const int64_t T = scores.size(0), whole = T / tile * tile;
  if (whole == 0) return full({v.size(1)}, NAN);  // l stayed 0: 0 / 0
  return solution::online_softmax_attention(narrow(scores, 0, 0, whole), narrow(v, 0, 0, whole),
                                            tile);
}

// Wrong: takes each tile's own max as m, not the running max(m, tile max): when a tile's
// scores are far below the last tile's, e^(m - m') overflows.
Tensor online_softmax_tile_max_only(const Tensor& scores, const Tensor& v, int64_t tile) {
  const int64_t T = scores.size(0), D = v.size(1);
  const std::vector<float> s = scores.to_vector<float>(), vv = v.to_vector<float>();
  float m = -INFINITY, l = 0.0f;
  std::vector<float> acc(static_cast<size_t>(D), 0.0f);
  for (int64_t t0 = 0; t0 < T; t0 += tile) {
    const int64_t t1 = std::min(T, t0 + tile);
    float m_new = -INFINITY;
    for (int64_t j = t0; j < t1; ++j) m_new = std::max(m_new, s[static_cast<size_t>(j)]);
    const float r = std::exp(m - m_new);
    l *= r;
    for (float& a : acc) a *= r;
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

// Wrong: reads v's memory in order, as if it were contiguous (a transposed view is not).
Tensor online_softmax_reads_memory(const Tensor& scores, const Tensor& v, int64_t tile) {
  return solution::online_softmax_attention(scores, memory_order(v), tile);
}

const Catalogue<signature::online_softmax_attention>& online_softmax_mistakes() {
  static const Catalogue<signature::online_softmax_attention> c = {
      {"online_softmax_no_rescale", online_softmax_no_rescale,
       "when a tile raises the max m -> m', multiply both acc and l by e^(m - m') before "
       "adding the tile",
       "acc <- acc * e^(m - m') + ..., l <- l * e^(m - m') + ..."},
      {"online_softmax_no_max", online_softmax_no_max,
       "keep a running max m and take e^(s - m): e^s overflows float32 for s > 88",
       "m' = max(m, max of the tile's scores)"},
      {"online_softmax_rescales_l_only", online_softmax_rescales_l_only,
       "rescale the accumulator too: acc *= e^(m - m'), as l is",
       "acc <- acc * e^(m - m') + sum_j e^(s_j - m') v_j"},
      {"online_softmax_drops_partial_tile", online_softmax_drops_partial_tile,
       "visit the last tile even when it is partial: it has min(tile, T - t0) keys",
       "for each tile, the last one of T % tile keys included"},
      {"online_softmax_tile_max_only", online_softmax_tile_max_only,
       "the max is a running one: m' = max(m, the tile's max), never lower than m",
       "m' = max(m, max of the tile's scores)"},
      {"online_softmax_reads_memory", online_softmax_reads_memory,
       "use qkv's ops (or to_vector(), row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "v[i, j] is element (i, j) of v as a tensor, not of its memory"}};
  return c;
}

}  // namespace qkv::exercises::wrong
