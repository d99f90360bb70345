// head.cpp: Karpathy's Head on the core (see head.h).
#include "attention/head.h"

#include <cmath>

namespace qkv::attention {

Head::Head(int64_t n_embd, int64_t hs, double p, Generator* gen)
    : head_size(hs), dropout(p), gen_(gen) {
  check(p >= 0 && p < 1, "Head", "dropout in [0, 1), got ", p);
  key = register_module("key", std::make_shared<nn::Linear>(n_embd, hs, false, gen));
  query = register_module("query", std::make_shared<nn::Linear>(n_embd, hs, false, gen));
  value = register_module("value", std::make_shared<nn::Linear>(n_embd, hs, false, gen));
}

Tensor Head::forward(const Tensor& x) {
  check(x.defined() && x.dim() == 3, "Head", "an input (B, T, C), got ", shape_of(x));
  const Tensor k = key->forward(x);    // (B, T, head_size)
  const Tensor q = query->forward(x);  // (B, T, head_size)
  const Tensor v = value->forward(x);  // (B, T, head_size)
  const AttentionOutput a = scaled_dot_product_attention(
      q, k, v,
      {.causal = true,
       .scale = std::pow(static_cast<double>(head_size), -0.5),  // k.shape[-1]**-0.5
       .dropout_p = is_training() ? dropout : 0.0,
       .generator = gen_});
  attention_weights = detach(a.weights);
  return a.output;
}

}  // namespace qkv::attention
