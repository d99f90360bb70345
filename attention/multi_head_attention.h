// multi_head_attention.h: several attention heads side by side, two ways.
//
// MultiHeadAttentionWrapper(d_in, d_out_kq, d_out_v, num_heads): num_heads independent
//   SelfAttention modules ("heads.0", "heads.1", ...); their outputs are concatenated on the
//   last dim, (T, num_heads * d_out_v). Easy to read, one small matmul per head.
//
// MultiHeadAttention(d_model, num_heads): the fused form models use. One Linear each for
//   Q, K and V projects all heads at once, the heads are split by a view and a transpose, the
//   core attends in every head in one batched call, and an output projection W_O mixes them:
//     x (B, T, C) -> q, k, v (B, T, C) -> view (B, T, H, D) -> transpose (B, H, T, D)
//     attention per head -> (B, H, T, D) -> transpose, reshape (B, T, C) -> o -> (B, T, C)
//   with D = C / H. Its Linear layers are named q, k, v, o and created in that order. With
//   bias off and o the identity, it computes exactly what the wrapper computes.
//   Its options (MultiHeadOptions, by name: {.causal = true}) turn it into the variants
//   today's models use:
//     num_kv_heads   grouped-query attention: k and v project to H_kv < H heads, each shared
//                    by H / H_kv query heads (1: multi-query); the KV cache shrinks by H / H_kv
//     window         sliding-window causal attention (Mistral, Gemma): the last `window` keys
//     rope, alibi    positions by rotation or by a distance penalty (positions.h)
//     flash          the tiled kernel, O(T * D) memory (core.h)
//     frontier       qk_norm, softcap, sinks and gate (lesson 23), apart from the classic ones
//   and forward(x, mask, cache) decodes incrementally with a KVCache (kv_cache.h).
#pragma once

#include "attention/core.h"
#include "attention/kv_cache.h"
#include "attention/self_attention.h"

namespace qkv::attention {

class MultiHeadAttentionWrapper : public nn::UnaryModule {
 public:
  MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out_kq, int64_t d_out_v, int64_t num_heads,
                            Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<SelfAttention> head(int64_t i) const {
    return heads->at<SelfAttention>(static_cast<size_t>(i));
  }
  std::shared_ptr<nn::ModuleList> heads;
  int64_t num_heads;
  Tensor attention_weights;  // of the last forward, without history: (..., H, T, T)
};

// The frontier options (lesson 23), kept apart from the classic ones: each adds one piece to
// the module, a named step in its forward, and all are off by default.
struct FrontierOptions {
  bool qk_norm = false;  // RMSNorm of each head's q and k before the scores (Qwen3, OLMo 2):
                         // modules q_norm and k_norm over head_dim
  double softcap = 0;    // > 0: scores <- softcap * tanh(scores / softcap) (Gemma 2)
  bool sinks = false;    // a learned sink logit per head, parameter "sinks" (gpt-oss)
  bool gate = false;     // a sigmoid gate per head and token on the attention output, from a
                         // Linear "g" (C -> H) of the input (gated attention, Qwen3-Next)
};

// Built by name: MultiHeadAttention(C, H, {.causal = true, .dropout = 0.1}).
struct MultiHeadOptions {
  int64_t num_kv_heads = 0;  // key/value heads: 0 means num_heads; 1 is multi-query attention
  bool causal = false;
  double dropout = 0.0;  // on the attention weights, in training only
  bool bias = true;      // of the four Linear layers
  int64_t window = 0;    // sliding window (needs causal); 0: none
  bool rope = false;     // rotate q and k by position (applied before caching)
  double rope_base = 10000.0;
  bool alibi = false;  // the ALiBi paper's slopes for num_heads heads
  bool flash = false;  // the tiled kernel; attention_weights stays undefined
  FrontierOptions frontier{};
};

class MultiHeadAttention : public nn::UnaryModule {
 public:
  MultiHeadAttention(int64_t d_model, int64_t num_heads, const MultiHeadOptions& options = {},
                     Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override { return forward(x, Tensor()); }
  // mask: bool (true = may attend) or additive float, broadcast to (B, H, T_q, T_k).
  // cache: keys and values of earlier positions; this call's are appended, its queries come
  // after them (positions cache->position + t for RoPE, ALiBi and the causal mask).
  Tensor forward(const Tensor& x, const Tensor& mask, KVCache* cache = nullptr);
  // Cross-attention: queries from x (B, T_q, C), keys and values from memory (B, T_k, C) (an
  // encoder's output); mask as above, e.g. the memory's padding.
  Tensor forward_cross(const Tensor& x, const Tensor& memory, const Tensor& mask = Tensor());
  std::shared_ptr<nn::Linear> q, k, v, o;
  // The frontier's pieces, each there only with its option.
  std::shared_ptr<nn::RMSNorm> q_norm, k_norm;  // qk_norm
  std::shared_ptr<nn::Linear> g;                // gate
  Tensor sinks;                                 // sinks: (H,), zeros at first
  int64_t d_model, num_heads, num_kv_heads, head_dim;
  MultiHeadOptions options;
  Tensor attention_weights;  // of the last forward, without history: (B, H, T_q, T_k)

 private:
  // Queries from x attend to keys and values from source (x itself, or the memory).
  Tensor attend(const Tensor& x, const Tensor& source, const Tensor& mask, KVCache* cache);
  AttentionOptions core_options(const Tensor& mask) const;  // for scaled_dot_product_attention
  Generator* gen_;
};

}  // namespace qkv::attention
