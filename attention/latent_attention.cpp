// latent_attention.cpp: multi-head latent attention (see latent_attention.h).
#include "attention/latent_attention.h"

namespace qkv::attention {

size_t LatentCache::bytes() const {
  return latent.defined() ? static_cast<size_t>(latent.numel() + k_rope.numel()) * sizeof(float)
                          : 0;
}

MultiHeadLatentAttention::MultiHeadLatentAttention(int64_t c, int64_t h, int64_t latent,
                                                   int64_t rope_dims,
                                                   const LatentAttentionOptions& options,
                                                   Generator* gen)
    : d_model(c),
      num_heads(h),
      head_dim(h > 0 ? c / h : 0),
      d_latent(latent),
      d_rope(rope_dims),
      causal(options.causal) {
  const char* op = "MultiHeadLatentAttention";
  check(h > 0 && c > 0 && c % h == 0, op, "d_model (", c, ") divisible by num_heads (", h, ")");
  check(latent > 0 && rope_dims > 0 && rope_dims % 2 == 0, op,
        "d_latent > 0 and an even d_rope > 0, got ", latent, " and ", rope_dims);
  q = register_module("q", std::make_shared<nn::Linear>(c, c, false, gen));
  q_rope = register_module("q_rope", std::make_shared<nn::Linear>(c, h * rope_dims, false, gen));
  kv_down = register_module("kv_down", std::make_shared<nn::Linear>(c, latent, false, gen));
  k_rope = register_module("k_rope", std::make_shared<nn::Linear>(c, rope_dims, false, gen));
  k_up = register_module("k_up", std::make_shared<nn::Linear>(latent, c, false, gen));
  v_up = register_module("v_up", std::make_shared<nn::Linear>(latent, c, false, gen));
  o = register_module("o", std::make_shared<nn::Linear>(c, c, false, gen));
}

Tensor MultiHeadLatentAttention::forward(const Tensor& x, LatentCache* cache) {
  check(x.defined() && x.dim() == 3 && x.size(2) == d_model, "MultiHeadLatentAttention",
        "an input (B, T, C) with C = d_model = ", d_model, ", got ", shape_of(x));
  const int64_t B = x.size(0), T = x.size(1), H = num_heads, R = d_rope;  // D = head_dim
  const int64_t offset = cache ? cache->position : 0;
  const Tensor q_nope = split_heads(q->forward(x), H);
  const Tensor q_pos = rope(split_heads(q_rope->forward(x), H), offset);
  Tensor latent = kv_down->forward(x);                                  // (B, T, d_latent)
  Tensor k_pos = rope(view(k_rope->forward(x), {B, 1, T, R}), offset);  // one rotary key
  if (cache) {  // keep the latent and the rotary key; everything else is re-expanded
    cache->latent = cache->latent.defined() ? cat({cache->latent, latent}, 1) : latent;
    cache->k_rope = cache->k_rope.defined() ? cat({cache->k_rope, k_pos}, 2) : k_pos;
    cache->position += T;
    latent = cache->latent;
    k_pos = cache->k_rope;
  }
  const int64_t T_k = latent.size(1);
  const Tensor k_nope = split_heads(k_up->forward(latent), H);
  const Tensor values = split_heads(v_up->forward(latent), H);
  const Tensor keys = cat({k_nope, expand(k_pos, {B, H, T_k, R})}, -1);  // (B, H, T_k, D + R)
  // scale: 1 / sqrt(D + R), the width of q . key
  const AttentionOutput a =
      scaled_dot_product_attention(cat({q_nope, q_pos}, -1), keys, values, {.causal = causal});
  attention_weights = detach(a.weights);
  return o->forward(merge_heads(a.output));  // (B, H, T, D) -> (B, T, C)
}

}  // namespace qkv::attention
