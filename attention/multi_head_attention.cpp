// multi_head_attention.cpp: the wrapper and the fused multi-head attention (see the header).
#include "attention/multi_head_attention.h"

namespace qkv::attention {

MultiHeadAttentionWrapper::MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out_kq,
                                                     int64_t d_out_v, int64_t h, Generator* gen)
    : num_heads(h) {
  check(h > 0, "MultiHeadAttentionWrapper", "num_heads > 0, got ", h);
  heads = register_module("heads", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < h; ++i)
    heads->push_back(std::make_shared<SelfAttention>(d_in, d_out_kq, d_out_v, gen));
}

Tensor MultiHeadAttentionWrapper::forward(const Tensor& x) {
  std::vector<Tensor> outputs, weights;
  for (int64_t i = 0; i < num_heads; ++i) {
    outputs.push_back(head(i)->forward(x));  // (..., T, d_out_v)
    weights.push_back(head(i)->attention_weights);
  }
  attention_weights = raw::stack(weights, -3);  // (..., H, T, T)
  return cat(outputs, -1);                      // (..., T, H * d_out_v)
}

MultiHeadAttention::MultiHeadAttention(int64_t c, int64_t h, bool is_causal, double p, bool bias,
                                       Generator* gen)
    : d_model(c),
      num_heads(h),
      head_dim(h > 0 ? c / h : 0),
      causal(is_causal),
      dropout(p),
      gen_(gen) {
  check(h > 0 && c > 0 && c % h == 0, "MultiHeadAttention", "d_model (", c,
        ") divisible by num_heads (", h, ")");
  check(p >= 0 && p < 1, "MultiHeadAttention", "dropout in [0, 1), got ", p);
  q = register_module("q", std::make_shared<nn::Linear>(c, c, bias, gen));
  k = register_module("k", std::make_shared<nn::Linear>(c, c, bias, gen));
  v = register_module("v", std::make_shared<nn::Linear>(c, c, bias, gen));
  o = register_module("o", std::make_shared<nn::Linear>(c, c, bias, gen));
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& mask) {
  check(x.defined() && x.dim() == 3 && x.size(2) == d_model, "MultiHeadAttention",
        "an input (B, T, C) with C = d_model = ", d_model, ", got ",
        x.defined() ? shape_str(x.shape()) : "undefined");
  const int64_t B = x.size(0), T = x.size(1), H = num_heads, D = head_dim;
  // (B, T, C) -> (B, T, H, D) -> (B, H, T, D): each head sees its own D-wide slice.
  auto split_heads = [&](const Tensor& t) { return transpose(view(t, {B, T, H, D}), 1, 2); };
  const Tensor queries = split_heads(q->forward(x));
  const Tensor keys = split_heads(k->forward(x));
  const Tensor values = split_heads(v->forward(x));
  AttentionOptions options;
  options.causal = causal;
  options.mask = mask;
  options.dropout_p = is_training() ? dropout : 0.0;
  options.generator = gen_;
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values, options);
  attention_weights = detach(a.weights);
  // (B, H, T, D) -> (B, T, H, D) -> (B, T, C): the heads side by side again, then mixed by o.
  return o->forward(reshape(transpose(a.output, 1, 2), {B, T, d_model}));
}

}  // namespace qkv::attention
