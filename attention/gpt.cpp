// gpt.cpp: the block and the tiny GPT of gpt.h, in the reference's construction order (which
// is its draw order: tok, pos, then per block q, k, v, o, fc, proj, and last the head).
#include "attention/gpt.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>

#include "nn/json.h"

namespace qkv::attention {

Block::Block(const GPTConfig& config)
    : gelu_approximation(config.gelu),
      n_head(config.n_head),
      causal(config.causal),
      rope(config.rope) {
  const int64_t C = config.n_embd, H = config.n_head;
  check(C > 0 && H > 0 && C % H == 0, "Block", "n_embd (", C, ") divisible by n_head (", H, ")");
  const double eps = config.layer_norm_eps;
  ln1 = register_module("ln1", std::make_shared<nn::LayerNorm>(C, eps));
  q = register_module("q", std::make_shared<nn::Linear>(C, C));
  k = register_module("k", std::make_shared<nn::Linear>(C, C));
  v = register_module("v", std::make_shared<nn::Linear>(C, C));
  o = register_module("o", std::make_shared<nn::Linear>(C, C));
  ln2 = register_module("ln2", std::make_shared<nn::LayerNorm>(C, eps));
  fc = register_module("fc", std::make_shared<nn::Linear>(C, 4 * C));
  proj = register_module("proj", std::make_shared<nn::Linear>(4 * C, C));
}

Tensor Block::forward(const Tensor& x, KVCache* cache) {
  check(x.defined() && x.dim() == 3 && x.size(2) == ln1->normalized_shape, "Block",
        "an input (B, T, C) with C = ", ln1->normalized_shape, ", got ", shape_of(x));
  const Tensor h = x + attn(ln1->forward(x), cache);  // (B, T, C)
  return h + mlp(ln2->forward(h));
}

// Multi-head self-attention as lessons 10 and 12 build it: project, split the heads, attend,
// merge the heads, project. (MultiHeadAttention does the same; the block keeps q, k, v and o
// as its own modules so that their names are the reference model's, blocks.0.q.weight, ...)
Tensor Block::attn(const Tensor& x, KVCache* cache) {
  Tensor queries = split_heads(q->forward(x), n_head);  // (B, T, C) -> (B, H, T, D)
  Tensor keys = split_heads(k->forward(x), n_head);
  Tensor values = split_heads(v->forward(x), n_head);
  if (rope) {  // rotated before caching: a cached key keeps the angle of its position
    const int64_t offset = cache ? cache->position : 0;
    queries = attention::rope(queries, offset);
    keys = attention::rope(keys, offset);
  }
  if (cache) {  // this call's keys and values join the earlier ones: (B, H, T_cached + T, D)
    cache->append(keys, values);
    keys = cache->k;
    values = cache->v;
  }
  if (attention_fn) {  // an attention of your own in the core's place (GPT::set_attention)
    attention_weights = Tensor();
    return o->forward(merge_heads(attention_fn(queries, keys, values)));
  }
  const AttentionOutput a = scaled_dot_product_attention(queries, keys, values, {.causal = causal});
  attention_weights = detach(a.weights);
  return o->forward(merge_heads(a.output));  // (B, H, T, D) -> (B, T, C) -> o
}

// The MLP: widen to 4C, GELU, project back.
Tensor Block::mlp(const Tensor& x) {
  return proj->forward(gelu(fc->forward(x), gelu_approximation));
}

GPT::GPT(const GPTConfig& c) : config(c) {
  check(c.vocab_size > 0 && c.n_embd > 0 && c.n_head > 0 && c.n_layer > 0 && c.block > 0, "GPT",
        "positive vocab_size, n_embd, n_head, n_layer and block, got ", c.vocab_size, ", ",
        c.n_embd, ", ", c.n_head, ", ", c.n_layer, " and ", c.block);
  check(c.n_embd % c.n_head == 0, "GPT", "n_embd (", c.n_embd, ") divisible by n_head (", c.n_head,
        ")");
  tok = register_module("tok", std::make_shared<nn::Embedding>(c.vocab_size, c.n_embd));
  check(!c.rope || (c.n_embd / c.n_head) % 2 == 0, "GPT", "an even head size for rope, got ",
        c.n_embd / c.n_head);
  if (!c.rope) pos = register_module("pos", std::make_shared<nn::Embedding>(c.block, c.n_embd));
  blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
  for (int64_t i = 0; i < c.n_layer; ++i) blocks->push_back(std::make_shared<Block>(c));
  ln_f = register_module("ln_f", std::make_shared<nn::LayerNorm>(c.n_embd, c.layer_norm_eps));
  if (!c.tie_head)
    head = register_module("head", std::make_shared<nn::Linear>(c.n_embd, c.vocab_size, false));
}

void GPT::set_causal(bool causal) {
  config.causal = causal;
  for (int64_t i = 0; i < config.n_layer; ++i) block(i).causal = causal;
}

void GPT::set_attention(AttentionFn fn) {
  for (int64_t i = 0; i < config.n_layer; ++i) block(i).attention_fn = fn;
}

Tensor GPT::forward(const Tensor& idx, std::vector<KVCache>* caches) {
  check(idx.defined() && idx.dtype() == Dtype::int64 && idx.dim() == 2, "GPT",
        "int64 token ids (B, T), got ", dtype_and_shape_of(idx));
  if (caches && caches->empty()) caches->resize(static_cast<size_t>(config.n_layer));
  check(!caches || static_cast<int64_t>(caches->size()) == config.n_layer, "GPT",
        "one KV cache per layer (", config.n_layer, "), got ", caches ? caches->size() : 0);
  const int64_t T = idx.size(1), offset = caches ? (*caches)[0].position : 0;
  check(T >= 1 && (config.rope || offset + T <= config.block), "GPT",
        "positions within block = ", config.block, ", got T = ", T,
        offset > 0 ? " after " + std::to_string(offset) + " cached" : "");
  // tok(idx) + pos(offset .. offset + T - 1): the same position vectors for every sequence
  // (with RoPE, positions enter inside attention instead).
  Tensor x = tok->forward(idx);  // (B, T, C)
  if (pos) x = x + pos->forward(arange(offset, offset + T));
  for (int64_t i = 0; i < config.n_layer; ++i)
    x = block(i).forward(x, caches ? &(*caches)[static_cast<size_t>(i)] : nullptr);
  x = ln_f->forward(x);
  return head ? head->forward(x) : linear(x, tok->weight);  // (B, T, V)
}

namespace {

}  // namespace

int64_t sample_token(std::vector<float> logits, const SampleOptions& options, Generator& gen) {
  const int64_t V = static_cast<int64_t>(logits.size());
  check(V > 0, "sample_token", "at least one logit, got none");
  int64_t best = 0;  // the first largest logit: the greedy choice
  for (int64_t i = 0; i < V; ++i) {
    check(!std::isnan(logits[static_cast<size_t>(i)]), "sample_token",
          "logits without NaN, got NaN at id ", i, " (a model whose weights hold NaN?)");
    if (logits[static_cast<size_t>(i)] > logits[static_cast<size_t>(best)]) best = i;
  }
  check(logits[static_cast<size_t>(best)] > -INFINITY, "sample_token",
        "at least one logit above -inf, got all -inf");
  if (options.temperature == 0) return best;
  bool overflow = false;
  for (float& l : logits) {
    l = static_cast<float>(l / options.temperature);
    overflow = overflow || l == INFINITY;
  }
  // A temperature so small that the largest logit / temperature is beyond float's range: the
  // distribution has shrunk onto the largest logit, which is what greedy picks.
  if (overflow) return best;
  if (options.top_k > 0 && options.top_k < V) {  // keep the k largest logits
    std::vector<float> sorted = logits;
    std::nth_element(sorted.begin(), sorted.begin() + (options.top_k - 1), sorted.end(),
                     std::greater<float>());
    const float kth = sorted[static_cast<size_t>(options.top_k - 1)];
    for (float& l : logits) l = l < kth ? -INFINITY : l;
  }
  const std::vector<float> p = raw::softmax(from_vector(logits, {V}), 0).to_vector<float>();
  const double u = gen.uniform_double();
  double cum = 0;
  int64_t last = best;  // the last id with any probability
  for (int64_t i = 0; i < V; ++i) {
    if (p[static_cast<size_t>(i)] > 0) last = i;
    cum += p[static_cast<size_t>(i)];
    if (u < cum) return i;
  }
  return last;  // rounding left the sum just under u: the last id that could be drawn
}

std::vector<int64_t> GPT::generate(std::vector<int64_t> ids, int64_t n,
                                   const SampleOptions& options, Generator& gen) {
  check(!ids.empty() && n >= 0 && n <= (int64_t{1} << 31) && options.temperature >= 0 &&
            std::isfinite(options.temperature) && options.top_k >= 0,
        "GPT::generate",
        "a non-empty prompt, 0 <= n <= 2^31, a finite temperature >= 0 and top_k >= 0, got ",
        ids.size(), " prompt tokens, n = ", n, ", temperature ", options.temperature, ", top_k ",
        options.top_k);
  for (const int64_t id : ids)
    check(id >= 0 && id < config.vocab_size, "GPT::generate", "prompt ids in [0, ",
          config.vocab_size, "), got ", id);
  NoGradGuard no_grad;
  std::vector<KVCache> caches;
  for (int64_t step = 0; step < n; ++step) {
    const int64_t cached = caches.empty() ? 0 : caches[0].position;
    Tensor logits;  // (1, T, V)
    if (options.use_cache && cached > 0 && cached == static_cast<int64_t>(ids.size()) - 1 &&
        cached < config.block) {
      logits = forward(from_vector(std::vector<int64_t>{ids.back()}, {1, 1}), &caches);
    } else {  // the first step, no cache, or a full context: the last `block` tokens afresh
      const int64_t T = std::min<int64_t>(static_cast<int64_t>(ids.size()), config.block);
      // One cache per layer, with room for every position this run will append to it: the
      // prompt's T, one per step after this one, at most `block` (kv_cache.h).
      KVCache fresh;
      const int64_t later = n - 1 - step;  // steps after this one (no sum that can overflow)
      fresh.capacity = later >= config.block ? config.block : std::min(config.block, T + later);
      caches.assign(static_cast<size_t>(config.n_layer), fresh);
      logits = forward(from_vector(std::vector<int64_t>(ids.end() - T, ids.end()), {1, T}),
                       options.use_cache ? &caches : nullptr);
    }
    const Tensor last = raw::select(raw::select(logits, 0, 0), 0, logits.size(1) - 1);
    ids.push_back(sample_token(last.to_vector<float>(), options, gen));
  }
  return ids;
}

// ---- the config as JSON -------------------------------------------------------------------

std::string gpt_config_json(const GPTConfig& c) {
  std::ostringstream os;
  os.precision(17);
  auto flag = [](bool b) { return b ? "true" : "false"; };
  os << "{\"vocab_size\": " << c.vocab_size << ", \"n_embd\": " << c.n_embd
     << ", \"n_head\": " << c.n_head << ", \"n_layer\": " << c.n_layer << ", \"block\": " << c.block
     << ", \"causal\": " << flag(c.causal) << ", \"rope\": " << flag(c.rope) << ", \"gelu\": \""
     << (c.gelu == GeluApproximation::tanh ? "tanh" : "none")
     << "\", \"layer_norm_eps\": " << c.layer_norm_eps << ", \"tie_head\": " << flag(c.tie_head)
     << "}";
  return os.str();
}

GPTConfig gpt_config_from_json(const std::string& text, const std::string& where) {
  const std::string op = "GPTConfig: \"" + where + "\"";
  const nn::Json doc = nn::parse_json(text, op.c_str());
  check(doc.kind == nn::Json::Kind::object, op, "a JSON object");
  auto field = [&](const std::string& key) -> const nn::Json& {
    const nn::Json* v = nn::json_member(doc, key);
    check(v != nullptr, op, "a field \"", key, "\", got none");
    return *v;
  };
  // Sizes up to 2^31: far past any model this trains, and every product of two stays in int64.
  auto size = [&](const std::string& key) {
    const int64_t n = nn::json_index(field(key), op.c_str(), "\"" + key + "\"");
    check(n >= 1 && n <= (int64_t{1} << 31), op, "\"", key, "\" in [1, 2^31], got ", n);
    return n;
  };
  auto boolean = [&](const std::string& key) {
    const nn::Json& v = field(key);
    check(v.kind == nn::Json::Kind::boolean, op, "\"", key, "\" true or false");
    return v.boolean;
  };
  GPTConfig c{.vocab_size = size("vocab_size"),
              .n_embd = size("n_embd"),
              .n_head = size("n_head"),
              .n_layer = size("n_layer"),
              .block = size("block"),
              .causal = boolean("causal"),
              .rope = boolean("rope")};
  const nn::Json& gelu = field("gelu");
  check(gelu.kind == nn::Json::Kind::string && (gelu.text == "none" || gelu.text == "tanh"), op,
        "\"gelu\" \"none\" or \"tanh\", got ", gelu.kind == nn::Json::Kind::string ? gelu.text
                                                                                   : "a non-string");
  c.gelu = gelu.text == "tanh" ? GeluApproximation::tanh : GeluApproximation::none;
  c.layer_norm_eps = nn::json_number(field("layer_norm_eps"), op.c_str(), "\"layer_norm_eps\"",
                                     1e-30, 1);
  c.tie_head = boolean("tie_head");
  check(c.n_embd % c.n_head == 0, op, "n_embd (", c.n_embd, ") divisible by n_head (", c.n_head,
        ")");
  check(!c.rope || (c.n_embd / c.n_head) % 2 == 0, op, "an even head size for rope, got ",
        c.n_embd / c.n_head);
  return c;
}

int64_t gpt_num_parameters(const GPTConfig& c) {
  // In long double, exact for every count below 2^64: checked against int64 at the end.
  const long double V = static_cast<long double>(c.vocab_size), C = static_cast<long double>(c.n_embd);
  const long double block = 4 * C + 4 * (C * C + C) + (C * 4 * C + 4 * C) + (4 * C * C + C);
  const long double total = V * C + (c.rope ? 0 : static_cast<long double>(c.block) * C) +
                            static_cast<long double>(c.n_layer) * block + 2 * C +
                            (c.tie_head ? 0 : C * V);  // the head has no bias
  check(total < 9.2e18L, "gpt_num_parameters", "a parameter count that fits in int64, got ",
        static_cast<double>(total));
  return static_cast<int64_t>(total);
}

}  // namespace qkv::attention
