// linear_attention.h: attention without softmax, in linear time (Katharopoulos et al. 2020),
// and its gated form (as in RetNet, GLA, Mamba-2's "state space duality").
//
// Replace e^(q . k) by phi(q) . phi(k) with a positive feature map phi(x) = elu(x) + 1:
//
//   out_i = sum_{j<=i} (phi(q_i) . phi(k_j)) v_j / sum_{j<=i} phi(q_i) . phi(k_j)
//
// Written that way it is still T x T work (the parallel form). But phi(q_i) factors out of the
// sums: keep a state S_i = sum_{j<=i} phi(k_j) v_j^T (D x D_v) and z_i = sum_{j<=i} phi(k_j):
//
//   S_i = S_{i-1} + phi(k_i) v_i^T,   z_i = z_{i-1} + phi(k_i),   out_i = phi(q_i) S_i / phi(q_i) .
//   z_i
//
// the recurrent form: one fixed-size state, O(T) time, like an RNN. The two forms are equal.
// The gated form decays the state by g_i in (0, 1) at every step (S_i = g_i S_{i-1} + ...),
// forgetting the old; in the parallel form that is a weight prod_{l=j+1..i} g_l =
// e^(G_i - G_j) on pair (i, j), with G the running sum of log g.
#pragma once

#include "attention/core.h"

namespace qkv::attention {

enum class LinearForm { parallel, recurrent };

// phi(x) = elu(x) + 1 = x + 1 for x > 0, e^x otherwise: positive, smooth.
Tensor elu_feature_map(const Tensor& x);

struct LinearAttentionOptions {
  bool causal = true;  // the sums run over j <= i; else every query sums over all keys
                       // (the parallel form only, without gates)
  LinearForm form = LinearForm::parallel;
  bool gated = false;  // the module: a gate per head and token (the function takes the gates)
};

// q, k (..., T, D), v (..., T, D_v); gates (..., T) in (0, 1), or undefined for none.
Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                        const LinearAttentionOptions& options, const Tensor& gates = Tensor());

class LinearAttention : public nn::UnaryModule {
 public:
  LinearAttention(int64_t d_model, int64_t num_heads, const LinearAttentionOptions& options = {},
                  Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;  // (B, T, C) -> (B, T, C)
  std::shared_ptr<nn::Linear> q, k, v, o;
  std::shared_ptr<nn::Linear> g;  // gated: one gate per head and token, sigmoid(g(x))
  int64_t d_model, num_heads, head_dim;
  bool causal, gated;
  LinearForm form;
};

}  // namespace qkv::attention
