// gpt2.h: OpenAI's GPT-2, from a Hugging Face checkpoint folder, as qkv's own GPT (gpt.h).
//
// GPT-2 is the tiny GPT of lesson 16 with four choices of its own, all GPTConfig fields:
// GELU's tanh approximation, LayerNorm's eps from the config, the output head tied to the
// token table, and its sizes (GPT-2 small: C 768, 12 heads, 12 layers, 1,024 positions,
// 50,257 tokens). It runs through the same Block, the same attention core and the same KV cache.
//
// A folder as Hugging Face's `gpt2` repository holds it:
//   config.json        {"n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
//                       "vocab_size": 50257, "layer_norm_epsilon": 1e-05, ...}
//   model.safetensors  the weights (F32), named as below, with or without "transformer."
//   vocab.json, merges.txt (or encoder.json, vocab.bpe): the tokenizer (bpe_tokenizer.h)
//
// Hugging Face's names, and where each goes (GPT-2 keeps its projections in Conv1D layers,
// which store the weight (in, out), the transpose of a Linear's (out, in)):
//   wte.weight (V, C)               -> tok.weight
//   wpe.weight (n_positions, C)     -> pos.weight
//   h.i.ln_1.{weight,bias}          -> blocks.i.ln1
//   h.i.attn.c_attn.weight (C, 3C)  -> blocks.i.q, k, v: columns [0, C), [C, 2C), [2C, 3C),
//   h.i.attn.c_attn.bias (3C)          each transposed to (C, C); the bias cut the same way
//   h.i.attn.c_proj (C, C)          -> blocks.i.o (transposed)
//   h.i.ln_2                        -> blocks.i.ln2
//   h.i.mlp.c_fc (C, 4C)            -> blocks.i.fc (transposed)
//   h.i.mlp.c_proj (4C, C)          -> blocks.i.proj (transposed)
//   ln_f                            -> ln_f
//   lm_head.weight, h.i.attn.bias, h.i.attn.masked_bias: skipped (the tied head is wte; the
//   other two are the causal mask as a buffer, not weights)
#pragma once

#include <memory>
#include <string>

#include "attention/gpt.h"
#include "nn/json.h"
#include "nn/safetensors.h"

namespace qkv::attention {

// A GPT-2's sizes: what its config.json names n_embd, n_head, n_layer, n_positions and
// vocab_size. GPT-2 small is {50257, 768, 12, 12, 1024}.
struct Gpt2Sizes {
  int64_t vocab_size = 0, n_embd = 0, n_head = 0, n_layer = 0, n_positions = 0;
};

// The GPTConfig of a GPT-2 of these sizes: GELU's tanh approximation, LayerNorm eps 1e-5, the
// head tied to the token table, causal, learned positions. The one place GPT-2's choices are
// written; gpt2_config(json) starts from it.
GPTConfig gpt2_config(const Gpt2Sizes& sizes);

// The GPTConfig of a config.json's text (`file` names it in errors): GPT-2's sizes, its
// LayerNorm eps, its GELU ("gelu_new" or "gelu_pytorch_tanh": tanh; "gelu": exact; absent:
// GPT-2's default, tanh), the head tied, causal.
GPTConfig gpt2_config(const std::string& json_text, const std::string& file);
std::string gpt2_config_json(const GPTConfig& config);  // what gpt2_config reads back

// Loads config.json and model.safetensors from dir. A missing folder or file, bad JSON, a
// truncated safetensors file, a missing or unknown weight, or a shape that does not match
// config.json is a qkv::Error naming the file and the problem; nothing is half-loaded.
std::unique_ptr<GPT> load_gpt2(const std::string& dir);

// The model of `config` from weights under Hugging Face's names and in its layout (`file`
// names them in errors): what load_gpt2 does once it has read the two files.
std::unique_ptr<GPT> gpt2_from_weights(const GPTConfig& config, const nn::NamedTensors& weights,
                                       const std::string& file);

// Random weights for a GPT-2 of `config`, under Hugging Face's names, in its layout and in
// its order (wte, wpe, then each layer's ln_1, c_attn, c_proj, ln_2, c_fc, mlp.c_proj, weight
// before bias, then ln_f), each drawn after manual_seed(seed) with torch.randn's numbers:
// matrices and tables 0.3 * randn, biases and LayerNorm shifts 0.1 * randn, LayerNorm gains
// 1 + 0.1 * randn. tools/gen_gpt2_reference.py draws the same tensors in PyTorch, so a test
// compares qkv's logits with that script's own GPT-2, and a lesson can run a tiny GPT-2 with
// no download.
nn::NamedTensors random_gpt2_weights(const GPTConfig& config, uint64_t seed);

}  // namespace qkv::attention
