// Exercise 02.2 (matmul_backward): the catalogue of known mistakes, each a whole function with one
// mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: forgets to transpose B for dA.
MatmulGrads matmul_backward_no_transpose(const Tensor& a, const Tensor& b, const Tensor& dc) {
  return {matmul(dc, b), matmul(transpose(a, 0, 1), dc)};
}

// Wrong: swaps the two formulas.
MatmulGrads matmul_backward_swapped(const Tensor& a, const Tensor& b, const Tensor& dc) {
  return {matmul(transpose(a, 0, 1), dc), matmul(dc, transpose(b, 0, 1))};
}

// Wrong: returns dB transposed: dC^T A, (N, K).
MatmulGrads matmul_backward_db_transposed(const Tensor& a, const Tensor& b, const Tensor& dc) {
  return {matmul(dc, transpose(b, 0, 1)), matmul(transpose(dc, 0, 1), a)};
}

// Wrong: averages dB over the rows of C (a mean where the sum belongs).
MatmulGrads matmul_backward_mean_over_rows(const Tensor& a, const Tensor& b, const Tensor& dc) {
  return {matmul(dc, transpose(b, 0, 1)),
          matmul(transpose(a, 0, 1), dc) / static_cast<float>(a.size(0))};
}

// Wrong: loops over the inputs' memory as if each were contiguous (a transposed a and a sliced
// b are not).
MatmulGrads matmul_backward_reads_memory(const Tensor& a, const Tensor& b, const Tensor& dc) {
  return solution::matmul_backward(memory_order(a), memory_order(b), memory_order(dc));
}

// Wrong: dB as the sum over C's rows of outer(A[i], dC[i]), started from row 0: an empty batch
// has no row 0.
MatmulGrads matmul_backward_sum_from_row_0(const Tensor& a, const Tensor& b, const Tensor& dc) {
  auto outer = [&](int64_t i) {
    return matmul(unsqueeze(select(a, 0, i), 1), unsqueeze(select(dc, 0, i), 0));
  };
  Tensor db = outer(0);
  for (int64_t i = 1; i < a.size(0); ++i) db = db + outer(i);
  return {matmul(dc, transpose(b, 0, 1)), db};
}

const Catalogue<signature::matmul_backward>& matmul_backward_mistakes() {
  static const Catalogue<signature::matmul_backward> c = {
      {"matmul_backward_no_transpose", matmul_backward_no_transpose,
       "transpose B for dA: dA = dC B^T, (M, N) @ (N, K)", "dA = dC @ B^T"},
      {"matmul_backward_swapped", matmul_backward_swapped,
       "dA takes B and dB takes A: each input's gradient is made of the other input",
       "dA = dC @ B^T, dB = A^T @ dC"},
      {"matmul_backward_db_transposed", matmul_backward_db_transposed,
       "dB = A^T dC, (K, N): you computed dC^T A, its transpose", "dB = A^T @ dC"},
      {"matmul_backward_mean_over_rows", matmul_backward_mean_over_rows,
       "sum over C's rows, do not average: every row of C used all of B",
       "dB[k, j] = sum over i of A[i, k] dC[i, j]"},
      {"matmul_backward_reads_memory", matmul_backward_reads_memory,
       "read the inputs with qkv's ops or to_vector() (row-major whatever the layout), not "
       "data_ptr(): a transposed or sliced view's memory is in another order",
       "A[i, k] is the element at row i, column k of A as a tensor, not of its memory"},
      {"matmul_backward_sum_from_row_0", matmul_backward_sum_from_row_0,
       "compute dB = A^T dC with matmul: with no rows (M = 0) it is all zeros, and a sum "
       "started from row 0 has no row 0",
       "dB = A^T @ dC, zeros when M = 0"}};
  return c;
}

}  // namespace qkv::exercises::wrong
