// gpt.h: the transformer block and the tiny GPT, built exactly as their PyTorch twin
// (tools/tiny_gpt_twin.py) builds them, so the same seed gives the same model
// and a checkpoint moves between the two by name.
//
// Legend: B batch, T positions (<= block), C = n_embd, H = n_head, D = C / H, V vocabulary.
//
//   GPT:    x = tok(idx) + pos(0..T-1)                      (B, T, C)
//           x = blocks(x); logits = head(ln_f(x))            (B, T, V)
//   Block:  x = x + attn(ln1(x))                             pre-LayerNorm, residual
//           x = x + mlp(ln2(x))
//   attn:   q, k, v = Linear(C, C) each, split into H heads of D, then the attention core
//           (core.h) with a causal mask (which can be switched off: the lesson of lesson 16),
//           the heads merged and mixed by o. With fused paths on (tensor/fused.h) the core
//           runs its fused multi-head kernel for training and evaluation: the same numbers.
//   mlp:    proj(gelu(fc(x))), width 4C, exact GELU (GPT-2: its tanh approximation)
// Parameter names: tok.weight, pos.weight, blocks.0.ln1.weight, blocks.0.q.weight, ...,
// ln_f.weight, head.weight: torch's state_dict keys for the reference model. GPT-2's own
// checkpoints name them differently; attention/gpt2.h maps its names onto these.
#pragma once

#include <functional>

#include "attention/multi_head_attention.h"

namespace qkv::attention {

struct GPTConfig {
  int64_t vocab_size = 0;
  int64_t n_embd = 64, n_head = 4, n_layer = 2, block = 32;
  bool causal = true;
  // RoPE instead of the learned position table (lesson 22): no pos.weight, q and k rotated in
  // every block; sequences may then be longer than block (no table to run out of).
  bool rope = false;
  // GPT-2's choices (attention/gpt2.h reads them from a Hugging Face config.json):
  GeluApproximation gelu = GeluApproximation::none;  // GPT-2: tanh ("gelu_new")
  double layer_norm_eps = 1e-5;
  // The output head shares the token table: logits = ln_f(x) @ tok.weight^T, and there is no
  // head.weight (GPT-2 ties them).
  bool tie_head = false;
};

// The config as a JSON object ({"vocab_size": 27, "n_embd": 64, ...}, every field), and back:
// a missing field, a size out of range, a choice qkv does not know is a qkv::Error naming
// `where` and the field. A checkpoint keeps it, so a saved model needs no flags to rebuild.
std::string gpt_config_json(const GPTConfig& config);
GPTConfig gpt_config_from_json(const std::string& json, const std::string& where);
// The number of parameters a GPT of this config has (what GPT::num_parameters() would say,
// computed without building it), or a qkv::Error if it would not fit in an int64.
int64_t gpt_num_parameters(const GPTConfig& config);

// An attention function to run in every block in place of scaled_dot_product_attention (a
// learner's own, tutorials/exercises): q (B, H, T_q, D) against k, v (B, H, T_k, D) after RoPE
// and the KV cache, causal; returns (B, H, T_q, D). T_q == T_k over a whole sequence; T_q = 1
// when decoding with the cache, its one query after every key.
using AttentionFn = std::function<Tensor(const Tensor& q, const Tensor& k, const Tensor& v)>;

class Block : public nn::UnaryModule {
 public:
  explicit Block(const GPTConfig& config);  // n_embd, n_head, causal and rope
  Tensor forward(const Tensor& x) override { return forward(x, nullptr); }  // (B, T, C)
  Tensor forward(const Tensor& x, KVCache* cache);  // incremental: x's positions come after cache
  // The two sublayers, without their residual adds: (B, T, C) -> (B, T, C).
  Tensor attn(const Tensor& x, KVCache* cache = nullptr);
  Tensor mlp(const Tensor& x);
  std::shared_ptr<nn::LayerNorm> ln1, ln2;
  GeluApproximation gelu_approximation;
  std::shared_ptr<nn::Linear> q, k, v, o, fc, proj;
  int64_t n_head;
  bool causal, rope;
  // Of the last forward, without history: (B, H, T_q, T_k); undefined with attention_fn.
  Tensor attention_weights;
  AttentionFn attention_fn;  // empty: the attention core (GPT::set_attention)
};

// How GPT::generate picks each next token.
struct SampleOptions {
  double temperature = 1.0;  // logits are divided by it: < 1 sharper, > 1 flatter; 0: greedy
                             // (the most likely token, the first on a tie; no draw from gen)
  int64_t top_k = 0;         // draw only from the k most likely tokens; 0: from all
  bool use_cache = true;     // decode with a KV cache per layer (same tokens, less work)
};

// One token drawn from softmax(logits / temperature), restricted to the top_k largest logits,
// with one uniform draw from gen; at temperature 0, and at a temperature so small that the
// largest logit / temperature leaves float's range, the first largest logit (greedy). NaN
// logits, or all of them -inf, are a qkv::Error: there is nothing to draw from.
int64_t sample_token(std::vector<float> logits, const SampleOptions& options, Generator& gen);

class GPT : public nn::Module {
 public:
  explicit GPT(const GPTConfig& config);
  Tensor forward(const Tensor& idx) { return forward(idx, nullptr); }  // (B, T) -> (B, T, V)
  // With caches (one per layer, resized on first use): idx holds the positions after the
  // cached ones, which must stay within block.
  Tensor forward(const Tensor& idx, std::vector<KVCache>* caches);
  Tensor operator()(const Tensor& idx) { return forward(idx); }
  // Appends n tokens to ids, each drawn from softmax(logits / temperature) (top-k filtered) with
  // one uniform draw from gen. The context is the last `block` tokens (no position beyond).
  // With the cache each step feeds only the newest token until the context is full; after
  // that every step recomputes the last `block` tokens, exactly as without the cache.
  std::vector<int64_t> generate(std::vector<int64_t> ids, int64_t n, const SampleOptions& options,
                                Generator& gen);
  void set_causal(bool causal);        // every block at once
  void set_attention(AttentionFn fn);  // every block at once; empty: the attention core
  Block& block(int64_t i) const { return *blocks->at<Block>(static_cast<size_t>(i)); }
  GPTConfig config;
  std::shared_ptr<nn::Embedding> tok, pos;  // pos: null with rope
  std::shared_ptr<nn::ModuleList> blocks;
  std::shared_ptr<nn::LayerNorm> ln_f;
  std::shared_ptr<nn::Linear> head;  // null with tie_head
};

}  // namespace qkv::attention
