// Exercise 01.1 (broadcast_add): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
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

// Wrong: reads a's memory in order, as if it were contiguous (a transposed view is not: its
// memory holds the numbers in another order). to_vector() reads any tensor in row-major order.
Tensor broadcast_add_reads_memory(const Tensor& a, const Tensor& b) {
  return solution::broadcast_add(memory_order(a), b);
}

// Wrong: takes the larger size on every dim, so a 0 against a 1 gives 1 (an empty batch
// becomes one row of zeros). The rule: a size of 1 stretches to the other size, even to 0.
Tensor broadcast_add_max_of_sizes(const Tensor& a, const Tensor& b) {
  const int64_t n = std::max(a.dim(), b.dim());
  Shape out(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    const int64_t sa = d < n - a.dim() ? 1 : a.size(d - (n - a.dim()));
    const int64_t sb = d < n - b.dim() ? 1 : b.size(d - (n - b.dim()));
    out[static_cast<size_t>(d)] = std::max(sa, sb);
  }
  if (a.numel() == 0 || b.numel() == 0) return zeros(out);  // its loop wrote nothing
  return solution::broadcast_add(a, b);
}

// Wrong: reads b.numel() floats of b's memory: an expanded view (stride 0, one row in memory
// standing for many) has fewer, so this reads past its end. Right numbers for a contiguous b;
// garbage, or nothing visible at all, for an expanded one: only AddressSanitizer sees it.
Tensor broadcast_add_reads_b_memory(const Tensor& a, const Tensor& b) {
  return solution::broadcast_add(a, memory_order(b));
}

const Catalogue<signature::broadcast_add>& broadcast_add_mistakes() {
  static const Catalogue<signature::broadcast_add> c = {
      {"broadcast_add_aligned_left", broadcast_add_aligned_left,
       "align the shapes from the right: (4, 1) against (3, 1, 5) is (1, 4, 1)",
       "pad the shorter shape with 1s on the left, then compare dims from the last"},
      {"broadcast_add_shape_of_a", broadcast_add_shape_of_a,
       "the output's shape takes each dim from whichever input is not 1 there, b's too",
       "out[d] = a[d] if b[d] == 1 else b[d]"},
      {"broadcast_add_flat_modulo", broadcast_add_flat_modulo,
       "work out each input's index dim by dim: a dim of size 1 reads index 0",
       "a's index along d = 0 if a has size 1 there, else the output's index along d"},
      {"broadcast_add_reads_memory", broadcast_add_reads_memory,
       "read the inputs with to_vector() (row-major whatever the layout), not data_ptr(): a "
       "transposed view's memory is in another order",
       "a's element (i, j) is a.to_vector()[i * cols + j], not data_ptr()[i * cols + j]"},
      {"broadcast_add_max_of_sizes", broadcast_add_max_of_sizes,
       "a size of 1 stretches to the other size, even to 0: (0, 3) + (3,) is (0, 3), not "
       "max(0, 1) = 1 rows",
       "out[d] = a[d] if b[d] == 1 else b[d]"},
      {"broadcast_add_reads_b_memory", broadcast_add_reads_b_memory,
       "read b with to_vector(), which follows its strides: an expanded view has less memory "
       "than elements",
       "b[i, j] is the element of b as a tensor", "AddressSanitizer: heap-buffer-overflow"}};
  return c;
}

}  // namespace qkv::exercises::wrong
