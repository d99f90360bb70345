// multi_head_attention.h: several attention heads side by side, two ways.
//
// MultiHeadAttentionWrapper(d_in, d_out_kq, d_out_v, num_heads): num_heads independent
//   SelfAttention modules ("heads.0", "heads.1", ...); their outputs are concatenated on the
//   last dim, (T, num_heads * d_out_v). Easy to read, one small matmul per head.
//
// MultiHeadAttention(d_model, num_heads): the fused form models use. One Linear each for
//   Q, K and V projects all heads at once, the heads are split by a view and a transpose, the
//   core attends in every head in one batched call, and an output projection W_O mixes them:
//     x (B, T, C) -> q, k, v (B, T, C) -> view (B, T, H, D) -> transpose (B, H, T, D)
//     attention per head -> (B, H, T, D) -> transpose, reshape (B, T, C) -> o -> (B, T, C)
//   with D = C / H. Its Linear layers are named q, k, v, o and created in that order. With
//   bias off and o the identity, it computes exactly what the wrapper computes.
#pragma once

#include "attention/core.h"
#include "attention/self_attention.h"

namespace qkv::attention {

class MultiHeadAttentionWrapper : public nn::UnaryModule {
 public:
  MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out_kq, int64_t d_out_v, int64_t num_heads,
                            Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<SelfAttention> head(int64_t i) const {
    return heads->at<SelfAttention>(static_cast<size_t>(i));
  }
  std::shared_ptr<nn::ModuleList> heads;
  int64_t num_heads;
  Tensor attention_weights;  // of the last forward, without history: (..., H, T, T)
};

class MultiHeadAttention : public nn::UnaryModule {
 public:
  MultiHeadAttention(int64_t d_model, int64_t num_heads, bool causal = false, double dropout = 0.0,
                     bool bias = true, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override { return forward(x, Tensor()); }
  // mask: bool (true = may attend) or additive float, broadcast to (B, H, T, T).
  Tensor forward(const Tensor& x, const Tensor& mask);
  std::shared_ptr<nn::Linear> q, k, v, o;
  int64_t d_model, num_heads, head_dim;
  bool causal;
  double dropout;
  Tensor attention_weights;  // of the last forward, without history: (B, H, T, T)

 private:
  Generator* gen_;
};

}  // namespace qkv::attention
