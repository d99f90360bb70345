// causal_attention.h: self-attention that cannot see the future, the way a language model
// must read: token t may attend to tokens 0..t only.
//
// Two ways to hide the future, both in Raschka's article, equal in output and in gradient:
//   multiply_and_renormalise:  w = softmax(Q K^T / sqrt(d));  w = w * tril(1);  w /= rowsum(w)
//   negative_infinity:         softmax(mask_to_-inf(Q K^T) / sqrt(d))   (what models use: one
//                              softmax, and the hidden entries are exactly 0)
// and a third spelling of the second: an additive float mask, 0 on and below the diagonal and
// -inf above it, added to the scores (what torch's attn_mask does with a float tensor).
// Parameters W_query, W_key, W_value are drawn from rand in that order, as in SelfAttention.
#pragma once

#include "attention/self_attention.h"

namespace qkv::attention {

enum class CausalMasking { negative_infinity, multiply_and_renormalise, additive };

class CausalAttention : public RandProjections {
 public:
  CausalAttention(int64_t d_in, int64_t d_out_kq, int64_t d_out_v,
                  CausalMasking method = CausalMasking::negative_infinity, double dropout = 0.0,
                  Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  CausalMasking method;
  double dropout;

 private:
  Generator* gen_;
};

}  // namespace qkv::attention
