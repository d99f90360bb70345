// differential_attention.h: differential attention (Diff Transformer, Ye et al. 2024).
//
// Each head computes two softmax maps from two halves of its query and key, and subtracts the
// second, scaled by a learned lambda, from the first:
//
//   [q1; q2] = x W_q,  [k1; k2] = x W_k    (each half d = C / (2 H) per head)
//   A1 = softmax(q1 k1^T / sqrt(d)),  A2 = softmax(q2 k2^T / sqrt(d))
//   head = (A1 - lambda A2) v,   v = x W_v  (2d per head)
//   lambda = e^(lq1 . lk1) - e^(lq2 . lk2) + lambda_init,
//   lambda_init = 0.8 - 0.6 e^(-0.3 (layer - 1))
//   out = o(concat_h (1 - lambda_init) RMSNorm(head))
//
// Like noise-cancelling headphones: attention noise that both maps share (weight spread over
// irrelevant tokens) cancels, and what remains is sharper. The rows of A1 - lambda A2 still
// sum to 1 - lambda, but single entries may be negative.
#pragma once

#include "attention/core.h"

namespace qkv::attention {

struct DifferentialAttentionOptions {
  int64_t layer = 1;  // the block's depth (1 for the first), which sets lambda_init
  bool causal = true;
};

class DifferentialAttention : public nn::UnaryModule {
 public:
  DifferentialAttention(int64_t d_model, int64_t num_heads,
                        const DifferentialAttentionOptions& options = {}, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;  // (B, T, C) -> (B, T, C)
  Tensor lambda() const;                     // the current lambda, a 0-d tensor with history
  std::shared_ptr<nn::Linear> q, k, v, o;
  std::shared_ptr<nn::RMSNorm> norm;                  // over each head's 2d outputs ("subln")
  Tensor lambda_q1, lambda_k1, lambda_q2, lambda_k2;  // (d) each
  int64_t d_model, num_heads, half_dim;
  double lambda_init;
  bool causal;
  // Of the last forward, without history, (B, H, T, T): the two maps and their difference.
  Tensor weights_first, weights_second, attention_weights;
};

}  // namespace qkv::attention
