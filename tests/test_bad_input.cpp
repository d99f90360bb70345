// test_bad_input.cpp: bad input everywhere meets a qkv::Error whose message names the
// operation and what was wrong, never a crash, a hang or silent garbage. One table, one row a
// case: tensor ops, autograd misuse, modules, loaders. (The training program's bad flags are
// ctest cases of tutorials/CMakeLists.txt.)
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_map>

#include "attention/all.h"
#include "tests/testing.h"

namespace qkv {
namespace {

using attention::AttentionOptions;

struct Case {
  const char* what;
  std::function<void()> run;
  std::vector<std::string> message_parts;  // each must appear in the error's message
};

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<Case> cases() {
  const Tensor a23 = zeros({2, 3}), a45 = zeros({4, 5});
  return {
      // ---- tensor ops --------------------------------------------------------------------
      {"matmul inner dims", [=] { raw::matmul(a23, a45); }, {"matmul", "(2, 3)", "(4, 5)"}},
      {"fma peak without threads", [] { fma_peak_gflops(0); }, {"fma_peak_gflops", "got 0"}},
      {"highest fma peak without repeats",
       [] { highest_fma_peak_gflops(1, 1, 0); },
       {"highest_fma_peak_gflops", "got 1, 1 and 0"}},
      {"scratch of negative size",
       [] { thread_scratch(Scratch::gemm_a, -1); },
       {"thread_scratch", "got -1"}},
      {"add broadcast", [=] { raw::add(a23, a45); }, {"(2, 3)", "(4, 5)"}},
      {"view numel",
       [=] {
         raw::view(a23, {4, 2});
       },
       {"view", "(4, 2)", "size 6"}},
      {"reshape numel", [=] { raw::reshape(a23, {7}); }, {"reshape", "(7,)", "size 6"}},
      {"narrow past the end", [=] { raw::narrow(a23, 1, 2, 5); }, {"narrow"}},
      {"select index", [=] { raw::select(a23, 0, 2); }, {"select"}},
      {"transpose dim", [=] { raw::transpose(a23, 0, 2); }, {"transpose"}},
      {"cat shapes",
       [=] {
         raw::cat({a23, a45}, 0);
       },
       {"cat", "(2, 3)", "(4, 5)"}},
      {"sum dim", [=] { raw::sum(a23, 3, false); }, {"sum"}},
      {"softmax of int64", [] { raw::softmax(zeros({3}, Dtype::int64), 0); }, {"softmax", "int64"}},
      {"expand to smaller",
       [=] {
         raw::expand(a23, {2, 2});
       },
       {"expand", "(2, 3)"}},
      {"item of many", [=] { a23.item<float>(); }, {"item"}},
      {"from_vector size",
       [] {
         from_vector(std::vector<float>{1, 2, 3}, {2, 2});
       },
       {"from_vector"}},
      {"negative size",
       [] {
         zeros({2, -1});
       },
       {"-1"}},
      {"masked_fill mask dtype",
       [=] {
         raw::masked_fill(a23, zeros({2, 3}), 1.0f);
       },
       {"masked_fill"}},
      // ---- autograd misuse ---------------------------------------------------------------
      {"backward twice",
       [] {
         const Tensor x = requires_grad_(ones({2}));
         const Tensor y = sum(x * x);
         backward(y);
         backward(y);
       },
       {"backward"}},
      {"backward of a non-scalar without gradient",
       [] { backward(requires_grad_(ones({2})) * 2.0f); },
       {"backward", "(2,)"}},
      {"in-place change of a saved tensor",
       [] {
         const Tensor x = requires_grad_(ones({2}));
         const Tensor h = x * 2.0f;
         const Tensor y = sum(h * h);
         raw::fill_(h, 3.0);
         backward(y);
       },
       {"modified in place"}},
      {"backward of a tensor without history", [] { backward(scalar_tensor(1.0f)); }, {"backward"}},
      {"gradient of the wrong shape",
       [] { backward(requires_grad_(ones({2})) * 2.0f, ones({3})); },
       {"backward", "(3,)"}},
      // ---- modules -----------------------------------------------------------------------
      {"Linear input width",
       [] {
         nn::Linear(4, 2)(zeros({3, 5}));
       },
       {"Linear", "4", "(3, 5)"}},
      {"LayerNorm width",
       [] {
         nn::LayerNorm(4)(zeros({2, 3}));
       },
       {"LayerNorm", "(2, 3)"}},
      {"Embedding id >= vocab",
       [] {
         nn::Embedding(5, 2)(from_vector(std::vector<int64_t>{1, 5}, {2}));
       },
       {"5"}},
      {"Embedding negative id",
       [] { nn::Embedding(5, 2)(from_vector(std::vector<int64_t>{-1}, {1})); },
       {"-1"}},
      {"Embedding float ids", [] { nn::Embedding(5, 2)(zeros({2})); }, {"int64"}},
      {"MultiHeadAttention rank",
       [] {
         attention::MultiHeadAttention(8, 2)(zeros({4, 8}));
       },
       {"MultiHeadAttention", "(4, 8)"}},
      {"MultiHeadAttention heads",
       [] { attention::MultiHeadAttention(10, 4); },
       {"MultiHeadAttention", "10", "4"}},
      {"GPT T beyond the context",
       [] {
         attention::GPT m(attention::GPTConfig{.vocab_size = 5, .block = 4});
         m(zeros({1, 5}, Dtype::int64));
       },
       {"GPT", "block = 4", "T = 5"}},
      {"GPT token id >= vocab",
       [] {
         attention::GPT m(attention::GPTConfig{.vocab_size = 5, .block = 4});
         m(from_vector(std::vector<int64_t>{1, 7}, {1, 2}));
       },
       {"7"}},
      {"GPT float ids",
       [] {
         attention::GPT m(attention::GPTConfig{.vocab_size = 5});
         m(zeros({1, 2}));
       },
       {"GPT", "int64"}},
      {"attention mask shape",
       [] {
         AttentionOptions o{.mask = ones({3, 3}, Dtype::boolean)};
         attention::scaled_dot_product_attention(zeros({2, 4}), zeros({2, 4}), zeros({2, 4}), o);
       },
       {"scaled_dot_product_attention", "(3, 3)"}},
      {"attention k and v lengths",
       [] {
         attention::scaled_dot_product_attention(zeros({2, 4}), zeros({3, 4}), zeros({2, 4}));
       },
       {"scaled_dot_product_attention", "(3, 4)", "(2, 4)"}},
      {"cross_entropy targets",
       [] {
         cross_entropy(zeros({2, 3}), from_vector(std::vector<int64_t>{0, 3}, {2}));
       },
       {"cross_entropy", "3"}},
      {"optimizer lr", [] { nn::AdamW({requires_grad_(zeros({2}))}, -1.0); }, {"-1"}},
      // ---- loaders -----------------------------------------------------------------------
      {"safetensors truncated",
       [] { nn::parse_safetensors(std::string("\x10\x00\x00", 3)); },
       {"header length"}},
      {"safetensors absurd header length",
       [] { nn::parse_safetensors(std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8)); },
       {"bad header length"}},
      {"safetensors absurd shape",
       [] {
         const std::string h =
             R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8]}})";
         std::string bytes(8, '\0');
         bytes[0] = static_cast<char>(h.size());
         nn::parse_safetensors(bytes + h + std::string(8, '\0'));
       },
       {"load_safetensors", "4611686018427387904"}},
      {"safetensors missing file",
       [] { nn::load_safetensors("/nonexistent/qkv.safetensors"); },
       {"/nonexistent/qkv.safetensors"}},
      {"npy truncated",
       [] { nn::load_npy(write_temp("qkv_bad_input.npy", "\x93NUMPY")); },
       {"npy"}},
      {"npy wrong magic",
       [] { nn::load_npy(write_temp("qkv_bad_input2.npy", "hello world, not npy")); },
       {"npy"}},
      {"text not UTF-8",
       [] { nn::decode_utf8(std::string("ab\xff", 3)); },
       {"decode_utf8", "0xff", "offset 2"}},
      {"text ends inside a character",
       [] { nn::decode_utf8(std::string("ab\xc3", 3)); },
       {"decode_utf8"}},
      {"tokenizer unknown character",
       [] { attention::CharTokenizer("abc").encode("abz"); },
       {"encode", "z"}},
      {"tokenizer id out of range",
       [] {
         attention::CharTokenizer("abc").decode({0, 3});
       },
       {"decode", "3"}},
      {"GPT-2 text not UTF-8",
       [] { attention::BpeTokenizer::train("a b", 0).encode("ok\xc3"); },
       {"BpeTokenizer::encode", "offset 2"}},
      {"GPT-2 id outside the vocabulary",
       [] {
         attention::BpeTokenizer::train("a b", 0).decode({257});  // 256 bytes + <|endoftext|>
       },
       {"BpeTokenizer", "got 257"}},
      {"GPT-2 folder missing",
       [] { attention::load_gpt2("/nonexistent/gpt2"); },
       {"load_gpt2", "/nonexistent/gpt2"}},
      {"GPT-2 config without sizes",
       [] { attention::gpt2_config("{}", "config.json"); },
       {"config.json", "vocab_size"}},
      {"batch longer than the text",
       [] {
         Generator gen(0);
         attention::get_batch(zeros({10}, Dtype::int64), 10, 2, gen);
       },
       {"get_batch", "10"}},
      // Found by tests/fuzz (each input is also in tests/fuzz/corpus/):
      {"expand to a negative size",  // was accepted, giving a shape with -3 in it
       [=] {
         raw::expand(zeros({3, 1}), {2, 3, -3});
       },
       {"expand", "(3, 1)", "-3"}},
      {"empty tensor whose other sizes overflow the strides",  // was signed overflow (UB)
       [] {
         zeros({448, 0, int64_t{1} << 40, 804});
       },
       {"shape is too large"}},
      {"npy shape without commas",  // was read as (448, 0, 8, ...) and overflowed the strides
       [] {
         std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (448 0 8), }";
         h += std::string(118 - 10 - h.size() - 1, ' ') + "\n";
         nn::parse_npy(std::string("\x93NUMPY\x01\x00", 8) + char(h.size()) + '\0' + h);
       },
       {"','"}},
      // ---- loaders that trust nothing (a file may say anything) -------------------------
      {"GPT-2 config naming 10^17 layers",  // was: the expected names listed until memory ran out
       [] {
         const std::string dir =
             (std::filesystem::temp_directory_path() / "qkv_gpt2_huge_layers").string();
         std::filesystem::create_directories(dir);
         std::ofstream(dir + "/config.json")
             << R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 100000000000000000,
                   "n_positions": 4})";
         nn::save_safetensors(dir + "/model.safetensors", {{"wte.weight", zeros({8, 4})}});
         attention::load_gpt2(dir);
       },
       {"n_layer", "2^31"}},
      {"GPT-2 config with more layers than tensors",
       [] {
         const attention::GPTConfig c = attention::gpt2_config(
             {.vocab_size = 8, .n_embd = 4, .n_head = 1, .n_layer = 1000, .n_positions = 4});
         attention::gpt2_from_weights(c, {{"wte.weight", zeros({8, 4})}}, "model.safetensors");
       },
       {"model.safetensors", "n_layer = 1000", "got 1 tensors"}},
      {"GPT-2 layer_norm_epsilon beyond double",  // was std::out_of_range from stod
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "layer_norm_epsilon": 1e999})",
                                "config.json");
       },
       {"config.json", "layer_norm_epsilon", "1e999"}},
      {"GPT-2 layer_norm_epsilon below double",  // 1e-400 reads as 0
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "layer_norm_epsilon": 1e-400})",
                                "config.json");
       },
       {"config.json", "layer_norm_epsilon", "> 0"}},
      {"GPT-2 layer_norm_epsilon that is not JSON",  // "1-5" was read as 1.0
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "layer_norm_epsilon": 1-5})",
                                "config.json");
       },
       {"config.json", "bad JSON"}},
      // Settings of another model than the one gpt2_config builds: refused, not ignored.
      {"GPT-2 config of another model type",
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "model_type": "llama"})",
                                "config.json");
       },
       {"config.json", "model_type"}},
      {"GPT-2 config with an MLP of another width",
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "n_inner": 64})",
                                "config.json");
       },
       {"config.json", "n_inner", "16"}},
      {"GPT-2 config with an untied head",
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "tie_word_embeddings": false})",
                                "config.json");
       },
       {"config.json", "tie_word_embeddings", "true"}},
      {"GPT-2 config with unscaled attention",
       [] {
         attention::gpt2_config(R"({"vocab_size": 8, "n_embd": 4, "n_head": 1, "n_layer": 1,
                                    "n_positions": 4, "scale_attn_weights": false})",
                                "config.json");
       },
       {"config.json", "scale_attn_weights"}},
      {"GPT-2 weights with a head of their own",
       [] {
         const attention::GPTConfig c = attention::gpt2_config(
             {.vocab_size = 8, .n_embd = 4, .n_head = 1, .n_layer = 1, .n_positions = 4});
         nn::NamedTensors w = attention::random_gpt2_weights(c, 0);
         w.emplace_back("lm_head.weight", zeros({8, 4}));
         attention::gpt2_from_weights(c, w, "model.safetensors");
       },
       {"model.safetensors", "lm_head.weight equal to wte.weight"}},
      {"vocabulary id far beyond its entries",  // was std::length_error (a table of 10^17)
       [] {
         std::unordered_map<std::string, int64_t> v;
         for (int b = 0; b < 256; ++b) v[attention::byte_symbol(static_cast<uint8_t>(b))] = b;
         v["xyz"] = 100000000000000000;
         attention::BpeTokenizer(v, {});
       },
       {"BpeTokenizer", "ids in [0, 257)", "'xyz' -> 100000000000000000"}},
      {"vocabulary name that is not UTF-8",
       [] { nn::parse_json("{\"a\xff\": 1}", "vocab.json"); },
       {"vocab.json", "valid UTF-8"}},
      {"safetensors name that is not UTF-8",
       [] {
         std::string header = "{\"w\xc3\": {\"dtype\": \"F32\", \"shape\": [], \"data_offsets\": [0, 4]}}";
         std::string bytes(8, '\0');
         bytes[0] = static_cast<char>(header.size());
         nn::parse_safetensors(bytes + header + std::string(4, '\0'));
       },
       {"load_safetensors", "valid UTF-8"}},
      {"a folder given as a file",  // was "a file of 0 bytes (truncated?)"
       [] { nn::load_safetensors(std::filesystem::temp_directory_path().string()); },
       {"load_safetensors", "a folder"}},
      // ---- sampling ----------------------------------------------------------------------
      {"sampling from NaN logits",  // was: the last id, by falling off the end of the loop
       [] {
         Generator g(0);
         attention::sample_token({0.5f, NAN, 1.0f}, {.temperature = 1.0}, g);
       },
       {"sample_token", "NaN at id 1"}},
      {"sampling from logits all -inf",
       [] {
         Generator g(0);
         attention::sample_token({-INFINITY, -INFINITY}, {}, g);
       },
       {"sample_token", "all -inf"}},
      {"generating 2^63 - 1 tokens",  // was: ids.size() + n overflowed
       [] {
         manual_seed(0);
         attention::GPT m({.vocab_size = 5, .n_embd = 4, .n_head = 1, .n_layer = 1, .block = 4});
         Generator g(0);
         m.generate({1}, INT64_MAX, {}, g);
       },
       {"GPT::generate", "2^31", "9223372036854775807"}},
      {"generating from a prompt id outside the vocabulary",
       [] {
         manual_seed(0);
         attention::GPT m({.vocab_size = 5, .n_embd = 4, .n_head = 1, .n_layer = 1, .block = 4});
         Generator g(0);
         m.generate({7}, 2, {}, g);
       },
       {"GPT::generate", "[0, 5)", "got 7"}},
      {"load NaN weights into a module",
       [] {
         nn::Linear m(2, 1);
         const std::string path =
             (std::filesystem::temp_directory_path() / "qkv_nan.safetensors").string();
         nn::save_safetensors(path, {{"weight", from_vector(std::vector<float>{NAN, 1}, {1, 2})},
                                     {"bias", zeros({1})}});
         nn::load(m, path);
       },
       {"NaN"}},
  };
}

// A temperature so small that logits / temperature leave float's range picks what greedy picks
// (it drew the last id before: every weight NaN, the loop ran off its end).
TEST(BadInput, ATinyTemperatureSamplesGreedily) {
  const std::vector<float> logits = {0.1f, 2.5f, -1.0f, 2.5f, 0.3f};
  for (const double t : {1e-300, 1e-40, 1e-39}) {
    Generator g(7);
    EXPECT_EQ(attention::sample_token(logits, {.temperature = t}, g), 1) << t;  // first largest
  }
  Generator g(7);
  EXPECT_EQ(attention::sample_token(logits, {.temperature = 0}, g), 1);
  // And a normal temperature still draws: over many draws, more than one id comes out.
  std::set<int64_t> seen;
  for (int i = 0; i < 50; ++i) seen.insert(attention::sample_token(logits, {.temperature = 1}, g));
  EXPECT_GT(seen.size(), 1u);
}

TEST(BadInput, EveryCaseIsANamedErrorNotACrash) {
  const std::vector<Case> table = cases();
  EXPECT_GE(table.size(), 40u);
  for (const Case& c : table) EXPECT_TRUE(testing::throws_error(c.run, c.message_parts)) << c.what;
}

}  // namespace
}  // namespace qkv
