// differential_attention.cpp: two softmax maps and their difference (see the header).
#include "attention/differential_attention.h"

#include <cmath>

namespace qkv::attention {

DifferentialAttention::DifferentialAttention(int64_t c, int64_t h,
                                             const DifferentialAttentionOptions& options,
                                             Generator* gen)
    : d_model(c), num_heads(h), half_dim(h > 0 ? c / (2 * h) : 0), causal(options.causal) {
  const char* op = "DifferentialAttention";
  const int64_t layer = options.layer;
  check(h > 0 && c > 0 && c % (2 * h) == 0, op, "d_model (", c, ") divisible by 2 * num_heads (",
        2 * h, ")");
  check(layer >= 1, op, "layer >= 1, got ", layer);
  lambda_init = 0.8 - 0.6 * std::exp(-0.3 * static_cast<double>(layer - 1));
  q = register_module("q", std::make_shared<nn::Linear>(c, c, false, gen));
  k = register_module("k", std::make_shared<nn::Linear>(c, c, false, gen));
  v = register_module("v", std::make_shared<nn::Linear>(c, c, false, gen));
  o = register_module("o", std::make_shared<nn::Linear>(c, c, false, gen));
  norm = register_module("norm", std::make_shared<nn::RMSNorm>(2 * half_dim, 1e-5));
  // The paper's init: normal with std 0.1.
  auto small = [&] { return raw::mul(randn({half_dim}, gen), 0.1f); };
  lambda_q1 = register_parameter("lambda_q1", small());
  lambda_k1 = register_parameter("lambda_k1", small());
  lambda_q2 = register_parameter("lambda_q2", small());
  lambda_k2 = register_parameter("lambda_k2", small());
}

Tensor DifferentialAttention::lambda() const {
  return exp(sum(lambda_q1 * lambda_k1)) - exp(sum(lambda_q2 * lambda_k2)) +
         static_cast<float>(lambda_init);
}

Tensor DifferentialAttention::forward(const Tensor& x) {
  check(x.defined() && x.dim() == 3 && x.size(2) == d_model, "DifferentialAttention",
        "an input (B, T, C) with C = d_model = ", d_model, ", got ", shape_of(x));
  const int64_t B = x.size(0), T = x.size(1), H = num_heads, d = half_dim;
  // 2H query/key heads of d: head 2h is head h's first half, 2h + 1 its second.
  const Tensor queries = split_heads(q->forward(x), 2 * H);  // (B, 2H, T, d)
  const Tensor keys = split_heads(k->forward(x), 2 * H);
  // Each head's value (2d wide) serves both of its maps: repeated to (B, 2H, T, 2d).
  const Tensor values =
      reshape(expand(unsqueeze(transpose(view(v->forward(x), {B, T, H, 2 * d}), 1, 2), 2),
                     {B, H, 2, T, 2 * d}),
              {B, 2 * H, T, 2 * d});
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values, {.causal = causal});
  // A1 v - lambda A2 v = (A1 - lambda A2) v, per head.
  const Tensor pair = view(a.output, {B, H, 2, T, 2 * d});
  const Tensor lam = lambda();
  const Tensor heads = select(pair, 2, 0) - lam * select(pair, 2, 1);  // (B, H, T, 2d)
  {
    NoGradGuard no_grad;
    const Tensor w = raw::view(a.weights, {B, H, 2, T, T});
    weights_first = raw::contiguous(raw::select(w, 2, 0));
    weights_second = raw::contiguous(raw::select(w, 2, 1));
    attention_weights = raw::sub(weights_first, raw::mul(weights_second, lam.item<float>()));
  }
  const Tensor normed = norm->forward(heads) * static_cast<float>(1.0 - lambda_init);
  return o->forward(merge_heads(normed));  // (B, H, T, 2d) -> (B, T, C)
}

}  // namespace qkv::attention
