// fused_attention.h: multi-head self-attention straight from one (B, T, 3C) tensor that holds
// each token's query, key and value side by side (what one Linear with 3C outputs makes), as
// raw kernels, forward and backward (llm.c's attention_forward / attention_backward layout).
//
// For each (batch b, head h), with q, k, v the head's (T, D) slices (D = C / H), read in place:
//   S = q k^T / sqrt(D)            (T, T)   the scores, into the weights tensor
//   P = softmax(S), keys j <= i only when causal                (the weights, kept)
//   out = P v                      (T, D)   written straight into out[b, :, h*D:(h+1)*D]
// Backward, given dout (B, T, C):
//   dP = dout v^T     dS = P * (dP - rowsum(dP * P)) / sqrt(D)
//   dq = dS k         dk = dS^T q         dv = P^T dout            -> dqkv (B, T, 3C)
// Every product is the library's GEMM on strided views and every row the softmax kernels of
// softmax.h, in the same order as the composed path (split heads, matmul, causal softmax,
// matmul, merge heads), so the numbers are bit for bit the composed path's; what is saved is
// the head split and merge copies, and one parallel region per (b, h) sweep instead of one
// per step. Pairs (b, h) are split statically over the thread pool: same bits on any count.
// Causal attention runs each product on row blocks, each on the keys its rows can see, which
// leaves out about a quarter of the multiply-adds at T = 64 and more at longer T, without
// changing a bit (fused_attention.cpp, row_blocks).
#pragma once

#include "tensor/tensor.h"

namespace qkv::raw {

struct FusedAttentionOutput {
  Tensor out;      // (B, T, C)
  Tensor weights;  // (B, H, T, T): P, which the backward needs
};

FusedAttentionOutput fused_attention_forward(const Tensor& qkv, int64_t heads, bool causal);
// dqkv (B, T, 3C) from qkv, the forward's weights and dout (B, T, C). `causal` must be the
// forward's: the weights are already 0 on the hidden keys, so it changes no number, only
// which products are worth running (the causal ones skip the hidden blocks, as the forward).
Tensor fused_attention_backward(const Tensor& qkv, const Tensor& weights, const Tensor& dout,
                                int64_t heads, bool causal);

}  // namespace qkv::raw
