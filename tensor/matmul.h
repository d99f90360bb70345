// matmul.h: torch.matmul's semantics on top of the GEMM.
//
//   1-d @ 1-d -> 0-d dot product        (K) @ (K)       -> ()
//   2-d @ 2-d -> matrix product         (M, K) @ (K, N) -> (M, N)
//   1-d @ 2-d, 2-d @ 1-d                a 1 is put in front of / behind the vector, then removed
//   batched: leading dims broadcast     (B, 1, M, K) @ (H, K, N) -> (B, H, M, N)
#pragma once

#include "tensor/tensor.h"

namespace qkv::raw {

Tensor matmul(const Tensor& a, const Tensor& b);
// matmul into an existing contiguous tensor of the result's shape: out = a @ b, or
// out += a @ b when accumulate is true (what backward does when a gradient is used twice).
void matmul_out(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate = false);
// a (M, K) @ b (K, N), 2-d, then + bias (N,) along every row, added by the GEMM to each tile
// as it stores it (gemm.h's GemmEpilogue): bit for bit add(matmul(a, b), bias), without a
// second pass over the output. Linear's forward adds its bias this way.
Tensor matmul_epilogue(const Tensor& a, const Tensor& b, const Tensor& bias);

}  // namespace qkv::raw
