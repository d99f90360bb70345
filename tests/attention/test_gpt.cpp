// test_gpt.cpp: the tiny GPT against its PyTorch twin, tools/tiny_gpt_twin.py (values from
// tools/gen_gpt_reference.py, which runs the twin's model): the same parameter names, bit-identical
// initial weights, the same losses over the first AdamW steps; the character tokenizer and the
// batches; the causal promise end to end (no future token changes a logit, with the mask on);
// and training: the same losses and weights (within 1e-6) with the fused paths on and off, and
// the same bits on 1, 2 or 3 threads.
#include "attention/all.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {
#include "tests/attention/torch_gpt_reference.inc"

std::string bottles_text() {
  std::string text;
  for (int i = 99; i >= 1; --i)
    text += std::to_string(i) + " bottles of beer on the wall, " + std::to_string(i) +
            " bottles of beer.\n";
  return text;
}

TEST(TinyGpt, ParameterNamesShapesAndInitialWeightsAreTheReferences) {
  const CharTokenizer tok(bottles_text());
  ASSERT_EQ(tok.vocab_size(), kGptVocab);
  manual_seed(1337);
  GPT m(GPTConfig{
      .vocab_size = tok.vocab_size(), .n_embd = 64, .n_head = 4, .n_layer = 2, .block = 32});
  const auto params = m.named_parameters();
  ASSERT_EQ(params.size(), kGptInit.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const GptParam& ref = kGptInit[i];
    EXPECT_EQ(params[i].first, ref.name);
    EXPECT_EQ(params[i].second.shape(), Shape(ref.shape)) << ref.name;
    const auto v = params[i].second.to_vector<float>();
    for (size_t j = 0; j < ref.first.size(); ++j)
      EXPECT_EQ(v[j], ref.first[j]) << ref.name << "[" << j << "]";
    double sum = 0;
    for (float x : v) sum += x;
    EXPECT_NEAR(sum, ref.sum, 1e-9 * static_cast<double>(v.size())) << ref.name;
  }
}

TEST(TinyGpt, FirstFiveAdamWStepsMatchTheReference) {
  const std::string text = bottles_text();
  const CharTokenizer tok(text);
  const TextSplit split = split_90_10(tok.encode(text));
  manual_seed(1337);
  GPT m(GPTConfig{
      .vocab_size = tok.vocab_size(), .n_embd = 64, .n_head = 4, .n_layer = 2, .block = 32});
  nn::AdamW opt(m.parameters(), 1e-3);
  Generator g(1337);
  for (size_t step = 0; step < kGptLosses.size(); ++step) {
    const Batch b = get_batch(split.train, 32, 16, g);
    const Tensor loss =
        cross_entropy(view(m(b.x), {16 * 32, tok.vocab_size()}), raw::view(b.y, {16 * 32}));
    // Step 0 is the same model on the same batch: equal to float rounding. Later steps add
    // AdamW's arithmetic, where torch fuses some multiply-adds: still within 1e-5.
    EXPECT_NEAR(loss.item<float>(), kGptLosses[step], step == 0 ? 2e-6 : 1e-5) << "step " << step;
    opt.zero_grad();
    backward(loss);
    opt.step();
  }
}

TEST(TinyGpt, TheCausalMaskKeepsTheFutureOut) {
  manual_seed(3);
  GPT m(GPTConfig{.vocab_size = 11, .n_embd = 16, .n_head = 2, .n_layer = 2, .block = 12});
  Generator g(4);
  const Tensor x = randint(11, {2, 12}, &g);
  Tensor changed = raw::clone(x);
  for (int64_t t = 8; t < 12; ++t) changed.at<int64_t>({0, t}) = (x.at<int64_t>({0, t}) + 1) % 11;
  {
    NoGradGuard no_grad;
    const Tensor a = m(x), b = m(changed);
    // Positions 0..7 of sequence 0 (and all of sequence 1) are bit-identical.
    EXPECT_TRUE(testing::tensor_equal(raw::narrow(a, 1, 0, 8), raw::narrow(b, 1, 0, 8)));
    EXPECT_FALSE(testing::tensor_equal(raw::narrow(a, 1, 8, 4), raw::narrow(b, 1, 8, 4)));
    m.set_causal(false);  // without the mask, the future leaks into every position
    const Tensor c = m(x), d = m(changed);
    EXPECT_FALSE(testing::tensor_equal(raw::narrow(c, 1, 0, 8), raw::narrow(d, 1, 0, 8)));
  }
}

