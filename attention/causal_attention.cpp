// causal_attention.cpp: the three spellings of causal masking in causal_attention.h.
#include "attention/causal_attention.h"

#include <cmath>

namespace qkv::attention {

CausalAttention::CausalAttention(int64_t in, int64_t kq, int64_t vd, CausalMasking m, double p,
                                 Generator* gen)
    : d_in(in), d_out_kq(kq), d_out_v(vd), method(m), dropout(p), gen_(gen) {
  check(in > 0 && kq > 0 && vd > 0, "CausalAttention", "positive d_in, d_out_kq and d_out_v, got ",
        in, ", ", kq, " and ", vd);
  check(p >= 0 && p < 1, "CausalAttention", "dropout in [0, 1), got ", p);
  W_query = register_parameter("W_query", rand({in, kq}, gen));
  W_key = register_parameter("W_key", rand({in, kq}, gen));
  W_value = register_parameter("W_value", rand({in, vd}, gen));
}

Tensor CausalAttention::forward(const Tensor& x) {
  check(x.defined() && x.dim() >= 2 && x.size(-1) == d_in, "CausalAttention",
        "an input (..., T, d_in) with d_in = ", d_in, ", got ",
        x.defined() ? shape_str(x.shape()) : "undefined");
  const int64_t T = x.size(-2);
  const Tensor keys = matmul(x, W_key);
  const Tensor queries = matmul(x, W_query);
  const Tensor values = matmul(x, W_value);
  const double p = is_training() ? dropout : 0.0;
  AttentionOptions options;
  options.dropout_p = p;
  options.generator = gen_;
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
