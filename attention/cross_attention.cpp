// cross_attention.cpp: see cross_attention.h.
#include "attention/cross_attention.h"

namespace qkv::attention {

CrossAttention::CrossAttention(int64_t in, int64_t kq, int64_t vd, Generator* gen)
    : RandProjections("CrossAttention", in, kq, vd, gen) {}

Tensor CrossAttention::forward(const Tensor& x_1, const Tensor& x_2, const Tensor& mask) {
  check_input("CrossAttention (x_1)", x_1);
  check_input("CrossAttention (x_2)", x_2);
  const Tensor queries = matmul(x_1, W_query);  // (..., T_1, d_out_kq)
  const Tensor keys = matmul(x_2, W_key);       // (..., T_2, d_out_kq)
  const Tensor values = matmul(x_2, W_value);   // (..., T_2, d_out_v)
  // mask: e.g. which of x_2's tokens are padding
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values, {.mask = mask});
  attention_weights = detach(a.weights);
  return a.output;  // (..., T_1, d_out_v)
}

}  // namespace qkv::attention