// Fused paths (tensor/fused.h) change the route, not the numbers. The tiny GPT trained for six
// AdamW steps with them on and with them off prints the same losses and ends with the same
// weights to rounding (x's gradient sums the parts from its q, k and v Linears in an order set
// by the graph, which differs between the two routes); evaluation and generation agree too.
TEST(TinyGpt, TrainsTheSameWithFusedPathsOnAndOff) {
  const std::string text = bottles_text();
  const CharTokenizer tok(text);
  const TextSplit split = split_90_10(tok.encode(text));
  const int64_t V = tok.vocab_size(), B = 8, T = 32;
  struct Run {
    std::vector<float> losses;
    std::vector<Tensor> weights;
    Tensor eval_logits;
    std::vector<int64_t> sample;
    std::string graph;
  };
  auto run = [&](bool fused) {
    const FusedGuard path(fused);
    manual_seed(1337);
    GPT m(GPTConfig{.vocab_size = V, .n_embd = 48, .n_head = 4, .n_layer = 2, .block = T});
    nn::AdamW opt(m.parameters(), 1e-3);
    Generator g(1337);
    Run r;
    for (int step = 0; step < 6; ++step) {
      const Batch b = get_batch(split.train, T, B, g);
      const Tensor loss = cross_entropy(view(m(b.x), {B * T, V}), raw::view(b.y, {B * T}));
      if (step == 0) r.graph = graph_text(loss);
      r.losses.push_back(loss.item<float>());
      opt.zero_grad();
      backward(loss);
      opt.step();
    }
    for (const Tensor& p : m.parameters()) r.weights.push_back(raw::clone(p));
    NoGradGuard no_grad;
    r.eval_logits = m(raw::view(raw::narrow(split.val, 0, 0, T), {1, T}));
    Generator gs(5);
    r.sample = m.generate({1, 2, 3}, 40, SampleOptions{}, gs);
    return r;
  };
  const Run fused = run(true), plain = run(false);
  // The routes differ: the fused kernel is one node, the composed ops many.
  EXPECT_NE(fused.graph.find("FusedAttentionBackward0"), std::string::npos);
  EXPECT_EQ(plain.graph.find("FusedAttentionBackward0"), std::string::npos);
  EXPECT_NE(plain.graph.find("MaskedFillBackward0"), std::string::npos);
  for (size_t i = 0; i < fused.losses.size(); ++i) {
    char a[32], b[32];
    std::snprintf(a, sizeof a, "%.4f", fused.losses[i]);
    std::snprintf(b, sizeof b, "%.4f", plain.losses[i]);
    EXPECT_STREQ(a, b) << "step " << i;
    EXPECT_NEAR(fused.losses[i], plain.losses[i], 1e-6) << "step " << i;
  }
  for (size_t i = 0; i < fused.weights.size(); ++i)
    EXPECT_TRUE(testing::tensor_near(fused.weights[i], plain.weights[i], 1e-6))
        << "parameter " << i;
  EXPECT_TRUE(testing::tensor_near(fused.eval_logits, plain.eval_logits, 1e-5));
  EXPECT_EQ(fused.sample, plain.sample);
}

