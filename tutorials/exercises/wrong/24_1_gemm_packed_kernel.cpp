// Exercise 24.1 (gemm_packed_kernel): typical wrong answers, each a whole function with one
// mistake. The checker must reject every one (prove_exercises, a ctest test).
#include <algorithm>
#include <vector>
#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises::wrong {

// Wrong: adds to C instead of overwriting it (C is not zeroed).
void gemm_packed_kernel_accumulates(int64_t M, int64_t N, int64_t K, const float* A, const float* B,
                                    float* C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j) C[i * N + j] += A[i * K + k] * B[k * N + j];
}

// Wrong: computes only whole 4 x 8 tiles: the edges stay as they were.
void gemm_packed_kernel_drops_edges(int64_t M, int64_t N, int64_t K, const float* A, const float* B,
                                    float* C) {
  for (int64_t i = 0; i + 4 <= M; ++i)
    for (int64_t j = 0; j + 8 <= N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
}

// Wrong: reads B as if it were stored (N, K).
void gemm_packed_kernel_reads_b_transposed(int64_t M, int64_t N, int64_t K, const float* A,
                                           const float* B, float* C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[(j * K + k) % (K * N)];
      C[i * N + j] = sum;
    }
}

}  // namespace qkv::exercises::wrong
