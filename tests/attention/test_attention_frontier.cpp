// test_attention_frontier.cpp: the frontier variants: multi-head latent attention, QK-norm,
// logit soft-capping, attention sinks (learned and StreamingLLM's rolling cache), gated output,
// differential attention, document and prefix-LM masks, linear attention and its gated form.
// Each is gradchecked; each causal one is held to "changing the future changes nothing before
// it"; and each is held to an independent oracle: a formula written out by hand, a variant it
// must equal, or recomputation.
#include <cmath>

#include "attention/all.h"
#include "tests/attention/module_gradcheck.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {

using Inputs = std::vector<Tensor>;

// Changes token t of x (B, T, C) and checks that outputs before t are bit-identical and that
// the output at t changed: no position sees its future.
::testing::AssertionResult no_future_leak(const std::function<Tensor(const Tensor&)>& f,
                                          const Tensor& x, int64_t t) {
  Tensor x2 = raw::clone(x);
  raw::fill_(raw::narrow(x2, 1, t, 1), 3.0);
  NoGradGuard no_grad;
  const Tensor y = f(x), y2 = f(x2);
  if (!testing::tensor_equal(raw::narrow(y, 1, 0, t), raw::narrow(y2, 1, 0, t)))
    return ::testing::AssertionFailure() << "positions before " << t << " changed";
  if (testing::tensor_equal(raw::narrow(y, 1, t, 1), raw::narrow(y2, 1, t, 1)))
    return ::testing::AssertionFailure() << "position " << t << " did not change";
  return ::testing::AssertionSuccess();
}

// ---- multi-head latent attention -------------------------------------------------------------

TEST(AttentionMLA, CachedDecodingEqualsRecomputationAndTheCacheIsSmallerByTheStatedFactor) {
  Generator g(100);
  const int64_t C = 64, H = 4, latent = 16, rope_dims = 8;
  MultiHeadLatentAttention m(C, H, latent, rope_dims, {.causal = true}, &g);
  EXPECT_NEAR(m.cache_reduction(), 2.0 * C / (latent + rope_dims), 1e-12);  // 128 / 24
  const Tensor x = randn({2, 9, C}, &g);
  NoGradGuard no_grad;
  const Tensor full = m(x);
  LatentCache cache;
  m.forward(raw::narrow(x, 1, 0, 4), &cache);
  for (int64_t t = 4; t < 9; ++t)
    EXPECT_TRUE(testing::tensor_near(m.forward(raw::narrow(x, 1, t, 1), &cache),
                                     raw::narrow(full, 1, t, 1), 1e-5))
        << "token " << t;
  // The same 9 tokens in an MHA cache of the same width: 2 * B * H * T * D floats.
  MultiHeadOptions o{.causal = true};
  MultiHeadAttention mha(C, H, o, &g);
  KVCache kv;
  mha.forward(x, Tensor(), &kv);
  EXPECT_EQ(cache.length(), 9);
  EXPECT_DOUBLE_EQ(static_cast<double>(kv.bytes()) / static_cast<double>(cache.bytes()),
                   m.cache_reduction());
}

TEST(AttentionMLA, GradcheckAndNoFutureLeak) {
  Generator g(101);
  MultiHeadLatentAttention m(8, 2, 4, 2, {.causal = true}, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({2, 6, 8}, &g), 3));
}

// ---- QK-norm ---------------------------------------------------------------------------------

TEST(AttentionQKNorm, RMSNormIsItsFormulaAndGradchecks) {
  Generator g(110);
  nn::RMSNorm norm(4, 1e-6);
  const Tensor x = randn({3, 4}, &g);
  const Tensor y = norm(x);
  for (int64_t r = 0; r < 3; ++r) {
    double ms = 0;
    for (int64_t j = 0; j < 4; ++j) ms += x.at({r, j}) * x.at({r, j}) / 4.0;
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_NEAR(y.at({r, j}), x.at({r, j}) / std::sqrt(ms + 1e-6), 1e-6);
  }
  Tensor xin = randn({2, 5}, &g);
  raw::fill_(norm.weight, 1.5);
  nn::RMSNorm norm5(5);
  EXPECT_TRUE(gradcheck_module(
      norm5, [&] { return norm5(xin); }, xin));
}

