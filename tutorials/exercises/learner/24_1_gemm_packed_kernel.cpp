// Exercise 24.1, after lesson 24: gemm_packed_kernel.
//
// One rung of the GEMM ladder (lesson 24): C = A B for row-major A (M, K), B (K, N),
// C (M, N), written over whatever C held before. Pack and use a register tile:
//   - copy B into panels of NR columns (row k of a panel: NR floats, zero-padded at the edge),
//     and A into panels of MR rows (column k of a panel: MR floats, zero-padded);
//   - for each pair of panels, a micro-kernel keeps an MR x NR tile of C in a small local
//     array over all K, acc[i][j] += a_panel[k][i] * b_panel[k][j] (fixed bounds, so the
//     compiler can keep it in vector registers), then stores the in-range part into C.
// MR = 4 and NR = 8 is a good start. The checker holds you to qkv's matmul on awkward shapes
// (1, 7, 33, 129) and reports your GFLOP/s at 256^3 and its share of one core's FMA peak.
//
// Check it: ./build/release/tutorials/exercises/check_exercises 24.1
// (build first: cmake --build --preset release --target check_exercises)
#include <algorithm>
#include <vector>
#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

void gemm_packed_kernel(int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C) {
  // Write your code here, in place of the line below.
  not_implemented("24.1", "gemm_packed_kernel", "packing and an MR x NR register tile");
}

}  // namespace qkv::exercises
