// Exercise 01.1 (broadcast_add): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <algorithm>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: aligns the shapes from the left instead of the right.
Tensor broadcast_add_aligned_left(const Tensor& a, const Tensor& b) {
  // Pads the shorter shape with 1s on the right: (4, 1) against (3, 1, 5) becomes (4, 1, 1).
  const int64_t n = std::max(a.dim(), b.dim());
  Shape sa = a.shape(), sb = b.shape();
  sa.resize(static_cast<size_t>(n), 1);
  sb.resize(static_cast<size_t>(n), 1);
  Shape out(static_cast<size_t>(n));
  for (size_t d = 0; d < out.size(); ++d) out[d] = std::max(sa[d], sb[d]);
  return reshape(a, sa) + reshape(b, sb) + zeros(out);
}

// Wrong: gives the output a's shape, whatever b adds.
Tensor broadcast_add_shape_of_a(const Tensor& a, const Tensor& b) {
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  std::vector<float> c(av.size());
  for (size_t i = 0; i < av.size(); ++i) c[i] = av[i] + bv[i % bv.size()];
  return from_vector(c, a.shape());
}

// Wrong: reads each input at the output's flat index modulo its size.
Tensor broadcast_add_flat_modulo(const Tensor& a, const Tensor& b) {
  const Tensor shape_only = zeros_like(a) + zeros_like(b);  // the right output shape
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  std::vector<float> c(static_cast<size_t>(shape_only.numel()));
  for (size_t i = 0; i < c.size(); ++i) c[i] = av[i % av.size()] + bv[i % bv.size()];
  return from_vector(c, shape_only.shape());
}

}  // namespace qkv::exercises::wrong
