// test_gpt2.cpp: GPT-2 from a Hugging Face folder (attention/gpt2.h) against a PyTorch GPT-2
// written in tools/gen_gpt2_reference.py from Hugging Face's layout: a tiny GPT-2 (the test
// tokenizer's 557 tokens, C 32, 2 heads, 2 layers) with random weights drawn in both programs
// from the same seed gives the same logits, the same attention map and the same greedy
// continuation, with the KV cache and without; GPT-2 small's own config.json reads as GPT-2
// small; and every bad folder is a one-line error that names the file.
#include <filesystem>
#include <fstream>

#include "attention/all.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {
#include "tests/attention/gpt2_reference.inc"

using testing::TempDir;
using testing::throws_error;

const GPTConfig kTiny = gpt2_config({.vocab_size = kGpt2Vocab,
                                     .n_embd = kGpt2Embd,
                                     .n_head = kGpt2Heads,
                                     .n_layer = kGpt2Layers,
                                     .n_positions = kGpt2Positions});

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A folder as Hugging Face's gpt2 repository lays it out, holding the tiny random GPT-2.
void write_tiny(const TempDir& dir, const std::string& prefix, bool with_buffers) {
  nn::NamedTensors w;
  for (const auto& [name, t] : random_gpt2_weights(kTiny, kGpt2Seed)) {
    w.emplace_back(prefix + name, t);
    if (with_buffers && name.find("attn.c_attn.weight") != std::string::npos) {
      const std::string layer = name.substr(0, name.find("c_attn"));  // h.i.attn.
      w.emplace_back(prefix + layer + "bias", zeros({1, 1, kGpt2Positions, kGpt2Positions}));
      w.emplace_back(prefix + layer + "masked_bias", full({}, -1e4f));
    }
  }
  if (with_buffers) w.emplace_back("lm_head.weight", w.front().second);
  nn::save_safetensors(dir.file("model.safetensors"), w);
  write(dir.file("config.json"), gpt2_config_json(kTiny));
}

std::vector<double> row(const Tensor& logits, int64_t t) {  // logits (1, T, V) -> row t
  return raw::select(raw::select(logits, 0, 0), 0, t).to_vector<double>();
}
std::vector<double> doubles(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

TEST(Gpt2, LogitsAndAttentionAreThePyTorchGpt2s) {
  for (const bool hf_prefix : {false, true}) {
    TempDir dir;
    write_tiny(dir, hf_prefix ? "transformer." : "", /*with_buffers=*/hf_prefix);
    const std::unique_ptr<GPT> model = load_gpt2(dir.path());
    NoGradGuard no_grad;
    const int64_t T = static_cast<int64_t>(kGpt2PromptIds.size());
    const Tensor logits = model->forward(from_vector(kGpt2PromptIds, {1, T}));
    ASSERT_EQ(logits.shape(), (Shape{1, T, kGpt2Vocab}));
    EXPECT_TRUE(testing::values_near(row(logits, T - 1), doubles(kGpt2LastLogits), 2e-5, 2e-5));
    std::vector<double> sums, first;
    for (int64_t t = 0; t < T; ++t) {
      const std::vector<double> r = row(logits, t);
      double s = 0;
      for (const double x : r) s += x;
      sums.push_back(s);
      first.insert(first.end(), r.begin(), r.begin() + 8);
    }
    EXPECT_TRUE(testing::values_near(sums, kGpt2RowSums, 2e-3));
    EXPECT_TRUE(testing::values_near(first, doubles(kGpt2FirstColumns), 2e-5, 2e-5));
    const Tensor map = raw::select(raw::select(model->block(0).attention_weights, 0, 0), 0, 1);
    EXPECT_TRUE(testing::tensor_near(map, {T, T}, doubles(kGpt2Layer0Head1), 1e-6));
  }
}

TEST(Gpt2, GreedyGenerationIsThePyTorchGpt2sWithAndWithoutTheCache) {
  TempDir dir;
  write_tiny(dir, "", false);
  const std::unique_ptr<GPT> model = load_gpt2(dir.path());
  Generator unused(0);
  for (const bool cache : {true, false}) {
    const std::vector<int64_t> out =
        model->generate(kGpt2PromptIds, static_cast<int64_t>(kGpt2Greedy.size()),
                        {.temperature = 0, .use_cache = cache}, unused);
    EXPECT_EQ(
        std::vector<int64_t>(out.begin() + static_cast<int64_t>(kGpt2PromptIds.size()), out.end()),
        kGpt2Greedy)
        << (cache ? "with" : "without") << " the KV cache";
  }
}

TEST(Gpt2, Gpt2SmallsConfigReadsAsGpt2Small) {
  // Hugging Face's gpt2/config.json, its fields that matter here, as published.
  const std::string hf =
      R"({"activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1, "bos_token_id": 50256, "embd_pdrop": 0.1, "eos_token_id": 50256,
    "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "model_type": "gpt2", "n_ctx": 1024,
    "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024, "resid_pdrop": 0.1,
    "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
    "vocab_size": 50257})";
  const GPTConfig c = gpt2_config(hf, "config.json");
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.block, 1024);
  EXPECT_EQ(c.layer_norm_eps, 1e-5);
  EXPECT_EQ(c.gelu, GeluApproximation::tanh);
  EXPECT_TRUE(c.tie_head && c.causal && !c.rope);
  const GPTConfig back = gpt2_config(gpt2_config_json(c), "again");
  EXPECT_EQ(back.n_embd, 768);
  EXPECT_EQ(back.layer_norm_eps, 1e-5);
  // What newer versions of transformers write for GPT-2, spelled out: GPT-2's own choices.
  EXPECT_EQ(gpt2_config(R"({"n_embd": 8, "n_head": 2, "n_layer": 1, "n_positions": 4,
    "vocab_size": 300, "n_inner": null, "scale_attn_weights": true, "tie_word_embeddings": true,
    "scale_attn_by_inverse_layer_idx": false, "reorder_and_upcast_attn": false,
    "add_cross_attention": false, "model_type": "gpt2"})",
                        "c")
                .n_embd,
            8);
  EXPECT_EQ(gpt2_config(R"({"n_embd": 8, "n_head": 2, "n_layer": 1, "n_positions": 4,
    "vocab_size": 300, "n_inner": 32})", "c").n_embd, 8);  // 4 * n_embd, said outright
  EXPECT_EQ(gpt2_config(R"({"n_embd": 8, "n_head": 2, "n_layer": 1, "n_positions": 4,
    "vocab_size": 300, "activation_function": "gelu"})",
                        "c")
                .gelu,
            GeluApproximation::none);
}

