// seq2seq.cpp: the encoder-decoder transformer of seq2seq.h.
#include "attention/seq2seq.h"

namespace qkv::attention {

EncoderBlock::EncoderBlock(int64_t C, int64_t H) {
  ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(C));
  attn = register_module("attn", std::make_shared<MultiHeadAttention>(C, H));
  ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(C));
  fc = register_module("fc", std::make_shared<nn::Linear>(C, 4 * C));
  proj = register_module("proj", std::make_shared<nn::Linear>(4 * C, C));
}

Tensor EncoderBlock::forward(const Tensor& x, const Tensor& src_mask) {
  const Tensor h = x + attn->forward(ln1->forward(x), src_mask);
  return h + proj->forward(gelu(fc->forward(ln2->forward(h))));
}

DecoderBlock::DecoderBlock(int64_t C, int64_t H) {
  ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(C));
  self_attn = register_module(
      "self_attn", std::make_shared<MultiHeadAttention>(C, H, MultiHeadOptions{.causal = true}));
  ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(C));
  cross = register_module("cross", std::make_shared<MultiHeadAttention>(C, H));
  ln3 = register_module("ln3", std::make_shared<nn::LayerNorm>(C));
  fc = register_module("fc", std::make_shared<nn::Linear>(C, 4 * C));
  proj = register_module("proj", std::make_shared<nn::Linear>(4 * C, C));
}

Tensor DecoderBlock::forward(const Tensor& y, const Tensor& memory, const Tensor& src_mask,
                             KVCache* cache) {
  Tensor h = y + self_attn->forward(ln1->forward(y), Tensor(), cache);
  h = h + cross->forward_cross(ln2->forward(h), memory, src_mask);
  return h + proj->forward(gelu(fc->forward(ln3->forward(h))));
}

EncoderDecoder::EncoderDecoder(const Seq2SeqConfig& c) : config(c) {
  check(c.vocab_size > 0 && c.n_embd > 0 && c.n_head > 0 && c.n_embd % c.n_head == 0 &&
            c.n_enc_layer > 0 && c.n_dec_layer > 0 && c.max_len > 0,
        "EncoderDecoder", "positive sizes and n_embd (", c.n_embd, ") divisible by n_head (",
        c.n_head, ")");
  tok = register_module("tok", std::make_shared<nn::Embedding>(c.vocab_size, c.n_embd));
  pos_enc = register_module("pos_enc", std::make_shared<nn::Embedding>(c.max_len, c.n_embd));
  pos_dec = register_module("pos_dec", std::make_shared<nn::Embedding>(c.max_len, c.n_embd));
  enc = register_module("enc", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.n_enc_layer; ++i)
    enc->push_back(std::make_shared<EncoderBlock>(c.n_embd, c.n_head));
  ln_enc = register_module("ln_enc", std::make_shared<nn::LayerNorm>(c.n_embd));
  dec = register_module("dec", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.n_dec_layer; ++i)
    dec->push_back(std::make_shared<DecoderBlock>(c.n_embd, c.n_head));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(c.n_embd));
  head = register_module("head", std::make_shared<nn::Linear>(c.n_embd, c.vocab_size, false));
}

Tensor EncoderDecoder::encode(const Tensor& src, const Tensor& src_lengths) {
  check(src.defined() && src.dtype() == Dtype::int64 && src.dim() == 2 &&
            src.size(1) <= config.max_len && src.size(1) >= 1,
        "EncoderDecoder::encode",
        "int64 source ids (B, S) with 1 <= S <= max_len = ", config.max_len, ", got ",
        shape_of(src));
  const int64_t S = src.size(1);
  const Tensor mask = padding_mask(src_lengths, S);  // (B, 1, 1, S): padding is never a key
  Tensor x = tok->forward(src) + pos_enc->forward(arange(S));
  for (int64_t i = 0; i < config.n_enc_layer; ++i)
    x = enc->at<EncoderBlock>(static_cast<size_t>(i))->forward(x, mask);
  return ln_enc->forward(x);
}

Tensor EncoderDecoder::decode(const Tensor& tgt, const Tensor& memory, const Tensor& src_lengths,
                              std::vector<KVCache>* caches) {
  check(tgt.defined() && tgt.dtype() == Dtype::int64 && tgt.dim() == 2, "EncoderDecoder::decode",
        "int64 target ids (B, T), got ", shape_of(tgt));
  if (caches && caches->empty()) caches->resize(static_cast<size_t>(config.n_dec_layer));
  const int64_t T = tgt.size(1), offset = caches ? (*caches)[0].position : 0;
  check(T >= 1 && offset + T <= config.max_len, "EncoderDecoder::decode",
        "target positions within max_len = ", config.max_len, ", got ", offset + T);
  const Tensor mask = padding_mask(src_lengths, memory.size(1));
  Tensor y = tok->forward(tgt) + pos_dec->forward(arange(offset, offset + T));
  for (int64_t i = 0; i < config.n_dec_layer; ++i)
    y = decoder(i).forward(y, memory, mask, caches ? &(*caches)[static_cast<size_t>(i)] : nullptr);
  return head->forward(ln_f->forward(y));
}

std::vector<std::vector<int64_t>> EncoderDecoder::greedy(const Tensor& src,
                                                         const Tensor& src_lengths, int64_t bos,
                                                         int64_t eos, int64_t max_new) {
  NoGradGuard no_grad;
  const int64_t B = src.size(0);
  const Tensor memory = encode(src, src_lengths);
  // Room in each decoder layer's cache for every position the loop below can append.
  KVCache fresh;
  fresh.capacity = std::min(max_new, config.max_len);
  std::vector<KVCache> caches(static_cast<size_t>(config.n_dec_layer), fresh);
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(B));
  std::vector<bool> done(static_cast<size_t>(B), false);
  std::vector<int64_t> last(static_cast<size_t>(B), bos);
  for (int64_t step = 0; step < max_new && step + 1 <= config.max_len; ++step) {
    const Tensor logits = decode(from_vector(last, {B, 1}), memory, src_lengths, &caches);
    const Tensor next = raw::max(raw::select(logits, 1, 0), -1).indices;  // (B,)
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t t = next.at<int64_t>({b});
      last[static_cast<size_t>(b)] = t;
      if (done[static_cast<size_t>(b)]) continue;
      if (t == eos) {
        done[static_cast<size_t>(b)] = true;
      } else {
        out[static_cast<size_t>(b)].push_back(t);
        all_done = false;
      }
    }
    if (all_done) break;
  }
  return out;
}

}  // namespace qkv::attention
