// Exercise 24.1 (gemm_packed_kernel), a reference solution. Try the exercise first:
// tutorials/exercises/learner/24_1_gemm_packed_kernel.cpp states the task.
#include <algorithm>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::solution {

void gemm_packed_kernel(int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C) {
  constexpr int64_t MR = 4, NR = 8;
  // Pack A once as panels of MR rows: panel p holds A[p*MR + i][k] at [p][k][i], zero-padded.
  const int64_t panels = (M + MR - 1) / MR;
  std::vector<float> a_packed(static_cast<size_t>(panels * K * MR), 0.0f);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      a_packed[static_cast<size_t>((i / MR) * K * MR + k * MR + i % MR)] = A[i * K + k];
  std::vector<float> b_panel(static_cast<size_t>(K * NR));
  for (int64_t j0 = 0; j0 < N; j0 += NR) {
    const int64_t n = std::min(NR, N - j0);
    // Pack B's columns [j0, j0 + n) as K rows of NR floats, zeros past the edge.
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < NR; ++j)
        b_panel[static_cast<size_t>(k * NR + j)] = j < n ? B[k * N + j0 + j] : 0.0f;
    for (int64_t p = 0; p < panels; ++p) {
      // The micro-kernel: an MR x NR tile of C in a local array over all K. Fixed loop
      // bounds let the compiler keep it in vector registers, one row of NR per register.
      // (GCC, left alone, unrolls the j loop and vectorises across rows instead, with
      // shuffles, several times slower: the pragma keeps j a loop, as gemm/kernel.cpp does.)
      float acc[MR][NR] = {};
      const float* a = a_packed.data() + p * K * MR;
      const float* b = b_panel.data();
      for (int64_t k = 0; k < K; ++k, a += MR, b += NR)
        for (int64_t i = 0; i < MR; ++i) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 1
#endif
          for (int64_t j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];
        }
      const int64_t m = std::min(MR, M - p * MR);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) C[(p * MR + i) * N + j0 + j] = acc[i][j];
    }
  }
}

}  // namespace qkv::exercises::solution
