// Exercise 01.1 (broadcast_add), a reference solution. Try the exercise first:
// tutorials/exercises/learner/01_1_broadcast_add.cpp states the task.
#include <algorithm>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

Tensor broadcast_add(const Tensor& a, const Tensor& b) {
  const int64_t n = std::max(a.dim(), b.dim());
  // The output's shape, from the right: a missing dim counts as size 1.
  auto size_at = [n](const Tensor& t, int64_t d) {
    const int64_t td = d - (n - t.dim());
    return td >= 0 ? t.size(td) : int64_t{1};
  };
  Shape out(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    const int64_t sa = size_at(a, d), sb = size_at(b, d);
    check(sa == sb || sa == 1 || sb == 1, "broadcast_add", "shapes that broadcast, got ",
          shape_str(a.shape()), " and ", shape_str(b.shape()));
    out[static_cast<size_t>(d)] = sa == 1 ? sb : sa;
  }
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  int64_t numel = 1;
  for (int64_t s : out) numel *= s;
  std::vector<float> c(static_cast<size_t>(numel));
  for (int64_t flat = 0; flat < numel; ++flat) {
    // Peel the output index off flat, last dim first; each input's row-major index grows by
    // i * (its stride) along a dim it has at full size, and not at all along a stretched one.
    int64_t rest = flat, ia = 0, ib = 0, stride_a = 1, stride_b = 1;
    for (int64_t d = n - 1; d >= 0; --d) {
      const int64_t size = out[static_cast<size_t>(d)], i = rest % size;
      rest /= size;
      if (size_at(a, d) > 1) ia += i * stride_a;
      if (size_at(b, d) > 1) ib += i * stride_b;
      stride_a *= size_at(a, d);
      stride_b *= size_at(b, d);
    }
    c[static_cast<size_t>(flat)] = av[static_cast<size_t>(ia)] + bv[static_cast<size_t>(ib)];
  }
  return from_vector(c, out);
}

}  // namespace qkv::exercises::solution
