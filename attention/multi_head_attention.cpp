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
  check(opts.softcap >= 0, op, "softcap >= 0 (0: none), got ", opts.softcap);
  if (opts.qk_norm) {
    q_norm = register_module("q_norm", std::make_shared<nn::RMSNorm>(head_dim));
    k_norm = register_module("k_norm", std::make_shared<nn::RMSNorm>(head_dim));
  }
  if (opts.gate) g = register_module("g", std::make_shared<nn::Linear>(c, h, opts.bias, gen));
  if (opts.sinks) sinks = register_parameter("sinks", zeros({h}));
}

namespace {
MultiHeadOptions plain(bool causal, double dropout, bool bias) {
  MultiHeadOptions o;
  o.causal = causal;
  o.dropout = dropout;
  o.bias = bias;
  return o;
}
}  // namespace

MultiHeadAttention::MultiHeadAttention(int64_t c, int64_t h, bool is_causal, double p, bool bias,
                                       Generator* gen)
    : MultiHeadAttention(c, h, plain(is_causal, p, bias), gen) {}

MultiHeadCall MultiHeadAttention::call_with(const Tensor& mask) {
  MultiHeadCall call;
  call.q_norm = q_norm.get();
  call.k_norm = k_norm.get();
  call.gate = g.get();
  call.sinks = sinks.defined() ? &sinks : nullptr;
  call.mask = &mask;
  call.training = is_training();
  call.generator = gen_;
  call.weights = &attention_weights;
  return call;
}

Tensor MultiHeadAttention::forward(const Tensor& x, const Tensor& mask, KVCache* cache) {
  MultiHeadCall call = call_with(mask);
  call.cache = cache;
  return multi_head_attention(x, *q, *k, *v, *o, num_heads, options, call);
}

Tensor MultiHeadAttention::forward_cross(const Tensor& x, const Tensor& memory,
                                         const Tensor& mask) {
  check(memory.defined() && memory.dim() == 3 && x.defined() && x.dim() == 3 &&
            memory.size(0) == x.size(0) && memory.size(2) == d_model,
        "MultiHeadAttention::forward_cross", "memory (B, T_k, C) with x's B and C = ", d_model,
        ", got x ", x.defined() ? shape_str(x.shape()) : "undefined", " and memory ",
        memory.defined() ? shape_str(memory.shape()) : "undefined");
  check(!options.causal && !options.rope, "MultiHeadAttention::forward_cross",
        "a module without causal or rope (positions of two sequences do not align)");
  MultiHeadCall call = call_with(mask);
  call.memory = &memory;
  return multi_head_attention(x, *q, *k, *v, *o, num_heads, options, call);
}

Tensor multi_head_attention(const Tensor& x, nn::Linear& q, nn::Linear& k, nn::Linear& v,
                            nn::Linear& o, int64_t num_heads, const MultiHeadOptions& options,
                            const MultiHeadCall& call) {
  const int64_t C = q.in_features;
  check(x.defined() && x.dim() == 3 && x.size(2) == C, "MultiHeadAttention",
        "an input (B, T, C) with C = d_model = ", C, ", got ",
        x.defined() ? shape_str(x.shape()) : "undefined");
  const int64_t B = x.size(0), T = x.size(1), H = num_heads, D = q.out_features / H;
  const int64_t H_kv = k.out_features / D;
  // (B, T, heads * D) -> (B, T, heads, D) -> (B, heads, T, D): each head its own D-wide slice.
  auto split_heads = [&](const Tensor& t, int64_t heads) {
    return transpose(view(t, {B, T, heads, D}), 1, 2);
  };
  // Keys and values come from x (self-attention) or from the memory (cross-attention).
  const Tensor& source = call.memory ? *call.memory : x;
  const int64_t T_src = source.size(1);
  auto split_source = [&](const Tensor& t) {
    return transpose(view(t, {B, T_src, H_kv, D}), 1, 2);
  };
  Tensor queries = split_heads(q.forward(x), H);
  Tensor keys = split_source(k.forward(source));
  Tensor values = split_source(v.forward(source));
  if (options.qk_norm) {  // each head's q and k to unit RMS (times a learned scale)
    check(call.q_norm && call.k_norm, "MultiHeadAttention", "q_norm and k_norm for qk_norm");
    queries = call.q_norm->forward(queries);
    keys = call.k_norm->forward(keys);
  }
  // Positions of this call's tokens start after the cached ones.
  const int64_t offset = call.cache ? call.cache->position : 0;
  check(!(options.alibi && call.cache && call.cache->window > 0), "MultiHeadAttention",
        "ALiBi with a rolling KV cache (its distances would count dropped positions)");
  if (options.rope) {  // rotated before caching: a cached key keeps the angle of its position
    queries = rope(queries, offset, options.rope_base);
    keys = rope(keys, offset, options.rope_base);
  }
  if (call.cache) {
    call.cache->append(keys, values);
    keys = call.cache->k;
    values = call.cache->v;
  }
  AttentionOptions a;
  if (call.mask) a.mask = *call.mask;
  a.causal = options.causal;
  a.window = options.window;
  a.dropout_p = call.training ? options.dropout : 0.0;
  a.generator = call.generator;
  if (options.alibi) a.alibi_slopes = alibi_slopes(H);
  a.flash = options.flash;
  if (options.softcap > 0) a.softcap = options.softcap;
  if (call.sinks) a.sinks = *call.sinks;
  const AttentionOutput out = scaled_dot_product_attention(queries, keys, values, a);
  if (call.weights) *call.weights = out.weights.defined() ? detach(out.weights) : Tensor();
  Tensor heads = out.output;  // (B, H, T, D)
  if (options.gate) {         // head h of token t scaled by sigmoid(g(x))[t, h], in (0, 1)
    check(call.gate != nullptr, "MultiHeadAttention", "a gate Linear for gate");
    heads = heads * unsqueeze(transpose(sigmoid(call.gate->forward(x)), 1, 2), -1);
  }
  // (B, H, T, D) -> (B, T, H, D) -> (B, T, C): the heads side by side again, then mixed by o.
  return o.forward(reshape(transpose(heads, 1, 2), {B, T, C}));
}

}  // namespace qkv::attention
