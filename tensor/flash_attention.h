// flash_attention.h: attention that never builds the T_q x T_k matrix (FlashAttention,
// Dao et al. 2022), forward and backward, as raw kernels.
//
// The standard path writes scores = q k^T (T_q x T_k), softmaxes it, then multiplies by v: at
// T = 4096 that matrix is 64 MiB per head, and the backward keeps several of them. Here the
// keys arrive in tiles of kBc and each query row keeps only three running quantities:
//
//   m   the largest score seen so far               (running max)
//   l   sum over seen keys of e^(score - m)          (running sum, relative to m)
//   acc sum over seen keys of e^(score - m) * v_j     (running output, relative to m)
//
// When a tile brings a larger max m', everything so far is rescaled by e^(m - m'): the online
// softmax. After the last tile, output = acc / l, and logsumexp = m + log(l) is kept: the one
// number per row that lets the backward recompute any weight as e^(score - logsumexp).
// Memory: O(T * D) per head instead of O(T^2).
//
// The backward recomputes each tile's weights p from q, k and logsumexp, then with
// delta_i = sum_d dout_id * out_id (= sum_j p_ij dp_ij):
//   dv_j += p_ij dout_i     dp_ij = dout_i . v_j     ds_ij = p_ij (dp_ij - delta_i)
//   dk_j += scale ds_ij q_i                           dq_i += scale ds_ij k_j
// in two passes, one over key tiles (dk, dv) and one over query tiles (dq), so every output
// element is written by exactly one thread: results are the same on any number of threads.
//
// Layout: q (N, T_q, D), k (N_kv, T_k, D), v (N_kv, T_k, D_v), contiguous float32, with N a
// multiple of N_kv: query block n reads keys and values n / (N / N_kv), which is grouped-query
// attention when the blocks are (batch, head) pairs and a batch's heads share a key head.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace qkv::raw {

struct FlashAttentionParams {
  float scale = 1.0f;  // multiplies q . k (the caller passes 1 / sqrt(D) for the usual scaling)
  // Key j is visible to query i when j <= i + (T_k - T_q) (the attention core's alignment).
  bool causal = false;
  // With causal: also j > i + (T_k - T_q) - window, the last `window` keys. 0: no limit.
  int64_t window = 0;
  // ALiBi: score -= slope[h] * |i + (T_k - T_q) - j| for query block n in head h = n % heads.
  // Empty: no bias.
  std::vector<float> alibi_slopes;
  int64_t heads = 1;
};

struct FlashAttentionOutput {
  Tensor out;  // (N, T_q, D_v)
  Tensor lse;  // (N, T_q): logsumexp of each row's visible scores; -inf for a row with none
};
struct FlashAttentionGrads {
  Tensor dq, dk, dv;
};

// A query row that sees no key (possible with causal and T_q > T_k) gives an output of 0 and
// zero gradient, as the attention core's standard path does.
FlashAttentionOutput flash_attention_forward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const FlashAttentionParams& params);
FlashAttentionGrads flash_attention_backward(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const Tensor& out, const Tensor& lse,
                                             const Tensor& dout,
                                             const FlashAttentionParams& params);

}  // namespace qkv::raw
