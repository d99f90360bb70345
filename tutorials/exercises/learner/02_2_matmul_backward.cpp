// Exercise 02.2, after lesson 02: matmul_backward.
//
// The backward of C = A @ B (lesson 02), A (M, K), B (K, N), given dC (M, N):
//   dA = dC @ B^T   (M, K)        dB = A^T @ dC   (K, N)
// Each entry of A meets a row of B in C's row: dA[i, k] = sum_j dC[i, j] B[k, j].
//
// Check it: ./build/release/tutorials/exercises/check_exercises 02.2
// (build first: cmake --build --preset release --target check_exercises)
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc) {
  // Write your code here, in place of the line below.
  not_implemented("02.2", "matmul_backward", "dA = dC B^T and dB = A^T dC");
}

}  // namespace qkv::exercises
