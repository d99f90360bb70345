// gpt2.cpp: GPT-2's config.json and weights onto qkv's GPT (gpt2.h).
#include "attention/gpt2.h"

#include <filesystem>
#include <set>
#include <sstream>

#include "nn/bytes.h"

namespace qkv::attention {
namespace {

const nn::Json* member(const nn::Json& object, const std::string& key) {
  for (const nn::JsonMember& m : object.members)
    if (m.key == key) return &m.value;
  return nullptr;
}

int64_t positive_field(const nn::Json& doc, const std::string& key, const std::string& file) {
  const nn::Json* v = member(doc, key);
  check(v != nullptr, "load_gpt2", file, ": a field \"", key, "\", got none");
  const int64_t n = nn::json_index(*v, ("load_gpt2: " + file).c_str(), "\"" + key + "\"");
  check(n > 0 && n <= (int64_t{1} << 31), "load_gpt2", file, ": \"", key, "\" in [1, 2^31], got ",
        n);
  return n;
}

// One Hugging Face weight: its name and its shape, given the config.
struct HfWeight {
  std::string name;
  Shape shape;
};

std::vector<HfWeight> hf_layout(const GPTConfig& c) {
  const int64_t C = c.n_embd;
  std::vector<HfWeight> w = {{"wte.weight", {c.vocab_size, C}}, {"wpe.weight", {c.block, C}}};
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    for (const HfWeight& x : std::vector<HfWeight>{{"ln_1.weight", {C}},
                                                   {"ln_1.bias", {C}},
                                                   {"attn.c_attn.weight", {C, 3 * C}},
                                                   {"attn.c_attn.bias", {3 * C}},
                                                   {"attn.c_proj.weight", {C, C}},
                                                   {"attn.c_proj.bias", {C}},
                                                   {"ln_2.weight", {C}},
                                                   {"ln_2.bias", {C}},
                                                   {"mlp.c_fc.weight", {C, 4 * C}},
                                                   {"mlp.c_fc.bias", {4 * C}},
                                                   {"mlp.c_proj.weight", {4 * C, C}},
                                                   {"mlp.c_proj.bias", {C}}})
      w.push_back({h + x.name, x.shape});
  }
  w.push_back({"ln_f.weight", {C}});
  w.push_back({"ln_f.bias", {C}});
  return w;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The weights by their Hugging Face name without "transformer.", the buffers and the tied
// head left out; every name in hf_layout present with its shape, and nothing else.
std::map<std::string, Tensor> checked_weights(const GPTConfig& config,
                                              const nn::NamedTensors& weights,
                                              const std::string& file) {
  // Each layer has 12 weights: a config that names more layers than the file has tensors is
  // refused before the expected names are listed (n_layer 10^17 would list 10^18), so that the
  // list is never longer than 12 times the file's.
  check(config.n_layer <= static_cast<int64_t>(weights.size()), "load_gpt2", file,
        ": weights for the config's n_layer = ", config.n_layer, " (12 each), got ", weights.size(),
        " tensors in all");
  std::map<std::string, Tensor> by_name;
  const Tensor* lm_head = nullptr;
  for (const auto& [full, t] : weights) {
    const std::string name = full.rfind("transformer.", 0) == 0 ? full.substr(12) : full;
    if (name == "lm_head.weight") lm_head = &t;
    if (name == "lm_head.weight" || ends_with(name, ".attn.bias") ||
        ends_with(name, ".attn.masked_bias"))
      continue;
    by_name[name] = t;
  }
  // GPT-2's head is the token table (tied): a file may repeat it as lm_head.weight, but a
  // head of its own would be a model this loader does not build.
  if (lm_head != nullptr) {
    const auto wte = by_name.find("wte.weight");
    check(wte != by_name.end() && lm_head->dtype() == Dtype::float32 &&
              lm_head->shape() == wte->second.shape() && wte->second.dtype() == Dtype::float32 &&
              lm_head->to_vector<float>() == wte->second.to_vector<float>(),
          "load_gpt2", file, ": lm_head.weight equal to wte.weight (GPT-2 ties them), got ",
          "one that differs");
  }
  const std::map<std::string, Tensor> all = by_name;
  std::vector<std::string> missing;
  for (const HfWeight& w : hf_layout(config)) {
    const auto it = by_name.find(w.name);
    if (it == by_name.end()) {
      missing.push_back(w.name);
      continue;
    }
    check(it->second.shape() == w.shape && it->second.dtype() == Dtype::float32, "load_gpt2", file,
          ": ", w.name, " float32 ", w.shape, " (from config.json), got ",
          dtype_name(it->second.dtype()), " ", it->second.shape());
    by_name.erase(it);
  }
  std::ostringstream problems;
  if (!missing.empty())
    problems << "missing " << missing.size() << " weights (" << missing[0] << ", ...)";
  if (!by_name.empty())
    problems << (missing.empty() ? "" : "; ") << "unknown weights (" << by_name.begin()->first
             << ", ...)";
  check(missing.empty() && by_name.empty(), "load_gpt2", file, ": GPT-2's weights for ",
        config.n_layer, " layers, got ", problems.str());
  return all;
}

// A Conv1D weight (in, out), or columns [first, first + n) of one, as a Linear weight (n, in).
Tensor linear_weight(const Tensor& conv1d, int64_t first, int64_t n) {
  return raw::contiguous(raw::transpose(raw::narrow(conv1d, 1, first, n), 0, 1));
}

}  // namespace

GPTConfig gpt2_config(const Gpt2Sizes& sizes) {
  return GPTConfig{.vocab_size = sizes.vocab_size,
                   .n_embd = sizes.n_embd,
                   .n_head = sizes.n_head,
                   .n_layer = sizes.n_layer,
                   .block = sizes.n_positions,
                   .causal = true,
                   .rope = false,
                   .gelu = GeluApproximation::tanh,
                   .layer_norm_eps = 1e-5,
                   .tie_head = true};
}

GPTConfig gpt2_config(const std::string& json_text, const std::string& file) {
  const nn::Json doc = nn::parse_json(json_text, ("load_gpt2: " + file).c_str());
  check(doc.kind == nn::Json::Kind::object, "load_gpt2", file, ": a JSON object");
  GPTConfig c = gpt2_config(Gpt2Sizes{.vocab_size = positive_field(doc, "vocab_size", file),
                                      .n_embd = positive_field(doc, "n_embd", file),
                                      .n_head = positive_field(doc, "n_head", file),
                                      .n_layer = positive_field(doc, "n_layer", file),
                                      .n_positions = positive_field(doc, "n_positions", file)});
  check(c.n_embd % c.n_head == 0, "load_gpt2", file, ": n_embd (", c.n_embd,
        ") divisible by n_head (", c.n_head, ")");
  if (const nn::Json* eps = member(doc, "layer_norm_epsilon")) {
    const std::string op = "load_gpt2: " + file;
    c.layer_norm_eps = nn::json_number(*eps, op.c_str(), "\"layer_norm_epsilon\"", 0, 1);
    check(c.layer_norm_eps > 0, "load_gpt2", file, ": \"layer_norm_epsilon\" > 0, got ", eps->text);
  }
  if (const nn::Json* act = member(doc, "activation_function")) {
    const std::string a = act->text;
    check(act->kind == nn::Json::Kind::string &&
              (a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu"),
          "load_gpt2", file, ": \"activation_function\" gelu_new, gelu_pytorch_tanh or gelu, got ",
          a.empty() ? "a non-string" : a);
    c.gelu = a == "gelu" ? GeluApproximation::none : GeluApproximation::tanh;
  }
  // Settings that would make another model than the one built here: refused, not ignored.
  const auto is = [&](const char* key, nn::Json::Kind kind, const std::string& text, bool flag) {
    const nn::Json* v = member(doc, key);
    return v == nullptr || v->kind == nn::Json::Kind::null ||
           (v->kind == kind && (kind == nn::Json::Kind::boolean ? v->boolean == flag : v->text == text));
  };
  check(is("model_type", nn::Json::Kind::string, "gpt2", false), "load_gpt2", file,
        ": \"model_type\" \"gpt2\", got another");
  check(is("n_inner", nn::Json::Kind::number, std::to_string(4 * c.n_embd), false), "load_gpt2",
        file, ": \"n_inner\" null or 4 * n_embd = ", 4 * c.n_embd, ", got another");
  for (const auto& [key, value] : {std::pair{"scale_attn_weights", true},
                                   std::pair{"tie_word_embeddings", true},
                                   std::pair{"scale_attn_by_inverse_layer_idx", false},
                                   std::pair{"add_cross_attention", false}})
    check(is(key, nn::Json::Kind::boolean, "", value), "load_gpt2", file, ": \"", key, "\" ",
          value ? "true" : "false", " (GPT-2's; this loader builds no other), got another");
  return c;
}

std::string gpt2_config_json(const GPTConfig& c) {
  std::ostringstream os;
  os.precision(17);
  os << "{\n  \"model_type\": \"gpt2\",\n  \"activation_function\": \""
     << (c.gelu == GeluApproximation::tanh ? "gelu_new" : "gelu")
     << "\",\n  \"n_embd\": " << c.n_embd << ",\n  \"n_head\": " << c.n_head
     << ",\n  \"n_layer\": " << c.n_layer << ",\n  \"n_positions\": " << c.block
     << ",\n  \"vocab_size\": " << c.vocab_size
     << ",\n  \"layer_norm_epsilon\": " << c.layer_norm_eps << "\n}\n";
  return os.str();
}

std::unique_ptr<GPT> gpt2_from_weights(const GPTConfig& config, const nn::NamedTensors& weights,
                                       const std::string& file) {
  const std::map<std::string, Tensor> w = checked_weights(config, weights, file);
  const int64_t C = config.n_embd;
  nn::NamedTensors ours = {{"tok.weight", w.at("wte.weight")}, {"pos.weight", w.at("wpe.weight")}};
  for (int64_t i = 0; i < config.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".", b = "blocks." + std::to_string(i) + ".";
    const Tensor& c_attn = w.at(h + "attn.c_attn.weight");  // (C, 3C): q | k | v
    const Tensor& c_attn_bias = w.at(h + "attn.c_attn.bias");
    ours.insert(ours.end(),
                {{b + "ln1.weight", w.at(h + "ln_1.weight")},
                 {b + "ln1.bias", w.at(h + "ln_1.bias")},
                 {b + "q.weight", linear_weight(c_attn, 0, C)},
                 {b + "q.bias", raw::narrow(c_attn_bias, 0, 0, C)},
                 {b + "k.weight", linear_weight(c_attn, C, C)},
                 {b + "k.bias", raw::narrow(c_attn_bias, 0, C, C)},
                 {b + "v.weight", linear_weight(c_attn, 2 * C, C)},
                 {b + "v.bias", raw::narrow(c_attn_bias, 0, 2 * C, C)},
                 {b + "o.weight", linear_weight(w.at(h + "attn.c_proj.weight"), 0, C)},
                 {b + "o.bias", w.at(h + "attn.c_proj.bias")},
                 {b + "ln2.weight", w.at(h + "ln_2.weight")},
                 {b + "ln2.bias", w.at(h + "ln_2.bias")},
                 {b + "fc.weight", linear_weight(w.at(h + "mlp.c_fc.weight"), 0, 4 * C)},
                 {b + "fc.bias", w.at(h + "mlp.c_fc.bias")},
                 {b + "proj.weight", linear_weight(w.at(h + "mlp.c_proj.weight"), 0, C)},
                 {b + "proj.bias", w.at(h + "mlp.c_proj.bias")}});
  }
  ours.push_back({"ln_f.weight", w.at("ln_f.weight")});
  ours.push_back({"ln_f.bias", w.at("ln_f.bias")});
  auto model = std::make_unique<GPT>(config);
  try {
    nn::load_state_dict(*model, ours);
  } catch (const Error& e) {
    throw Error("load_gpt2: " + file + ": " + e.what());
  }
  model->eval();
  return model;
}

std::unique_ptr<GPT> load_gpt2(const std::string& dir) {
  namespace fs = std::filesystem;
  check(fs::is_directory(dir), "load_gpt2",
        "a folder with config.json and model.safetensors, got '", dir, "'");
  const std::string config_file = (fs::path(dir) / "config.json").string();
  const std::string weights_file = (fs::path(dir) / "model.safetensors").string();
  for (const std::string& f : {config_file, weights_file})
    check(fs::is_regular_file(f), "load_gpt2", f,
          ": no such file (GPT-2's folder holds config.json, "
          "model.safetensors, vocab.json and merges.txt)");
  const GPTConfig config = gpt2_config(nn::read_file(config_file, "load_gpt2"), config_file);
  nn::SafetensorsFile weights;
  try {
    weights = nn::load_safetensors(weights_file);
  } catch (const Error& e) {
    throw Error("load_gpt2: " + weights_file + ": " + e.what());
  }
  return gpt2_from_weights(config, weights.tensors, weights_file);
}

nn::NamedTensors random_gpt2_weights(const GPTConfig& config, uint64_t seed) {
  manual_seed(seed);
  nn::NamedTensors out;
  for (const HfWeight& w : hf_layout(config)) {
    Tensor r = randn(w.shape);
    const bool gain = ends_with(w.name, "ln_1.weight") || ends_with(w.name, "ln_2.weight") ||
                      w.name == "ln_f.weight";
    if (gain)
      r = raw::add(raw::mul(r, 0.1f), 1.0f);
    else
      r = raw::mul(r, w.shape.size() == 2 ? 0.3f : 0.1f);
    out.emplace_back(w.name, r);
  }
  return out;
}

}  // namespace qkv::attention