// Training gives the same bits on 1, 2 and 3 threads: each GEMM path (rows handed out, weight
// gradients cut along K, whose chunks follow K alone), the bias sums, LayerNorm, GELU, the
// fused attention, cross-entropy and AdamW split their work by thread and must not let that
// change a sum's order. 2048 tokens a batch, so that the weight gradients are cut into chunks.
TEST(TinyGpt, TrainsTheSameBitsOnOneTwoAndThreeThreads) {
  const int64_t V = 27, B = 32, T = 64;
  struct Run {
    std::vector<float> losses;
    std::vector<Tensor> weights;
  };
  auto run = [&](int threads) {
    const int saved = num_threads();
    set_num_threads(threads);
    manual_seed(7);
    GPT m(GPTConfig{.vocab_size = V, .n_embd = 32, .n_head = 2, .n_layer = 2, .block = T});
    nn::AdamW opt(m.parameters(), 1e-3);
    Generator g(8);
    const Tensor x = raw::to(raw::mul(rand({B, T}, &g), V - 0.01f), Dtype::int64);
    const Tensor y = raw::to(raw::mul(rand({B * T}, &g), V - 0.01f), Dtype::int64);
    Run r;
    for (int step = 0; step < 2; ++step) {
      const Tensor loss = cross_entropy(view(m(x), {B * T, V}), y);
      r.losses.push_back(loss.item<float>());
      opt.zero_grad();
      backward(loss);
      opt.step();
    }
    for (const Tensor& p : m.parameters()) r.weights.push_back(raw::clone(p));
    set_num_threads(saved);
    return r;
  };
  const Run one = run(1);
  for (int threads : {2, 3}) {
    const Run other = run(threads);
    EXPECT_EQ(other.losses, one.losses) << threads << " threads";
    ASSERT_EQ(other.weights.size(), one.weights.size());
    for (size_t i = 0; i < one.weights.size(); ++i)
      EXPECT_TRUE(testing::tensor_equal(other.weights[i], one.weights[i]))
          << threads << " threads, parameter " << i;
  }
}

TEST(TinyGpt, RejectsBadInput) {
  EXPECT_THROW(
      GPT(GPTConfig{.vocab_size = 10, .n_embd = 10, .n_head = 3, .n_layer = 1, .block = 8}),
      Error);  // 10 % 3 != 0
  EXPECT_THROW(GPT(GPTConfig{.vocab_size = 0, .n_embd = 8, .n_head = 2, .n_layer = 1, .block = 8}),
               Error);
  manual_seed(0);
  GPT m(GPTConfig{.vocab_size = 5, .n_embd = 8, .n_head = 2, .n_layer = 1, .block = 4});
  EXPECT_THROW(m(zeros({1, 5}, Dtype::int64)), Error);    // T > block
  EXPECT_THROW(m(full({1, 3}, 5, Dtype::int64)), Error);  // id >= vocab
  EXPECT_THROW(m(zeros({1, 3})), Error);                  // not int64
}

TEST(TinyGpt, ConfigRoundTripsThroughJsonAndCountsItsParameters) {
  const std::vector<GPTConfig> configs = {
      {.vocab_size = 27},
      {.vocab_size = 5, .n_embd = 12, .n_head = 3, .n_layer = 3, .block = 7, .causal = false},
      {.vocab_size = 9, .n_embd = 8, .n_head = 2, .n_layer = 1, .block = 4, .rope = true,
       .gelu = GeluApproximation::tanh, .layer_norm_eps = 1e-6, .tie_head = true}};
  for (const GPTConfig& c : configs) {
    const GPTConfig back = gpt_config_from_json(gpt_config_json(c), "test");
    EXPECT_EQ(gpt_config_json(back), gpt_config_json(c));
    EXPECT_EQ(back.layer_norm_eps, c.layer_norm_eps);
    EXPECT_EQ(gpt_num_parameters(c), GPT(c).num_parameters()) << gpt_config_json(c);
  }
}

