// gpt.cpp: the block and the tiny GPT of gpt.h, in the reference's construction order (which
// is its draw order: tok, pos, then per block q, k, v, o, fc, proj, and last the head).
#include "attention/gpt.h"

namespace qkv::attention {

Block::Block(int64_t C, int64_t H, bool is_causal) : n_head(H), causal(is_causal) {
  check(C > 0 && H > 0 && C % H == 0, "Block", "n_embd (", C, ") divisible by n_head (", H, ")");
  ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(C));
  q = register_module("q", std::make_shared<nn::Linear>(C, C));
  k = register_module("k", std::make_shared<nn::Linear>(C, C));
  v = register_module("v", std::make_shared<nn::Linear>(C, C));
  o = register_module("o", std::make_shared<nn::Linear>(C, C));
  ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(C));
  fc = register_module("fc", std::make_shared<nn::Linear>(C, 4 * C));
  proj = register_module("proj", std::make_shared<nn::Linear>(4 * C, C));
}

Tensor Block::attention(const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), H = n_head, D = C / H;
  // (B, T, C) -> (B, T, H, D) -> (B, H, T, D)
  auto heads = [&](const Tensor& t) { return transpose(view(t, {B, T, H, D}), 1, 2); };
  AttentionOptions options;
  options.causal = causal;
  const AttentionOutput a = scaled_dot_product_attention(heads(q->forward(x)), heads(k->forward(x)),
                                                         heads(v->forward(x)), options);
  attention_weights = detach(a.weights);
  // (B, H, T, D) -> (B, T, H, D) -> (B, T, C)
  return o->forward(reshape(transpose(a.output, 1, 2), {B, T, C}));
}

Tensor Block::forward(const Tensor& x) {
  check(x.defined() && x.dim() == 3 && x.size(2) == ln1->normalized_shape, "Block",
        "an input (B, T, C) with C = ", ln1->normalized_shape, ", got ",
        x.defined() ? shape_str(x.shape()) : "undefined");
  const Tensor h = x + attention(ln1->forward(x));
  return h + proj->forward(gelu(fc->forward(ln2->forward(h))));
}

GPT::GPT(const GPTConfig& c) : config(c) {
  check(c.vocab_size > 0 && c.n_embd > 0 && c.n_head > 0 && c.n_layer > 0 && c.block > 0, "GPT",
        "positive vocab_size, n_embd, n_head, n_layer and block, got ", c.vocab_size, ", ",
        c.n_embd, ", ", c.n_head, ", ", c.n_layer, " and ", c.block);
  check(c.n_embd % c.n_head == 0, "GPT", "n_embd (", c.n_embd, ") divisible by n_head (", c.n_head,
        ")");
  tok = register_module("tok", std::make_shared<nn::Embedding>(c.vocab_size, c.n_embd));
  pos = register_module("pos", std::make_shared<nn::Embedding>(c.block, c.n_embd));
  blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.n_layer; ++i)
    blocks->push_back(std::make_shared<Block>(c.n_embd, c.n_head, c.causal));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(c.n_embd));
  head = register_module("head", std::make_shared<nn::Linear>(c.n_embd, c.vocab_size, false));
}

void GPT::set_causal(bool causal) {
  config.causal = causal;
  for (int64_t i = 0; i < config.n_layer; ++i) block(i).causal = causal;
}

Tensor GPT::forward(const Tensor& idx) {
  check(idx.defined() && idx.dtype() == Dtype::int64 && idx.dim() == 2, "GPT",
        "int64 token ids (B, T), got ",
        idx.defined() ? dtype_name(idx.dtype()) + " " + shape_str(idx.shape())
                      : std::string("undefined"));
  const int64_t T = idx.size(1);
  check(T >= 1 && T <= config.block, "GPT", "a sequence length T in [1, block = ", config.block,
        "], got T = ", T);
  // tok(idx) + pos(arange(T)): the same position vectors for every sequence of the batch.
  Tensor x = tok->forward(idx) + pos->forward(arange(T));  // (B, T, C)
  for (int64_t i = 0; i < config.n_layer; ++i) x = block(i).forward(x);
  return head->forward(ln_f->forward(x));  // (B, T, V)
}

}  // namespace qkv::attention