TEST(AttentionQKNorm, ScoresIgnoreTheScaleOfQAndK) {
  // With QK-norm, multiplying W_q (and its bias) by 10 changes nothing: each head's q is
  // normalised to unit RMS before the dot product.
  Generator g(111);
  MultiHeadOptions o{.causal = true, .frontier = {.qk_norm = true}};
  MultiHeadAttention m(8, 2, o, &g);
  const Tensor x = randn({1, 5, 8}, &g);
  NoGradGuard no_grad;
  const Tensor before = m(x);
  raw::copy_(m.q->weight, raw::mul(m.q->weight, 10.0f));
  raw::copy_(m.q->bias, raw::mul(m.q->bias, 10.0f));
  EXPECT_TRUE(testing::tensor_near(m(x), before, 1e-5));
  EXPECT_EQ(m.q_norm->weight.shape(), Shape({4}));
}

TEST(AttentionQKNorm, GradcheckAndNoFutureLeak) {
  Generator g(112);
  MultiHeadOptions o{.causal = true, .rope = true, .frontier = {.qk_norm = true}};
  MultiHeadAttention m(8, 2, o, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 2));
}

// ---- logit soft-capping ----------------------------------------------------------------------

TEST(AttentionSoftcap, WeightsAreSoftmaxOfCappedScoresAndLargeScoresSaturate) {
  Generator g(120);
  const Tensor q = raw::mul(randn({4, 3}, &g), 20.0f), k = randn({4, 3}, &g), v = randn({4, 3}, &g);
  AttentionOptions o{.causal = true, .softcap = 5.0};
  const Tensor w = scaled_dot_product_attention(q, k, v, o).weights;
  const Tensor scores = raw::div(raw::matmul(q, raw::transpose(k, 0, 1)), std::sqrt(3.0f));
  std::vector<double> expected;
  for (int64_t i = 0; i < 4; ++i) {
    std::vector<double> row;
    double m = -INFINITY, z = 0;
    for (int64_t j = 0; j < 4; ++j) {
      const double s = j <= i ? 5.0 * std::tanh(scores.at({i, j}) / 5.0) : -INFINITY;
      row.push_back(s);
      m = std::max(m, s);
    }
    for (double& s : row) z += (s = std::exp(s - m));
    for (double s : row) expected.push_back(s / z);
  }
  EXPECT_TRUE(testing::tensor_near(w, {4, 4}, expected, 1e-6));
  // No score beyond 5: the largest weight ratio in a row is at most e^10.
  for (int64_t i = 1; i < 4; ++i)
    for (int64_t j = 0; j <= i; ++j) EXPECT_GT(w.at({i, j}), std::exp(-10.0f) * 0.999f);
}

TEST(AttentionSoftcap, GradcheckCoreAndModuleAndNoFutureLeak) {
  Generator g(121);
  AttentionOptions o{.causal = true, .softcap = 2.0};
  const GradcheckResult r = gradcheck(
      [&](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], o).output; },
      {randn({4, 3}, &g), randn({4, 3}, &g), randn({4, 3}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;
  MultiHeadOptions mo{.causal = true, .frontier = {.softcap = 3.0}};
  MultiHeadAttention m(8, 2, mo, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 4));
}

// ---- attention sinks -------------------------------------------------------------------------

TEST(AttentionSinks, ASinkJoinsTheDenominatorAndAVeryNegativeSinkIsNoSink) {
  Generator g(130);
  const Tensor q = randn({2, 3, 4}, &g), k = randn({2, 3, 4}, &g), v = randn({2, 3, 4}, &g);
  AttentionOptions o{.causal = true, .sinks = from_vector(std::vector<float>{0.5f, -1.0f}, {2})};
  const Tensor w = scaled_dot_product_attention(q, k, v, o).weights;
  const Tensor scores = raw::div(raw::matmul(q, raw::transpose(k, 1, 2)), 2.0f);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 3; ++i) {
      double z = std::exp(o.sinks.at({h}));
      for (int64_t j = 0; j <= i; ++j) z += std::exp(scores.at({h, i, j}));
      double row = 0;
      for (int64_t j = 0; j <= i; ++j) {
        EXPECT_NEAR(w.at({h, i, j}), std::exp(scores.at({h, i, j})) / z, 1e-6);
        row += w.at({h, i, j});
      }
      EXPECT_LT(row, 1.0);  // the sink took the rest
    }
  AttentionOptions none{.causal = true};
  o.sinks = from_vector(std::vector<float>{-1e4f, -1e4f}, {2});
  EXPECT_TRUE(testing::tensor_near(scaled_dot_product_attention(q, k, v, o).output,
                                   scaled_dot_product_attention(q, k, v, none).output, 1e-6));
}

