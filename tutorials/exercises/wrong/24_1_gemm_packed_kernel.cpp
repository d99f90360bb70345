// Exercise 24.1 (gemm_packed_kernel): the catalogue of known mistakes, each a whole function with
// one mistake, its hint and the line of the math it breaks (wrong.h). The checker names the one a
// learner made; prove_exercises proves it rejects and names every one.
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
  for (int64_t ib = 0; ib + 4 <= M; ib += 4)  // whole tiles only: ib + MR <= M
    for (int64_t jb = 0; jb + 8 <= N; jb += 8)
      for (int64_t i = ib; i < ib + 4; ++i)
        for (int64_t j = jb; j < jb + 8; ++j) {
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

// Wrong: stores each C element inside the k loop: with K = 0 C is never written.
void gemm_packed_kernel_stores_in_k_loop(int64_t M, int64_t N, int64_t K, const float* A,
                                         const float* B, float* C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        sum += A[i * K + k] * B[k * N + j];
        C[i * N + j] = sum;
      }
    }
}

// Wrong: stops the k loop one short (k < K - 1).
void gemm_packed_kernel_k_off_by_one(int64_t M, int64_t N, int64_t K, const float* A,
                                     const float* B, float* C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k + 1 < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
}

// Wrong: reads whole 8-column rows of B at the right edge, past B's last element when N is not
// a multiple of 8 (the numbers past the edge are never stored, so C is right: only
// AddressSanitizer sees it; check_exercises --asan).
void gemm_packed_kernel_reads_past_edge(int64_t M, int64_t N, int64_t K, const float* A,
                                        const float* B, float* C) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; j += 8) {
      float acc[8] = {};
      for (int64_t k = 0; k < K; ++k)
        for (int64_t jj = 0; jj < 8; ++jj) acc[jj] += A[i * K + k] * B[k * N + j + jj];
      for (int64_t jj = 0; jj < 8 && j + jj < N; ++jj) C[i * N + j + jj] = acc[jj];
    }
}

const Catalogue<signature::gemm_packed_kernel>& gemm_packed_kernel_mistakes() {
  static const Catalogue<signature::gemm_packed_kernel> c = {
      {"gemm_packed_kernel_accumulates", gemm_packed_kernel_accumulates,
       "write C, do not add to it: C held other numbers before (start each tile at 0)",
       "C = A B, over whatever C held"},
      {"gemm_packed_kernel_drops_edges", gemm_packed_kernel_drops_edges,
       "compute the partial tiles at the edges too (zero-padded panels, store the in-range "
       "part)",
       "C[i, j] for every i < M, j < N"},
      {"gemm_packed_kernel_reads_b_transposed", gemm_packed_kernel_reads_b_transposed,
       "B is row-major (K, N): element (k, j) is B[k * N + j]", "B[k, j] = B[k * N + j]"},
      {"gemm_packed_kernel_stores_in_k_loop", gemm_packed_kernel_stores_in_k_loop,
       "store C after the k loop, once per element: with K = 0 every C is 0",
       "C[i, j] = sum over k < K of A[i, k] B[k, j] (0 when K = 0)"},
      {"gemm_packed_kernel_k_off_by_one", gemm_packed_kernel_k_off_by_one,
       "the k loop runs over all K: k < K", "C[i, j] = sum over k < K of A[i, k] B[k, j]"},
      {"gemm_packed_kernel_reads_past_edge", gemm_packed_kernel_reads_past_edge,
       "pack B's edge panel zero-padded (or bound the loop by N): a read past B's last element "
       "is undefined, even when its result is thrown away",
       "read B[k * N + j] for j < N only", "AddressSanitizer: heap-buffer-overflow"}};
  return c;
}

}  // namespace qkv::exercises::wrong