TEST(TinyGpt, ABadConfigIsNamedWithItsField) {
  const std::string good = gpt_config_json({.vocab_size = 27});
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {with("\"n_embd\": 64, ", ""), {"ckpt", "\"n_embd\"", "got none"}},
      {with("\"n_layer\": 2", "\"n_layer\": 0"), {"ckpt", "\"n_layer\" in [1, 2^31]", "got 0"}},
      {with("\"n_layer\": 2", "\"n_layer\": 100000000000000000"), {"ckpt", "n_layer"}},
      {with("\"n_head\": 4", "\"n_head\": 5"), {"ckpt", "divisible by n_head"}},
      {with("\"gelu\": \"none\"", "\"gelu\": \"erf\""), {"ckpt", "\"gelu\"", "erf"}},
      {with("\"causal\": true", "\"causal\": 1"), {"ckpt", "\"causal\" true or false"}},
      {with("\"layer_norm_eps\": 1.0000000000000001e-05", "\"layer_norm_eps\": 1e999"),
       {"ckpt", "layer_norm_eps", "1e999"}},
      {with("\"layer_norm_eps\": 1.0000000000000001e-05", "\"layer_norm_eps\": 1-5"),
       {"ckpt", "bad JSON"}},
      {"[1, 2]", {"ckpt", "a JSON object"}},
  };
  for (const auto& c : cases)  // (clang 14 cannot capture a structured binding)
    EXPECT_TRUE(testing::throws_error([&] { gpt_config_from_json(c.first, "ckpt"); }, c.second))
        << c.first;
}

TEST(TextData, TokenizerSortsCodePointsAndRoundTrips) {
  const std::string text =
      "b\xc3\xa9"
      "a b\n\xe2\x82\xac";  // "béa b\n€"
  const CharTokenizer tok(text);
  // Sorted by code point: '\n' (10), ' ' (32), 'a', 'b', 'é' (U+E9), '€' (U+20AC).
  EXPECT_EQ(tok.chars(), (std::vector<char32_t>{U'\n', U' ', U'a', U'b', U'\u00e9', U'\u20ac'}));
  const Tensor ids = tok.encode(text);
  EXPECT_EQ(ids.to_vector<int64_t>(), (std::vector<int64_t>{3, 4, 2, 1, 3, 0, 5}));
  EXPECT_EQ(tok.decode(ids.to_vector<int64_t>()), text);
  EXPECT_THROW(tok.encode("z"), Error);
  EXPECT_THROW(decode_utf8("ab\xff"), Error);        // not a lead byte
  EXPECT_THROW(decode_utf8("\xc3"), Error);          // truncated
  EXPECT_THROW(decode_utf8("\xc0\xaf"), Error);      // overlong
  EXPECT_THROW(decode_utf8("\xed\xa0\x80"), Error);  // a surrogate
}

TEST(TextData, TheVocabularyRebuildsTheSameTokenizer) {
  const CharTokenizer tok("héllo, wörld\n");
  const CharTokenizer again(tok.vocabulary());
  EXPECT_EQ(again.chars(), tok.chars());
  EXPECT_EQ(again.vocabulary(), tok.vocabulary());
}

TEST(TextData, SplitAndBatchesFollowTheReference) {
  const Tensor ids = arange(int64_t{100});
  const TextSplit s = split_90_10(ids);
  EXPECT_EQ(s.train.size(0), 90);
  EXPECT_EQ(s.val.size(0), 10);
  Generator g(7), h(7);
  const Batch b = get_batch(s.train, 8, 3, g);
  // ix = randint(90 - 8 - 1, (3,)): x rows start at ix, y is x shifted by one.
  const auto ix = randint(81, {3}, &h).to_vector<int64_t>();
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t t = 0; t < 8; ++t) {
      EXPECT_EQ(b.x.at<int64_t>({r, t}), ix[static_cast<size_t>(r)] + t);
      EXPECT_EQ(b.y.at<int64_t>({r, t}), ix[static_cast<size_t>(r)] + t + 1);
    }
  EXPECT_THROW(get_batch(s.val, 9, 1, g), Error);  // 10 tokens cannot give block 9 + target
}

}  // namespace
}  // namespace qkv::attention
