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
#pragma once

#include "tensor/tensor.h"

namespace qkv::raw {

struct FusedAttentionOutput {
  Tensor out;      // (B, T, C)
  Tensor weights;  // (B, H, T, T): P, which the backward needs
};

FusedAttentionOutput fused_attention_forward(const Tensor& qkv, int64_t heads, bool causal);
// dqkv (B, T, 3C) from qkv, the forward's weights and dout (B, T, C). Causal or not makes no
// difference here: the weights are already 0 on the hidden keys.
Tensor fused_attention_backward(const Tensor& qkv, const Tensor& weights, const Tensor& dout,
                                int64_t heads);

}  // namespace qkv::raw
