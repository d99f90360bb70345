// fused_attention.h: multi-head attention over every (batch, head) pair in one pass, as raw
// kernels, forward and backward (llm.c's attention_forward / attention_backward). It is a fast
// path beneath scaled_dot_product_attention (attention/core.h), which runs it for plain
// self-attention (q, k, v of one shape (B, H, T, D), no mask, dropout or positions) when
// fused paths are on (tensor/fused.h); the composed ops are the oracle it is tested against.
//
// For each (batch b, head h), with q, k, v the head's (T, D) slices, read in place through
// their strides (the head split of a Linear's (B, T, C) output is such a view, never copied):
//   S = q k^T / sqrt(D)            (T, T)   the scores, into the weights tensor
//   P = softmax(S), keys j <= i only when causal                (the weights, kept)
//   out = P v                      (T, D)   stored as (B, T, H, D): the heads merged already
// Backward, given dout:
//   dP = dout v^T     dS = P * (dP - rowsum(dP * P)) / sqrt(D)
//   dq = dS k         dk = dS^T q         dv = P^T dout
// Every product is the library's GEMM on strided views and every row the softmax kernels of
// softmax.h, in the same order as the composed path (matmul, causal softmax, matmul), so the
// numbers are bit for bit the composed path's; what is saved is the copies of the head split
// and merge, and one parallel region per (b, h) sweep instead of one per step. Pairs (b, h)
// are split statically over the thread pool: same bits on any count. Causal attention runs
// each product on row blocks, each on the keys its rows can see, which leaves out about a
// quarter of the multiply-adds at T = 64 and more at longer T, without changing a bit
// (fused_attention.cpp, row_blocks). What it saves against the composed ops, in a training step
// and alone: bench/notes/2026-12-06-memory-and-threads.md.
#pragma once

#include "tensor/tensor.h"

namespace qkv::raw {

struct FusedAttentionOutput {
  Tensor out;      // (B, H, T, D), a view of (B, T, H, D) storage
  Tensor weights;  // (B, H, T, T): P, which the backward needs
};
// q, k, v: float32 (B, H, T, D), one shape, each with unit stride along D.
FusedAttentionOutput fused_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             bool causal);

struct FusedAttentionGrads {
  Tensor dq, dk, dv;  // (B, H, T, D), views of (B, T, H, D) storage
};
// The gradients from q, k, v, the forward's weights and dout (B, H, T, D). `causal` must be
// the forward's: the weights are already 0 on the hidden keys, so it changes no number, only
// which products are worth running (the causal ones skip the hidden blocks, as the forward).
FusedAttentionGrads fused_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& weights, const Tensor& dout,
                                             bool causal);

}  // namespace qkv::raw
