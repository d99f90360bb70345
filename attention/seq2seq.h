// seq2seq.h: an encoder-decoder transformer (Vaswani et al. 2017, pre-LayerNorm), the model in
// which cross-attention does its work: a decoder that writes one sequence while it looks at
// another.
//
//   encoder:  x = tok(src) + pos_enc                                   (B, S, C)
//             x = x + attn(ln1(x), src padding mask)     every token sees every real token
//             x = x + mlp(ln2(x));   memory = ln(x)
//   decoder:  y = tok(tgt) + pos_dec                                   (B, T, C)
//             y = y + self_attn(ln1(y))  causal           what it has written so far
//             y = y + cross(ln2(y), memory, src mask)     queries from the decoder,
//                                                         keys and values from the encoder
//             y = y + mlp(ln3(y));  logits = head(ln_f(y))             (B, T, V)
//
// The token table is shared by both sides. Greedy decoding feeds the decoder one token at a
// time with a KV cache per layer for its self-attention (the encoder's memory is fixed).
#pragma once

#include "attention/multi_head_attention.h"

namespace qkv::attention {

struct Seq2SeqConfig {
  int64_t vocab_size = 0;
  int64_t n_embd = 64, n_head = 4, n_enc_layer = 2, n_dec_layer = 2;
  int64_t max_len = 32;  // longest source and longest target (position tables)
};

class EncoderBlock : public nn::Module {
 public:
  EncoderBlock(int64_t n_embd, int64_t n_head);
  Tensor forward(const Tensor& x, const Tensor& src_mask);
  std::shared_ptr<nn::LayerNorm> ln1, ln2;
  std::shared_ptr<MultiHeadAttention> attn;
  std::shared_ptr<nn::Linear> fc, proj;
};

class DecoderBlock : public nn::Module {
 public:
  DecoderBlock(int64_t n_embd, int64_t n_head);
  Tensor forward(const Tensor& y, const Tensor& memory, const Tensor& src_mask,
                 KVCache* cache = nullptr);
  std::shared_ptr<nn::LayerNorm> ln1, ln2, ln3;
  std::shared_ptr<MultiHeadAttention> self_attn, cross;
  std::shared_ptr<nn::Linear> fc, proj;
};

class EncoderDecoder : public nn::Module {
 public:
  explicit EncoderDecoder(const Seq2SeqConfig& config);
  // src (B, S) int64, src_lengths (B,) int64 (tokens past a length are padding) -> (B, S, C).
  Tensor encode(const Tensor& src, const Tensor& src_lengths);
  // tgt (B, T) -> logits (B, T, V); with caches (one per decoder layer) tgt holds the
  // positions after the cached ones.
  Tensor decode(const Tensor& tgt, const Tensor& memory, const Tensor& src_lengths,
                std::vector<KVCache>* caches = nullptr);
  Tensor forward(const Tensor& src, const Tensor& src_lengths, const Tensor& tgt) {
    return decode(tgt, encode(src, src_lengths), src_lengths);
  }
  // Greedy decoding of one batch: starts from bos, appends the most likely token each step
  // (KV cache), stops a sequence at eos or after max_new tokens. Returns the generated tokens
  // of each sequence, without bos and eos.
  std::vector<std::vector<int64_t>> greedy(const Tensor& src, const Tensor& src_lengths,
                                           int64_t bos, int64_t eos, int64_t max_new);
  DecoderBlock& decoder(int64_t i) const { return *dec->at<DecoderBlock>(static_cast<size_t>(i)); }
  Seq2SeqConfig config;
  std::shared_ptr<nn::Embedding> tok, pos_enc, pos_dec;
  std::shared_ptr<nn::ModuleList> enc, dec;
  std::shared_ptr<nn::LayerNorm> ln_enc, ln_f;
  std::shared_ptr<nn::Linear> head;
};

}  // namespace qkv::attention
