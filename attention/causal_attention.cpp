// causal_attention.cpp: the three spellings of causal masking in causal_attention.h.
#include "attention/causal_attention.h"

#include <cmath>

namespace qkv::attention {

CausalAttention::CausalAttention(int64_t in, int64_t kq, int64_t vd, CausalMasking m, double p,
                                 Generator* gen)
    : RandProjections("CausalAttention", in, kq, vd, gen), method(m), dropout(p), gen_(gen) {
  check(p >= 0 && p < 1, "CausalAttention", "dropout in [0, 1), got ", p);
}

Tensor CausalAttention::forward(const Tensor& x) {
  check_input("CausalAttention", x);
  const int64_t T = x.size(-2);
  const Tensor keys = matmul(x, W_key);
  const Tensor queries = matmul(x, W_query);
  const Tensor values = matmul(x, W_value);
  const double p = is_training() ? dropout : 0.0;
  AttentionOptions options{.dropout_p = p, .generator = gen_};
  AttentionOutput a;
  switch (method) {
    case CausalMasking::negative_infinity:
      options.causal = true;
      a = scaled_dot_product_attention(queries, keys, values, options);
      break;
    case CausalMasking::additive:
      // 0 where allowed, -inf above the diagonal: adding it hides the future.
      options.mask = raw::masked_fill(zeros({T, T}), raw::logical_not(causal_mask(T)), -INFINITY);
      a = scaled_dot_product_attention(queries, keys, values, options);
      break;
    case CausalMasking::multiply_and_renormalise: {
      // Softmax over every key first (the core, unmasked), then zero the future and rescale
      // each row to sum to 1 again. The future still took part in the softmax's normaliser,
      // but dividing by the row sum cancels it exactly in real arithmetic.
      const Tensor all = scaled_dot_product_attention(queries, keys, values).weights;
      const Tensor masked = all * raw::tril(ones({T, T}));  // (..., T, T)
      Tensor weights = masked / sum(masked, -1, true);
      if (p > 0) weights = nn::dropout(weights, p, true, gen_);
      a = {matmul(weights, values), weights};
      break;
    }
  }
  attention_weights = detach(a.weights);
  return a.output;
}

}  // namespace qkv::attention
