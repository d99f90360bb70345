// multi_head_attention.cpp: the wrapper and the fused multi-head attention (see the header).
#include "attention/multi_head_attention.h"

namespace qkv::attention {

MultiHeadAttentionWrapper::MultiHeadAttentionWrapper(int64_t d_in, int64_t d_out_kq,
                                                     int64_t d_out_v, int64_t h, Generator* gen)
    : num_heads(h) {
  check(h > 0, "MultiHeadAttentionWrapper", "num_heads > 0, got ", h);
  heads = register_module("heads", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < h; ++i)
    heads->push_back(std::make_shared<SelfAttention>(d_in, d_out_kq, d_out_v, gen));
}

Tensor MultiHeadAttentionWrapper::forward(const Tensor& x) {
  std::vector<Tensor> outputs, weights;
  for (int64_t i = 0; i < num_heads; ++i) {
    outputs.push_back(head(i)->forward(x));  // (..., T, d_out_v)
    weights.push_back(head(i)->attention_weights);
  }
  attention_weights = raw::stack(weights, -3);  // (..., H, T, T)
  return cat(outputs, -1);                      // (..., T, H * d_out_v)
}

MultiHeadAttention::MultiHeadAttention(int64_t c, int64_t h, const MultiHeadOptions& opts,
                                       Generator* gen)
    : d_model(c),
      num_heads(h),
      num_kv_heads(opts.num_kv_heads == 0 ? h : opts.num_kv_heads),
      head_dim(h > 0 ? c / h : 0),
      options(opts),
      gen_(gen) {
  const char* op = "MultiHeadAttention";
  check(h > 0 && c > 0 && c % h == 0, op, "d_model (", c, ") divisible by num_heads (", h, ")");
  check(num_kv_heads > 0 && h % num_kv_heads == 0, op, "num_kv_heads (", num_kv_heads,
        ") dividing num_heads (", h, ")");
  check(opts.dropout >= 0 && opts.dropout < 1, op, "dropout in [0, 1), got ", opts.dropout);
  check(opts.window >= 0 && (opts.window == 0 || opts.causal), op,
        "a window >= 0, and only with causal, got ", opts.window);
  check(!opts.rope || head_dim % 2 == 0, op, "an even head_dim for rope, got ", head_dim);
  const int64_t kv = num_kv_heads * head_dim;
  q = register_module("q", std::make_shared<nn::Linear>(c, c, opts.bias, gen));
  k = register_module("k", std::make_shared<nn::Linear>(c, kv, opts.bias, gen));
  v = register_module("v", std::make_shared<nn::Linear>(c, kv, opts.bias, gen));
  o = register_module("o", std::make_shared<nn::Linear>(c, c, opts.bias, gen));
  const FrontierOptions& f = opts.frontier;
  check(f.softcap >= 0, op, "softcap >= 0 (0: none), got ", f.softcap);
  if (f.qk_norm) {
    q_norm = register_module("q_norm", std::make_shared<nn::RMSNorm>(head_dim));
    k_norm = register_module("k_norm", std::make_shared<nn::RMSNorm>(head_dim));
  }
  if (f.gate) g = register_module("g", std::make_shared<nn::Linear>(c, h, opts.bias, gen));
  if (f.sinks) sinks = register_parameter("sinks", zeros({h}));
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& mask, KVCache* cache) {
  check(x.defined() && x.dim() == 3 && x.size(2) == d_model, "MultiHeadAttention",
        "an input (B, T, C) with C = d_model = ", d_model, ", got ", shape_of(x));
  check(!(options.alibi && cache && cache->window > 0), "MultiHeadAttention",
        "ALiBi with a rolling KV cache (its distances would count dropped positions)");
  return attend(x, x, mask, cache);
}

Tensor MultiHeadAttention::forward_cross(const Tensor& x, const Tensor& memory,
                                         const Tensor& mask) {
  check(memory.defined() && memory.dim() == 3 && x.defined() && x.dim() == 3 &&
            memory.size(0) == x.size(0) && memory.size(2) == d_model && x.size(2) == d_model,
        "MultiHeadAttention::forward_cross", "memory (B, T_k, C) with x's B and C = ", d_model,
        ", got x ", shape_of(x), " and memory ", shape_of(memory));
  check(!options.causal && !options.rope, "MultiHeadAttention::forward_cross",
        "a module without causal or rope (positions of two sequences do not align)");
  return attend(x, memory, mask, nullptr);
}

AttentionOptions MultiHeadAttention::core_options(const Tensor& mask) const {
  AttentionOptions a{.mask = mask,
                     .causal = options.causal,
                     .window = options.window,
                     .dropout_p = is_training() ? options.dropout : 0.0,
                     .generator = gen_,
                     .flash = options.flash};
  if (options.alibi) a.alibi_slopes = alibi_slopes(num_heads);
  if (options.frontier.softcap > 0) a.softcap = options.frontier.softcap;  // frontier: softcap
  if (options.frontier.sinks) a.sinks = sinks;                             // frontier: sinks
  return a;
}

Tensor MultiHeadAttention::attend(const Tensor& x, const Tensor& source, const Tensor& mask,
                                  KVCache* cache) {
  Tensor queries = split_heads(q->forward(x), num_heads);         // (B, H, T_q, D)
  Tensor keys = split_heads(k->forward(source), num_kv_heads);    // (B, H_kv, T_k, D)
  Tensor values = split_heads(v->forward(source), num_kv_heads);  // (B, H_kv, T_k, D)
  if (q_norm) {  // frontier: qk_norm, each head's q and k to unit RMS (times a learned scale)
    queries = q_norm->forward(queries);
    keys = k_norm->forward(keys);
  }
  if (options.rope) {  // rotated before caching: a cached key keeps the angle of its position
    const int64_t offset = cache ? cache->position : 0;  // this call's tokens come after those
    queries = rope(queries, offset, options.rope_base);
    keys = rope(keys, offset, options.rope_base);
  }
  if (cache) {  // this call's keys and values join the earlier ones
    cache->append(keys, values);
    keys = cache->k;
    values = cache->v;
  }
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values, core_options(mask));
  attention_weights = a.weights.defined() ? detach(a.weights) : Tensor();
  Tensor heads = a.output;  // (B, H, T_q, D)
  if (g)  // frontier: gate, head h of token t scaled by sigmoid(g(x))[t, h], in (0, 1)
    heads = heads * unsqueeze(transpose(sigmoid(g->forward(x)), 1, 2), -1);
  return o->forward(merge_heads(heads));  // (B, T_q, C): the heads side by side, mixed by o
}

}  // namespace qkv::attention