TEST(Gpt2, ATiedHeadIsTheTokenTable) {
  GPT tied(GPTConfig{
      .vocab_size = 11, .n_embd = 8, .n_head = 2, .n_layer = 1, .block = 4, .tie_head = true});
  EXPECT_EQ(tied.head, nullptr);
  for (const auto& [name, p] : tied.named_parameters()) EXPECT_NE(name, "head.weight");
  const Tensor idx = from_vector(std::vector<int64_t>{3, 1, 4}, {1, 3});
  const Tensor logits = tied.forward(idx);
  const Tensor expected = matmul(tied.ln_f->forward(tied.blocks->at<Block>(0)->forward(
                                     tied.tok->forward(idx) + tied.pos->forward(arange(3)))),
                                 transpose(tied.tok->weight, 0, 1));
  EXPECT_TRUE(testing::tensor_near(logits, expected, 1e-6));
  backward(sum(logits));  // the gradient reaches the table through both of its uses
  EXPECT_TRUE(grad(tied.tok->weight).defined());
}

TEST(Gpt2, BadFoldersAreOneLineErrorsNamingTheFile) {
  TempDir dir;
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.file("missing")); }, {"load_gpt2", "a folder"}));
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"config.json", "no such file"}));
  write_tiny(dir, "", false);
  const std::string good_config = gpt2_config_json(kTiny);
  std::filesystem::rename(dir.file("model.safetensors"), dir.file("kept"));
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"model.safetensors", "no such file"}));
  std::string bytes;
  {
    std::ifstream in(dir.file("kept"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  write(dir.file("model.safetensors"), bytes.substr(0, bytes.size() - 100));  // truncated
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"model.safetensors"}));
  write(dir.file("model.safetensors"), bytes);
  GPTConfig wide = kTiny;
  wide.n_embd = 48;
  write(dir.file("config.json"), gpt2_config_json(wide));
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); },
                           {"model.safetensors", "wte.weight", "(557, 48)", "(557, 32)"}));
  GPTConfig deeper = kTiny;
  deeper.n_layer = 3;
  write(dir.file("config.json"), gpt2_config_json(deeper));
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"missing 12 weights", "h.2."}));
  write(dir.file("config.json"), "{\"n_embd\": 32}");
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); },
                           {"config.json", "a field \"vocab_size\", got none"}));
  write(dir.file("config.json"), "{\"n_embd\": ");
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"config.json", "bad JSON"}));
  std::string relu = good_config;
  relu.replace(relu.find("gelu_new"), 8, "relu");
  write(dir.file("config.json"), relu);
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"activation_function", "relu"}));
  write(dir.file("config.json"), good_config);
  nn::NamedTensors extra = random_gpt2_weights(kTiny, 1);
  extra.emplace_back("h.0.attn.rotary", zeros({2}));
  nn::save_safetensors(dir.file("model.safetensors"), extra);
  EXPECT_TRUE(throws_error([&] { load_gpt2(dir.path()); }, {"unknown weights", "h.0.attn.rotary"}));
}

}  // namespace
}  // namespace qkv::attention