TEST(AttentionSinks, GradcheckIncludingTheSinksAndTheModuleParameter) {
  Generator g(131);
  const GradcheckResult r = gradcheck(
      [&](const Inputs& in) {
        AttentionOptions o{.causal = true, .sinks = in[3]};
        return scaled_dot_product_attention(in[0], in[1], in[2], o).output;
      },
      {randn({2, 4, 3}, &g), randn({2, 4, 3}, &g), randn({2, 4, 3}, &g), randn({2}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;
  MultiHeadOptions mo{.causal = true, .frontier = {.sinks = true}};
  MultiHeadAttention m(8, 2, mo, &g);
  EXPECT_EQ(m.sinks.shape(), Shape({2}));
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 1));
}

TEST(AttentionSinks, StreamingRollingCacheEqualsFirstTokensPlusWindowMask) {
  // StreamingLLM: keep the first 2 tokens and the last 3. Decoding one token at a time with the
  // rolling cache equals full attention under the mask "j < 2 or i - 3 < j <= i".
  Generator g(132);
  MultiHeadOptions o{.causal = true, .rope = true};
  MultiHeadAttention m(8, 2, o, &g);
  const int64_t T = 10;
  const Tensor x = randn({1, T, 8}, &g);
  NoGradGuard no_grad;
  const Tensor band = sliding_window_mask(T, 3);
  std::vector<bool> first;  // j < 2 (and j <= i, which the module's causal mask adds)
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) first.push_back(j < 2);
  const Tensor mask = raw::logical_or(band, from_vector(first, {T, T}));
  const Tensor full = m.forward(x, mask);
  KVCache cache;
  cache.keep_first = 2;
  cache.window = 3;
  for (int64_t t = 0; t < T; ++t) {
    const Tensor step = m.forward(raw::narrow(x, 1, t, 1), Tensor(), &cache);
    EXPECT_LE(cache.length(), 5);
    EXPECT_EQ(cache.position, t + 1);
    EXPECT_TRUE(testing::tensor_near(step, raw::narrow(full, 1, t, 1), 1e-5)) << "token " << t;
  }
}

// ---- gated attention output -----------------------------------------------------------------

TEST(AttentionGated, AnOpenGateIsPlainAttentionAndGradchecks) {
  Generator g1(140), g2(140);
  MultiHeadAttention plain(8, 2, {.causal = true}, &g1);
  MultiHeadAttention gated(8, 2, {.causal = true, .frontier = {.gate = true}},
                           &g2);  // q, k, v, o drawn first: the same weights
  const Tensor x = randn({2, 5, 8});
  {
    NoGradGuard no_grad;
    raw::fill_(gated.g->weight, 0.0);
    raw::fill_(gated.g->bias, 40.0);  // sigmoid(40) = 1 in float
    EXPECT_TRUE(testing::tensor_equal(gated(x), plain(x)));
  }
  Generator g(141);
  MultiHeadAttention m(8, 2, {.causal = true, .frontier = {.gate = true}}, &g);
  Tensor xin = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(xin); }, xin));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 2));
}

// ---- differential attention ------------------------------------------------------------------

