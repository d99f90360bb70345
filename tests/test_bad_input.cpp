// test_bad_input.cpp: bad input everywhere meets a qkv::Error whose message names the
// operation and what was wrong, never a crash, a hang or silent garbage. One table, one row a
// case: tensor ops, autograd misuse, modules, loaders. (The training program's bad flags are
// ctest cases of tutorials/CMakeLists.txt.)
#include <cmath>
#include <filesystem>
#include <fstream>

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

TEST(BadInput, EveryCaseIsANamedErrorNotACrash) {
  const std::vector<Case> table = cases();
  EXPECT_GE(table.size(), 40u);
  for (const Case& c : table) EXPECT_TRUE(testing::throws_error(c.run, c.message_parts)) << c.what;
}

}  // namespace
}  // namespace qkv
