// cross_attention.cpp: see cross_attention.h.
#include "attention/cross_attention.h"

namespace qkv::attention {

CrossAttention::CrossAttention(int64_t in, int64_t kq, int64_t vd, Generator* gen)
    : d_in(in), d_out_kq(kq), d_out_v(vd) {
  check(in > 0 && kq > 0 && vd > 0, "CrossAttention", "positive d_in, d_out_kq and d_out_v, got ",
        in, ", ", kq, " and ", vd);
  W_query = register_parameter("W_query", rand({in, kq}, gen));
  W_key = register_parameter("W_key", rand({in, kq}, gen));
  W_value = register_parameter("W_value", rand({in, vd}, gen));
}

Tensor CrossAttention::forward(const Tensor& x_1, const Tensor& x_2, const Tensor& mask) {
  for (const Tensor* x : {&x_1, &x_2})
    check(x->defined() && x->dim() >= 2 && x->size(-1) == d_in, "CrossAttention",
          "inputs (..., T, d_in) with d_in = ", d_in, ", got x_1 ",
          x_1.defined() ? shape_str(x_1.shape()) : "undefined", " and x_2 ",
          x_2.defined() ? shape_str(x_2.shape()) : "undefined");
  const Tensor queries = matmul(x_1, W_query);  // (..., T_1, d_out_kq)
  const Tensor keys = matmul(x_2, W_key);       // (..., T_2, d_out_kq)
  const Tensor values = matmul(x_2, W_value);   // (..., T_2, d_out_v)
  AttentionOptions options;
  options.mask = mask;  // e.g. which of x_2's tokens are padding
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values, options);
  attention_weights = detach(a.weights);
  return a.output;  // (..., T_1, d_out_v)
}

}  // namespace qkv::attention
