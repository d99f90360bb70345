// self_attention.h: self-attention as Sebastian Raschka's article builds it, first without
// weights, then with trainable W_query, W_key, W_value.
//
//   SimplifiedSelfAttention:  softmax(X X^T / sqrt(d)) X            (no parameters)
//   SelfAttention:            Q = X W_query, K = X W_key, V = X W_value
//                             softmax(Q K^T / sqrt(d_out_kq)) V
// X is (T, d_in) for one sentence or (B, T, d_in) for a batch. W_query, W_key and W_value are
// Parameters drawn from rand in that order, as the article's
//   torch.nn.Parameter(torch.rand(d_in, d_out_kq))
// so the same seed gives the article's numbers. d_out_v may differ from d_out_kq: the values
// are what is mixed, the queries and keys only decide how.
#pragma once

#include "attention/core.h"

namespace qkv::attention {

class SimplifiedSelfAttention : public nn::UnaryModule {
 public:
  Tensor forward(const Tensor& x) override;
  Tensor attention_weights;  // of the last forward, without history: (..., T, T)
};

// What SelfAttention, CausalAttention and CrossAttention share: the article's three weight
// matrices, W_query (d_in, d_out_kq), W_key (d_in, d_out_kq), W_value (d_in, d_out_v), drawn
// from rand in that order, and the check of an input (..., T, d_in). Each adds its forward.
class RandProjections : public nn::UnaryModule {
 public:
  Tensor W_query, W_key, W_value;
  int64_t d_in, d_out_kq, d_out_v;
  Tensor attention_weights;  // of the last forward, without history: (..., T_q, T_k)

 protected:
  RandProjections(const char* op, int64_t d_in, int64_t d_out_kq, int64_t d_out_v, Generator* gen);
  void check_input(const char* op, const Tensor& x) const;
};

class SelfAttention : public RandProjections {
 public:
  SelfAttention(int64_t d_in, int64_t d_out_kq, int64_t d_out_v, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
};

}  // namespace qkv::attention
