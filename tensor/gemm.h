// gemm.h: C = A @ B (or C += A @ B) for float32 matrices read through strides.
//
// GEMM is nearly all of the arithmetic in training and in attention. gemm.cpp builds it as a
// ladder of five complete functions, each one idea beyond the last (how-to-optimize-gemm,
// BLISlab): naive -> loop order -> cache blocks -> packed panels with a register micro-kernel
// -> threads. `gemm` is the last step; `gemm_naive` is the oracle the tests hold it to.
//
// A matrix is a pointer and two strides: element (i, j) is at p[i * row_stride + j * col_stride].
// A transposed operand is the same pointer with its strides swapped, so backward's A @ B^T and
// A^T @ B need no copies. C is row-major with leading dimension ldc.
#pragma once

#include <cstdint>
#include <vector>

namespace qkv {

struct MatrixRef {
  const float* p;
  int64_t row_stride, col_stride;
  float at(int64_t i, int64_t j) const { return p[i * row_stride + j * col_stride]; }
};

// C (M, N) = A (M, K) @ B (K, N), or C += A @ B when accumulate is true.
using GemmFn = void (*)(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                        int64_t ldc, bool accumulate);

void gemm_naive(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                bool accumulate);  // step 1: three loops, a dot product per output
void gemm_loop_order(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                     int64_t ldc, bool accumulate);  // step 2: i-k-j, unit-stride inner loop
void gemm_blocked(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate);  // step 3: MC x KC x NC cache blocks
void gemm_packed(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                 bool accumulate);  // step 4: packed panels, portable micro-kernel
void gemm(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
          bool accumulate);  // step 5: SIMD micro-kernel and threads (production)

// Many independent products of one shape (a batched matmul): C_b = A_b @ B_b for every b,
// split across the thread pool as one pool of work, so 64 small attention matrices keep both
// cores busy just like one big one.
struct GemmBatch {
  std::vector<const float*> a, b;
  std::vector<float*> c;
};
void gemm_batched(int64_t M, int64_t N, int64_t K, int64_t a_rs, int64_t a_cs, int64_t b_rs,
                  int64_t b_cs, const GemmBatch& batch, int64_t ldc, bool accumulate);

// The blocking of steps 3-5, exposed for the benchmark and the tutorial.
struct GemmBlocking {
  int64_t MR, NR, MC, KC, NC;
};
GemmBlocking gemm_blocking();
// The name of the micro-kernel the production path uses ("avx512-vector" or "portable").
const char* gemm_kernel_name();

}  // namespace qkv
