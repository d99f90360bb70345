// Exercise 02.2 (matmul_backward): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
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

}  // namespace qkv::exercises::wrong