TEST(AttentionDifferential, MapsAreTheDifferenceOfTwoSoftmaxesAndRowsSumToOneMinusLambda) {
  Generator g(150);
  DifferentialAttention m(16, 2, {.layer = 3, .causal = true}, &g);
  EXPECT_NEAR(m.lambda_init, 0.8 - 0.6 * std::exp(-0.6), 1e-12);
  const Tensor x = randn({1, 5, 16}, &g);
  NoGradGuard no_grad;
  m(x);
  const float lambda = m.lambda().item<float>();
  // By hand for head 1: q1, k1 are dims [8, 12) of q and k (head 1's first half), q2, k2 [12, 16).
  const Tensor q = m.q->forward(x), k = m.k->forward(x);
  auto softmax_map = [&](int64_t lo) {
    const Tensor qh = raw::narrow(raw::select(q, 0, 0), 1, lo, 4);
    const Tensor kh = raw::narrow(raw::select(k, 0, 0), 1, lo, 4);
    AttentionOptions o{.causal = true};
    return scaled_dot_product_attention(qh, kh, kh, o).weights;
  };
  const Tensor expected = raw::sub(softmax_map(8), raw::mul(softmax_map(12), lambda));
  EXPECT_TRUE(testing::tensor_near(raw::select(raw::select(m.attention_weights, 0, 0), 0, 1),
                                   expected, 1e-6));
  const Tensor rows = raw::sum(m.attention_weights, -1);
  for (float r : rows.to_vector<float>()) EXPECT_NEAR(r, 1.0f - lambda, 1e-5);
}

TEST(AttentionDifferential, GradcheckIncludingLambdaAndNoFutureLeak) {
  Generator g(151);
  DifferentialAttention m(8, 2, {.layer = 1, .causal = true}, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 3));
}

// ---- document and prefix-LM masks ------------------------------------------------------------

TEST(AttentionDocumentMask, BlockDiagonalCausalAndPrefixLMPatterns) {
  const Tensor docs = from_vector(std::vector<int64_t>{0, 0, 1, 1, 1, 2}, {6});
  const Tensor m = document_mask(docs);
  const int expected[6][6] = {{1, 0, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0},
                              {0, 0, 1, 1, 0, 0}, {0, 0, 1, 1, 1, 0}, {0, 0, 0, 0, 0, 1}};
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(m.at<bool>({i, j}), expected[i][j] == 1) << i << j;
  EXPECT_EQ(document_mask(raw::view(docs, {1, 6})).shape(), Shape({1, 1, 6, 6}));
  const Tensor p = prefix_lm_mask(5, 2);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(p.at<bool>({i, j}), j <= i || j < 2) << i << j;
  EXPECT_TRUE(testing::throws_error([] { prefix_lm_mask(3, 4); },
                                    {"prefix_lm_mask", "0 <= prefix <= T", "prefix 4"}));
}

