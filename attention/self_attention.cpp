// self_attention.cpp: the two self-attentions of self_attention.h, each a few lines on the core.
#include "attention/self_attention.h"

namespace qkv::attention {

Tensor SimplifiedSelfAttention::forward(const Tensor& x) {
  check(x.defined() && x.dim() >= 2, "SimplifiedSelfAttention", "an input (..., T, d), got ",
        shape_of(x));
  // Every token is its own query, key and value.
  const AttentionOutput a = scaled_dot_product_attention(x, x, x);
  attention_weights = detach(a.weights);
  return a.output;
}

RandProjections::RandProjections(const char* op, int64_t in, int64_t kq, int64_t vd, Generator* gen)
    : d_in(in), d_out_kq(kq), d_out_v(vd) {
  check(in > 0 && kq > 0 && vd > 0, op, "positive d_in, d_out_kq and d_out_v, got ", in, ", ", kq,
        " and ", vd);
  W_query = register_parameter("W_query", rand({in, kq}, gen));
  W_key = register_parameter("W_key", rand({in, kq}, gen));
  W_value = register_parameter("W_value", rand({in, vd}, gen));
}

void RandProjections::check_input(const char* op, const Tensor& x) const {
  check(x.defined() && x.dim() >= 2 && x.size(-1) == d_in, op,
        "an input (..., T, d_in) with d_in = ", d_in, ", got ", shape_of(x));
}

SelfAttention::SelfAttention(int64_t in, int64_t kq, int64_t vd, Generator* gen)
    : RandProjections("SelfAttention", in, kq, vd, gen) {}

Tensor SelfAttention::forward(const Tensor& x) {
  check_input("SelfAttention", x);
  const Tensor keys = matmul(x, W_key);       // (..., T, d_out_kq)
  const Tensor queries = matmul(x, W_query);  // (..., T, d_out_kq)
  const Tensor values = matmul(x, W_value);   // (..., T, d_out_v)
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values);
  attention_weights = detach(a.weights);
  return a.output;  // (..., T, d_out_v)
}

}  // namespace qkv::attention
