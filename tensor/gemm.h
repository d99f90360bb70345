// gemm.h: C = A @ B (or C += A @ B) for float32 matrices read through strides.
//
// GEMM is nearly all of the arithmetic in training and in attention. tensor/gemm/ladder.cpp builds it as a
// ladder of five complete functions, each one idea beyond the last (how-to-optimize-gemm,
// BLISlab): naive -> loop order -> cache blocks -> packed panels with a register micro-kernel
// -> SIMD kernel and threads. `gemm`, what the library calls, plans each product and runs step
// 5's loop nest with the plan's packing and split (tensor/gemm/plan.h), or step 5
// itself with QKV_GEMM=ladder; `gemm_naive` is the oracle the tests hold every step to.
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
void gemm_threaded(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate);  // step 5: SIMD micro-kernel and threads

// What the production GEMM can do to each element of C once its sum is complete, while the
// tile is still in registers: C[i, j] = C[i, j] + bias[j]. Bit for bit the separate add after
// the product, without its pass over C. A Linear's forward adds its bias here.
struct GemmEpilogue {
  const float* bias = nullptr;  // (N,): added along every row
  bool any() const { return bias != nullptr; }
  // The same finish for the block of C that starts at column j0 (the bias is per column).
  GemmEpilogue at(int64_t j0) const { return {bias ? bias + j0 : nullptr}; }
};

// Which terms row i of C needs, for a product whose A has a triangle of exact zeros: causal
// attention's P and dS are 0 above the diagonal, so in P v and dS k row i needs only k <= i
// (up_to_row); their transposes are 0 below it, so in P^T dout and dS^T q row j needs only
// k >= j (from_row). Rows are counted from row0. Each MR-row tile of C then runs the kernel
// over just the k its rows need, and the terms left out are the zeros: a sum starts at +0 and
// stays +0 through leading zero terms, and trailing ones add nothing, so C is the full
// product, bit for bit. (Used when K fits one KC block; a longer K is summed in full.)
struct GemmBand {
  enum Side { all, up_to_row, from_row } side = all;
  int64_t row0 = 0;
  // The same band for the block of C that starts at row i0.
  GemmBand at(int64_t i0) const { return {side, row0 + i0}; }
};

// The production GEMM (tensor/gemm/plan.h): plan_gemm, then run_gemm; step 5 with QKV_GEMM=ladder.
void gemm(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
          bool accumulate);
// The production GEMM with an epilogue.
void gemm_epilogue(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate, const GemmEpilogue& epilogue);
// The production GEMM for a product whose A has a triangle of zeros (GemmBand above).
void gemm_band(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
               bool accumulate, GemmBand band);

// Many independent products of one shape (a batched matmul): C_b = A_b @ B_b for every b,
// split across the thread pool as one pool of work, so 64 small attention matrices keep both
// cores busy just like one big one.
struct GemmBatch {
  std::vector<const float*> a, b;
  std::vector<float*> c;
};
// An epilogue is for a batch of one product.
void gemm_batched(int64_t M, int64_t N, int64_t K, int64_t a_rs, int64_t a_cs, int64_t b_rs,
                  int64_t b_cs, const GemmBatch& batch, int64_t ldc, bool accumulate,
                  const GemmEpilogue& epilogue = {});

// The blocking of steps 3-5 (tensor/gemm/kernel.h), exposed for the benchmark and the tutorial.
struct GemmBlocking {
  int64_t MR, NR, MC, KC, NC;
};
GemmBlocking gemm_blocking();
// The micro-kernel the production path uses and its register tile: "AVX-512 6x32",
// "AVX2 6x16", "NEON 6x16", "SSE 6x8", "AVX2 6x8" (an SSE build on a CPU with AVX2, chosen at
// run time) or "portable 6x8" (gemm/kernel.cpp).
const char* gemm_kernel_name();

}  // namespace qkv