TEST(AttentionDocumentMask, PackedDocumentsEqualEachDocumentAloneAndGradcheck) {
  Generator g(160);
  MultiHeadAttention m(8, 2, {}, &g);
  const Tensor x = randn({1, 7, 8}, &g);
  const std::vector<int64_t> ids = {0, 0, 0, 1, 1, 2, 2};
  const Tensor packed = m.forward(x, document_mask(from_vector(ids, {7})));
  for (auto [start, len] : {std::pair<int64_t, int64_t>{0, 3}, {3, 2}, {5, 2}}) {
    // Each document alone, causal: what the block-diagonal causal mask must give.
    const Tensor alone = m.forward(raw::narrow(x, 1, start, len), causal_mask(len));
    EXPECT_TRUE(testing::tensor_near(raw::narrow(packed, 1, start, len), alone, 1e-6))
        << "document at " << start;
  }
  // Gradcheck of the core under a document mask.
  const Tensor mask = document_mask(from_vector(std::vector<int64_t>{0, 0, 1, 1}, {4}));
  const GradcheckResult r = gradcheck(
      [&](const Inputs& in) {
        AttentionOptions o{.mask = mask};
        return scaled_dot_product_attention(in[0], in[1], in[2], o).output;
      },
      {randn({4, 3}, &g), randn({4, 3}, &g), randn({4, 3}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;
  // Changing document 2 changes nothing in documents 0 and 1.
  Tensor x2 = raw::clone(x);
  raw::fill_(raw::narrow(x2, 1, 5, 2), 2.0);
  const Tensor packed2 = m.forward(x2, document_mask(from_vector(ids, {7})));
  EXPECT_TRUE(testing::tensor_equal(raw::narrow(packed2, 1, 0, 5), raw::narrow(packed, 1, 0, 5)));
}

TEST(AttentionPrefixLM, NoLeakAfterThePrefixAndBothWaysWithinIt) {
  // Prefix of 3 in 7 tokens: a token after the prefix changes nothing before it; a token inside
  // the prefix is seen by the whole prefix (both ways).
  Generator g(161);
  MultiHeadAttention m(8, 2, {}, &g);
  const Tensor mask = prefix_lm_mask(7, 3);
  const auto f = [&](const Tensor& in) { return m.forward(in, mask); };
  const Tensor x = randn({1, 7, 8}, &g);
  EXPECT_TRUE(no_future_leak(f, x, 4));
  Tensor x2 = raw::clone(x);
  raw::fill_(raw::narrow(x2, 1, 2, 1), 3.0);
  NoGradGuard no_grad;
  EXPECT_FALSE(testing::tensor_equal(raw::narrow(f(x), 1, 0, 1), raw::narrow(f(x2), 1, 0, 1)));
}

// ---- linear attention ------------------------------------------------------------------------

// Both forms on the same inputs: outputs and gradients equal.
void expect_forms_equal(bool gated) {
  Generator g(170);
  const Tensor q = randn({2, 2, 7, 4}, &g), k = randn({2, 2, 7, 4}, &g),
               v = randn({2, 2, 7, 3}, &g), up = randn({2, 2, 7, 3}, &g);
  const Tensor gates = gated ? raw::sigmoid(randn({2, 2, 7}, &g)) : Tensor();
  std::vector<std::vector<Tensor>> results;
  for (LinearForm form : {LinearForm::parallel, LinearForm::recurrent}) {
    const Tensor ql = requires_grad_(raw::clone(q)), kl = requires_grad_(raw::clone(k)),
                 vl = requires_grad_(raw::clone(v));
    const Tensor out = linear_attention(ql, kl, vl, {.causal = true, .form = form}, gates);
    backward(sum(out * up));
    results.push_back({detach(out), grad(ql), grad(kl), grad(vl)});
  }
  for (size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(testing::tensor_near(results[1][i], results[0][i], 1e-5, 1e-5)) << i;
}

TEST(AttentionLinear, ParallelAndRecurrentFormsAreEqual) {
  expect_forms_equal(false);
}

TEST(AttentionLinearGated, ParallelAndRecurrentFormsAreEqual) {
  expect_forms_equal(true);
}

TEST(AttentionLinear, NonCausalEqualsTheFeatureMapFormulaByHand) {
  Generator g(171);
  const Tensor q = randn({3, 2}, &g), k = randn({3, 2}, &g), v = randn({3, 2}, &g);
  const Tensor out = linear_attention(q, k, v, {.causal = false, .form = LinearForm::parallel});
  auto phi = [](float x) { return x > 0 ? x + 1.0f : std::exp(x); };
  std::vector<double> expected;
  for (int64_t i = 0; i < 3; ++i) {
    double den = 0, num[2] = {0, 0};
    for (int64_t j = 0; j < 3; ++j) {
      double a = 0;
      for (int64_t d = 0; d < 2; ++d) a += phi(q.at({i, d})) * phi(k.at({j, d}));
      den += a;
      for (int64_t e = 0; e < 2; ++e) num[e] += a * v.at({j, e});
    }
    for (double n : num) expected.push_back(n / den);
  }
  EXPECT_TRUE(testing::tensor_near(out, {3, 2}, expected, 1e-6));
}

TEST(AttentionLinear, GradcheckBothFormsAndTheGatedModuleAndNoFutureLeak) {
  Generator g(172);
  for (LinearForm form : {LinearForm::parallel, LinearForm::recurrent}) {
    const GradcheckResult r = gradcheck(
        [&](const Inputs& in) {
          return linear_attention(in[0], in[1], in[2], {.causal = true, .form = form},
                                  sigmoid(in[3]));
        },
        {randn({4, 3}, &g), randn({4, 3}, &g), randn({4, 2}, &g), randn({4}, &g)});
    EXPECT_TRUE(r.ok) << r.summary;
  }
  LinearAttention m(8, 2, {.causal = true, .gated = true}, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 3));
  m.form = LinearForm::recurrent;
  EXPECT_TRUE(no_future_leak([&](const Tensor& in) { return m(in); }, randn({1, 6, 8}, &g), 3));
}

}  // namespace
}  // namespace qkv::attention
