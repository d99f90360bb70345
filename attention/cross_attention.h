// cross_attention.h: queries from one sequence, keys and values from another.
//
//   Q = X_1 W_query      (T_1, d_out_kq)    what the first sequence is looking for
//   K = X_2 W_key        (T_2, d_out_kq)    what the second sequence offers
//   V = X_2 W_value      (T_2, d_out_v)
//   softmax(Q K^T / sqrt(d_out_kq)) V      (T_1, d_out_v): one output per token of X_1
// T_1 and T_2 may differ (a decoder reading an encoder's output). CrossAttention(x, x) is
// SelfAttention. Parameters are drawn from rand in the order W_query, W_key, W_value.
#pragma once

#include "attention/self_attention.h"

namespace qkv::attention {

class CrossAttention : public RandProjections {
 public:
  CrossAttention(int64_t d_in, int64_t d_out_kq, int64_t d_out_v, Generator* gen = nullptr);
  Tensor forward(const Tensor& x_1, const Tensor& x_2, const Tensor& mask = {});
  Tensor operator()(const Tensor& x_1, const Tensor& x_2) { return forward(x_1, x_2); }
  using nn::UnaryModule::operator();
  Tensor forward(const Tensor& x) override { return forward(x, x); }  // with itself
};

}  // namespace qkv::attention
