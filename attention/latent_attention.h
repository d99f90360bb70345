// latent_attention.h: multi-head latent attention (MLA, DeepSeek-V2 and V3).
//
// Multi-head attention caches 2 * H * D numbers per token (a key and a value per head). MLA
// caches a small latent vector per token, from which every head's key and value are expanded
// again, plus one rotary key shared by all heads:
//
//   c      = x W_down                       (C -> d_latent)        cached
//   k_rope = rope(x W_kr)                   (C -> d_rope), shared  cached
//   key_h  = [c W_uk_h ; k_rope]            (D + d_rope)
//   val_h  = c W_uv_h                       (D)
//   q_h    = [x W_q_h ; rope(x W_qr_h)]     (D + d_rope)
//   out    = o(concat_h softmax(q_h key_h^T / sqrt(D + d_rope)) val_h)
//
// Why the separate rotary key: RoPE turns keys by their position, so it cannot sit inside the
// latent (the up-projection W_uk is folded into the query at inference, which only works if
// nothing position-dependent stands between them). A few decoupled dims carry position instead.
// Cache per token: d_latent + d_rope floats instead of 2 * H * D: smaller by
// 2 H D / (d_latent + d_rope) (cache_reduction()). This module expands keys and values from
// the cached latent at every step (the plain form); DeepSeek's inference also absorbs W_uk into
// the query and W_uv into the output, the same numbers with less work.
#pragma once

#include "attention/core.h"

namespace qkv::attention {

struct LatentCache {
  Tensor latent;  // (B, T_so_far, d_latent)
  Tensor k_rope;  // (B, 1, T_so_far, d_rope), already rotated
  int64_t position = 0;
  int64_t length() const { return latent.defined() ? latent.size(1) : 0; }
  size_t bytes() const;
};

struct LatentAttentionOptions {
  bool causal = true;
};

class MultiHeadLatentAttention : public nn::UnaryModule {
 public:
  MultiHeadLatentAttention(int64_t d_model, int64_t num_heads, int64_t d_latent, int64_t d_rope,
                           const LatentAttentionOptions& options = {}, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override { return forward(x, nullptr); }
  Tensor forward(const Tensor& x, LatentCache* cache);  // (B, T, C) -> (B, T, C)
  // MHA's cache per token over MLA's: 2 H D / (d_latent + d_rope).
  double cache_reduction() const {
    return 2.0 * static_cast<double>(num_heads * head_dim) / static_cast<double>(d_latent + d_rope);
  }
  std::shared_ptr<nn::Linear> q, q_rope, kv_down, k_rope, k_up, v_up, o;
  int64_t d_model, num_heads, head_dim, d_latent, d_rope;
  bool causal;
  Tensor attention_weights;  // of the last forward, without history: (B, H, T_q, T_k)
};

}  // namespace qkv::attention
