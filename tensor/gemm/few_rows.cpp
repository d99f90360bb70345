// few_rows.cpp: products of a few rows (decoding one token: M = 1), which read B where it lies,
// never packed (few_rows, below), and sum x W^T's columns as dot products (dot.cpp).
#include <vector>

#include "tensor/gemm/internal.h"

namespace qkv::gemm_detail {

// A product with few rows (decoding one token: M = 1) gains nothing from packing: packing B
// copies all K x N of it to use each element only M times, which costs as much as the product
// itself. Such products read B where it lies: as rows (C[i, :] += A[i, k] * B[k, :]) when B's
// rows are contiguous, as dot products of A's row with B's columns when those are (x @ W^T,
// as Linear computes it; dot_column and dot_four_columns, dot.cpp), in 16 independent sums
// so the compiler vectorises them.
void few_rows(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
              bool accumulate) {
  prepare_c(M, N, C, ldc, accumulate);
  std::vector<float> a_row(static_cast<size_t>(K));
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    for (int64_t k = 0; k < K; ++k) a_row[static_cast<size_t>(k)] = A.at(i, k);
    const float* a = a_row.data();
    if (B.col_stride == 1) {
      for (int64_t k = 0; k < K; ++k) {
        const float aik = a[k];
        const float* b = B.p + k * B.row_stride;
        for (int64_t j = 0; j < N; ++j) c[j] += aik * b[j];
      }
    } else if (B.row_stride == 1) {
      // The four columns of a group are a quarter of N apart: columns j, j + q, j + 2 q and
      // j + 3 q. Each stream then walks a quarter of W's rows in order, one long run of memory
      // that the hardware prefetcher follows; four neighbouring rows would be four runs of
      // K floats each, restarting every group (bench/notes/2026-12-06-gemm.md).
      const int64_t q = N / 4;
      for (int64_t j = 0; j < q; ++j)
        dot_four_columns(a, B.p + j * B.col_stride, q * B.col_stride, K, c + j, q);
      for (int64_t j = 4 * q; j < N; ++j) c[j] += dot_column(a, B.p + j * B.col_stride, K);
    } else {
      for (int64_t j = 0; j < N; ++j) {
        float sum = 0.0f;
        for (int64_t k = 0; k < K; ++k) sum += a[k] * B.at(k, j);
        c[j] += sum;
      }
    }
  }
}

}  // namespace qkv::gemm_detail
