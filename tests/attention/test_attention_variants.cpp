// test_attention_variants.cpp: the modern variants: grouped-query and multi-query attention,
// padding and sliding-window masks, the KV cache, flash attention, dropout, RoPE and ALiBi.
// Oracles: a variant that must equal another is held to it (GQA to MHA with copied key heads,
// a window >= T to causal, cached decoding to full recomputation, flash to the standard path,
// padded batches to each sequence alone), RoPE and ALiBi to loops written from their papers'
// formulas, and every differentiable variant to gradcheck.
#include <cmath>

#include "attention/all.h"
#include "tests/attention/module_gradcheck.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {

using Inputs = std::vector<Tensor>;

// (B, H_kv, T, D) -> (B, H_kv * G, T, D): each key head repeated for its G query heads.
Tensor repeat_heads(const Tensor& t, int64_t G) {
  const int64_t B = t.size(0), H_kv = t.size(1), T = t.size(2), D = t.size(3);
  return reshape(expand(unsqueeze(t, 2), {B, H_kv, G, T, D}), {B, H_kv * G, T, D});
}

// Runs attention on leaf copies of q, k, v, backpropagates `upstream`, and returns
// {output, dq, dk, dv}.
std::vector<Tensor> run_with_grads(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const AttentionOptions& options, const Tensor& upstream) {
  const Tensor ql = requires_grad_(raw::clone(q)), kl = requires_grad_(raw::clone(k)),
               vl = requires_grad_(raw::clone(v));
  const Tensor out = scaled_dot_product_attention(ql, kl, vl, options).output;
  backward(sum(out * upstream));
  return {detach(out), grad(ql), grad(kl), grad(vl)};
}

// Flash and the standard path on the same problem: outputs and all three gradients within
// 1e-5 (the bar), gradients also relative to their size.
::testing::AssertionResult flash_equals_standard(const Tensor& q, const Tensor& k, const Tensor& v,
                                                 AttentionOptions options, uint64_t seed = 1) {
  Generator g(seed);
  options.flash = false;
  const Tensor probe = scaled_dot_product_attention(q, k, v, options).output;
  const Tensor upstream = randn(probe.shape(), &g);
  const std::vector<Tensor> standard = run_with_grads(q, k, v, options, upstream);
  options.flash = true;
  const std::vector<Tensor> flash = run_with_grads(q, k, v, options, upstream);
  const char* names[] = {"output", "dq", "dk", "dv"};
  for (size_t i = 0; i < 4; ++i) {
    auto r = testing::tensor_near(flash[i], standard[i], 1e-5, 1e-5);
    if (!r) return ::testing::AssertionFailure() << names[i] << ": " << r.message();
  }
  return ::testing::AssertionSuccess();
}

// ---- grouped-query and multi-query attention ------------------------------------------------

// A GQA module against plain MHA whose k and v weights are the GQA ones with each key head's
// rows repeated for its group: the same function, so the same outputs and input gradients.
void expect_gqa_equals_mha_with_copied_heads(int64_t num_kv_heads) {
  const int64_t C = 12, H = 4, D = C / H, G = H / num_kv_heads;
  Generator g(21);
  MultiHeadOptions gqa_options{.num_kv_heads = num_kv_heads, .causal = true};
  MultiHeadAttention gqa(C, H, gqa_options, &g);
  MultiHeadAttention mha(C, H, {.causal = true}, &g);
  EXPECT_EQ(gqa.k->weight.shape(), Shape({num_kv_heads * D, C}));
  {
    NoGradGuard no_grad;
    auto repeat_rows = [&](const Tensor& w) {  // (H_kv * D, ...) -> (H * D, ...)
      Shape s = w.shape();
      Shape grouped = {num_kv_heads, 1, D};
      Shape expanded = {num_kv_heads, G, D};
      for (size_t i = 1; i < s.size(); ++i) {
        grouped.push_back(s[i]);
        expanded.push_back(s[i]);
      }
      Shape out = {H * D};
      for (size_t i = 1; i < s.size(); ++i) out.push_back(s[i]);
      return raw::reshape(raw::contiguous(raw::expand(raw::reshape(w, grouped), expanded)), out);
    };
    raw::copy_(mha.q->weight, gqa.q->weight);
    raw::copy_(mha.q->bias, gqa.q->bias);
    raw::copy_(mha.o->weight, gqa.o->weight);
    raw::copy_(mha.o->bias, gqa.o->bias);
    raw::copy_(mha.k->weight, repeat_rows(gqa.k->weight));
    raw::copy_(mha.k->bias, repeat_rows(gqa.k->bias));
    raw::copy_(mha.v->weight, repeat_rows(gqa.v->weight));
    raw::copy_(mha.v->bias, repeat_rows(gqa.v->bias));
  }
  const Tensor x = randn({2, 5, C}, &g), up = randn({2, 5, C}, &g);
  const Tensor x1 = requires_grad_(raw::clone(x)), x2 = requires_grad_(raw::clone(x));
  const Tensor y1 = gqa(x1), y2 = mha(x2);
  EXPECT_TRUE(testing::tensor_near(y1, y2, 1e-6));
  EXPECT_TRUE(testing::tensor_near(gqa.attention_weights, mha.attention_weights, 1e-6));
  backward(sum(y1 * up));
  backward(sum(y2 * up));
  EXPECT_TRUE(testing::tensor_near(grad(x1), grad(x2), 1e-5));
}

TEST(AttentionGQA, GroupedQueryEqualsMHAWithKeyHeadsCopiedPerGroup) {
  expect_gqa_equals_mha_with_copied_heads(2);
}

TEST(AttentionMQA, MultiQueryEqualsMHAWithOneKeyHeadCopiedToAll) {
  expect_gqa_equals_mha_with_copied_heads(1);
}

TEST(AttentionGQA, KvHeadsEqualToHeadsIsPlainMHABitForBit) {
  Generator g1(3), g2(3);
  MultiHeadOptions o{.num_kv_heads = 4};
  MultiHeadAttention a(8, 4, o, &g1), b(8, 4, {}, &g2);
  const Tensor x = randn({2, 3, 8});
  EXPECT_TRUE(testing::tensor_equal(a(x), b(x)));
}

TEST(AttentionGQA, CoreBroadcastsKeyHeadsLikeAnExplicitRepeat) {
  Generator g(4);
  const Tensor q = randn({2, 6, 5, 4}, &g), k = randn({2, 3, 7, 4}, &g),
               v = randn({2, 3, 7, 3}, &g);
  AttentionOptions o{.causal = true};
  const AttentionOutput grouped = scaled_dot_product_attention(q, k, v, o);
  const AttentionOutput repeated =
      scaled_dot_product_attention(q, repeat_heads(k, 2), repeat_heads(v, 2), o);
  EXPECT_TRUE(testing::tensor_near(grouped.output, repeated.output, 1e-6));
  EXPECT_TRUE(testing::tensor_near(grouped.weights, repeated.weights, 1e-6));
}

TEST(AttentionGQA, GradcheckGroupedAndMultiQueryModules) {
  for (int64_t kv : {2, 1}) {
    Generator g(30 + static_cast<uint64_t>(kv));
    MultiHeadOptions o{.num_kv_heads = kv, .causal = true};
    MultiHeadAttention m(8, 4, o, &g);
    Tensor x = randn({2, 3, 8}, &g);
    EXPECT_TRUE(gradcheck_module(
        m, [&] { return m(x); }, x))
        << "num_kv_heads " << kv;
  }
}

TEST(AttentionGQA, TheKVCacheShrinksByHeadsOverKvHeads) {
  for (int64_t kv : {4, 2, 1}) {
    MultiHeadOptions o{.num_kv_heads = kv, .causal = true};
    MultiHeadAttention m(16, 4, o);
    NoGradGuard no_grad;
    KVCache cache;
    m.forward(randn({1, 10, 16}), Tensor(), &cache);
    // 2 (k and v) * B * H_kv * T * D floats.
    EXPECT_EQ(cache.bytes(), static_cast<size_t>(2 * 1 * kv * 10 * 4) * sizeof(float));
  }
}

TEST(AttentionGQA, BadHeadCountsAreNamedErrors) {
  MultiHeadOptions o{.num_kv_heads = 3};
  EXPECT_TRUE(testing::throws_error([&] { MultiHeadAttention(8, 4, o); },
                                    {"MultiHeadAttention", "num_kv_heads (3)", "num_heads (4)"}));
  EXPECT_TRUE(testing::throws_error(
      [] {
        scaled_dot_product_attention(randn({1, 4, 2, 2}), randn({1, 3, 2, 2}), randn({1, 3, 2, 2}));
      },
      {"scaled_dot_product_attention", "multiple of key/value heads", "(1, 4, 2, 2)"}));
}

// ---- padding masks and sliding windows -------------------------------------------------------

TEST(AttentionPadding, PaddedBatchEqualsEachSequenceAloneWithCausal) {
  Generator g(40);
  MultiHeadAttention m(8, 2, {.causal = true}, &g);
  const int64_t T = 6;
  const Tensor x = randn({3, T, 8}, &g);
  const std::vector<int64_t> lengths = {6, 4, 1};
  const Tensor y = m.forward(x, padding_mask(from_vector(lengths, {3}), T));
  for (int64_t b = 0; b < 3; ++b) {
    const int64_t len = lengths[static_cast<size_t>(b)];
    const Tensor alone = m(raw::narrow(raw::narrow(x, 0, b, 1), 1, 0, len));
    EXPECT_TRUE(testing::tensor_near(raw::narrow(raw::narrow(y, 0, b, 1), 1, 0, len), alone, 1e-6))
        << "sequence " << b;
  }
}

TEST(AttentionPadding, GradcheckPaddingWithCausal) {
  Generator g(41);
  MultiHeadAttention m(8, 2, {.causal = true}, &g);
  Tensor x = randn({2, 4, 8}, &g);
  const Tensor mask = padding_mask(from_vector(std::vector<int64_t>{4, 2}, {2}), 4);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m.forward(x, mask); }, x));
}

TEST(AttentionSlidingWindow, WindowAtLeastTIsFullCausal) {
  Generator g(42);
  const Tensor q = randn({2, 2, 7, 4}, &g), k = randn({2, 2, 7, 4}, &g),
               v = randn({2, 2, 7, 4}, &g);
  AttentionOptions causal{.causal = true};
  const Tensor full = scaled_dot_product_attention(q, k, v, causal).output;
  for (int64_t w : {7, 8, 100}) {
    AttentionOptions windowed = causal;
    windowed.window = w;
    EXPECT_TRUE(
        testing::tensor_near(scaled_dot_product_attention(q, k, v, windowed).output, full, 1e-6))
        << "window " << w;
  }
}

TEST(AttentionSlidingWindow, EqualsTheBandMaskAndSeesOnlyTheLastWKeys) {
  Generator g(43);
  const Tensor q = randn({5, 3}, &g), k = randn({5, 3}, &g), v = randn({5, 3}, &g);
  AttentionOptions windowed{.causal = true, .window = 2};
  const AttentionOutput a = scaled_dot_product_attention(q, k, v, windowed);
  AttentionOptions masked{.mask = sliding_window_mask(5, 2)};
  EXPECT_TRUE(
      testing::tensor_near(a.output, scaled_dot_product_attention(q, k, v, masked).output, 1e-6));
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j)
      EXPECT_EQ(a.weights.at({i, j}) > 0, j <= i && j > i - 2) << i << ", " << j;
}

TEST(AttentionSlidingWindow, GradcheckAndNoFutureLeak) {
  Generator g(44);
  MultiHeadOptions o{.causal = true, .window = 2};
  MultiHeadAttention m(8, 2, o, &g);
  Tensor x = randn({1, 5, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  // Changing token 3 changes nothing at positions 0..2, and position 5 can no longer see it.
  Tensor x2 = raw::clone(x);
  raw::fill_(raw::narrow(x2, 1, 3, 1), 7.0);
  const Tensor y = m(x), y2 = m(x2);
  EXPECT_TRUE(testing::tensor_equal(raw::narrow(y, 1, 0, 3), raw::narrow(y2, 1, 0, 3)));
  EXPECT_FALSE(testing::tensor_equal(raw::narrow(y, 1, 3, 2), raw::narrow(y2, 1, 3, 2)));
}

TEST(AttentionSlidingWindow, WindowWithoutCausalIsANamedError) {
  AttentionOptions o{.window = 3};
  EXPECT_TRUE(testing::throws_error(
      [&] {
        scaled_dot_product_attention(randn({2, 2}), randn({2, 2}), randn({2, 2}), o);
      },
      {"scaled_dot_product_attention", "only with causal", "window 3"}));
}

// ---- the KV cache ----------------------------------------------------------------------------

// Prefill 3 tokens, then one at a time: every step's output equals the full forward's row.
void expect_cached_equals_full(const MultiHeadOptions& options) {
  Generator g(50);
  MultiHeadAttention m(16, 4, options, &g);
  const int64_t T = 9;
  const Tensor x = randn({2, T, 16}, &g);
  NoGradGuard no_grad;
  const Tensor full = m(x);
  KVCache cache;
  const Tensor prefill = m.forward(raw::narrow(x, 1, 0, 3), Tensor(), &cache);
  EXPECT_TRUE(testing::tensor_near(prefill, raw::narrow(full, 1, 0, 3), 1e-5));
  for (int64_t t = 3; t < T; ++t) {
    const Tensor step = m.forward(raw::narrow(x, 1, t, 1), Tensor(), &cache);
    EXPECT_EQ(cache.length(), t + 1);
    EXPECT_TRUE(testing::tensor_near(step, raw::narrow(full, 1, t, 1), 1e-5)) << "token " << t;
  }
}

TEST(AttentionKVCache, CachedDecodingEqualsRecomputationCausal) {
  MultiHeadOptions o{.causal = true};
  expect_cached_equals_full(o);
}

TEST(AttentionKVCache, CachedDecodingEqualsRecomputationWithGQAAndRoPE) {
  MultiHeadOptions o{.num_kv_heads = 2, .causal = true, .rope = true};
  expect_cached_equals_full(o);
}

TEST(AttentionKVCache, CachedDecodingEqualsRecomputationWithALiBiAndWindow) {
  MultiHeadOptions o{.causal = true, .window = 4, .alibi = true};
  expect_cached_equals_full(o);
  o.flash = true;
  expect_cached_equals_full(o);
}

TEST(AttentionKVCache, GradcheckThroughTheCachedStep) {
  // With grad mode on, a cached step is differentiable: the new token's output through its own
  // projections and the cached keys and values (which carry their history from the prefill).
  Generator g(51);
  MultiHeadOptions o{.num_kv_heads = 1, .causal = true, .rope = true};
  MultiHeadAttention m(8, 2, o, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m,
      [&] {
        KVCache cache;
        m.forward(narrow(x, 1, 0, 3), Tensor(), &cache);
        return m.forward(narrow(x, 1, 3, 1), Tensor(), &cache);
      },
      x));
}

TEST(AttentionKVCache, GPTLogitsAndGeneratedTokensEqualWithAndWithoutCache) {
  manual_seed(7);
  GPTConfig c{.vocab_size = 11, .n_embd = 16, .n_head = 2, .n_layer = 2, .block = 8};
  GPT m(c);
  NoGradGuard no_grad;
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 9, 0, 3, 3, 7}, {1, 8});
  const Tensor full = m(ids);
  std::vector<KVCache> caches;
  m.forward(raw::narrow(ids, 1, 0, 2), &caches);  // prefill positions 0, 1
  for (int64_t t = 2; t < 8; ++t) {
    const Tensor step = m.forward(raw::narrow(ids, 1, t, 1), &caches);  // position t
    EXPECT_TRUE(testing::tensor_near(step, raw::narrow(full, 1, t, 1), 1e-5)) << "token " << t;
  }
  EXPECT_TRUE(testing::throws_error([&] { m.forward(raw::narrow(ids, 1, 0, 1), &caches); },
                                    {"GPT", "positions within block = 8", "after 8 cached"}));
  // Generation past the block: the cache is used until the context is full, then each step
  // recomputes the last 8 tokens; the tokens equal those of generation without the cache.
  SampleOptions with, without;
  without.use_cache = false;
  Generator g1(5), g2(5);
  const std::vector<int64_t> a = m.generate({1, 2}, 20, with, g1);
  const std::vector<int64_t> b = m.generate({1, 2}, 20, without, g2);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 22u);
}

TEST(AttentionRoPE, GPTWithRoPEHasNoPositionTableRunsPastBlockAndCachesExactly) {
  manual_seed(8);
  GPTConfig c{.vocab_size = 7, .n_embd = 8, .n_head = 2, .n_layer = 1, .block = 4, .rope = true};
  GPT m(c);
  for (const auto& [name, p] : m.named_parameters()) EXPECT_EQ(name.find("pos"), std::string::npos);
  NoGradGuard no_grad;
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 6, 0, 3}, {1, 6});  // T > block
  const Tensor full = m(ids);
  std::vector<KVCache> caches;
  m.forward(raw::narrow(ids, 1, 0, 3), &caches);
  for (int64_t t = 3; t < 6; ++t)
    EXPECT_TRUE(testing::tensor_near(m.forward(raw::narrow(ids, 1, t, 1), &caches),
                                     raw::narrow(full, 1, t, 1), 1e-5));
}

// A cache with a capacity writes each append into its room (k and v stay views of one
// buffer, whose address never moves) and holds exactly what the concatenating cache holds;
// past the capacity it concatenates again, still equal.
TEST(AttentionKVCache, ARoomEqualsConcatenationAndIsWrittenInPlace) {
  Generator g(52);
  NoGradGuard no_grad;
  KVCache grown, roomy;
  roomy.capacity = 6;
  const void* room = nullptr;
  for (int64_t t : {3, 1, 1, 1, 1}) {  // a prefill of 3, then one at a time up to 7 > 6
    const Tensor k_new = randn({2, 3, t, 4}, &g), v_new = randn({2, 3, t, 5}, &g);
    grown.append(k_new, v_new);
    roomy.append(k_new, v_new);
    EXPECT_TRUE(testing::tensor_equal(roomy.k, grown.k)) << roomy.length();
    EXPECT_TRUE(testing::tensor_equal(roomy.v, grown.v)) << roomy.length();
    EXPECT_EQ(roomy.position, grown.position);
    EXPECT_EQ(roomy.bytes(), grown.bytes());
    if (roomy.length() <= 6) {
      ASSERT_TRUE(roomy.k_room.defined());
      if (!room) room = roomy.k.data_ptr();
      EXPECT_EQ(roomy.k.data_ptr(), room) << "appended in place";
    } else {
      EXPECT_FALSE(roomy.k_room.defined()) << "past the capacity: concatenated";
    }
  }
}

// A copy of a cache with a room, taken between appends (two continuations of one prompt),
// and the original each go on in their own buffer: what one appends never shows up in the
// other, and each holds what a concatenating cache holds.
TEST(AttentionKVCache, ACopyOfARoomyCacheWritesIntoARoomOfItsOwn) {
  Generator g(54);
  NoGradGuard no_grad;
  KVCache roomy;
  roomy.capacity = 8;
  const Tensor k0 = randn({1, 2, 3, 4}, &g), v0 = randn({1, 2, 3, 4}, &g);
  roomy.append(k0, v0);
  KVCache branch = roomy, assigned;
  assigned = roomy;
  KVCache grown;
  grown.append(k0, v0);
  KVCache grown_branch = grown, grown_assigned = grown;
  for (int step = 0; step < 3; ++step) {  // a different next token for each of the three
    for (auto [cache, reference] : {std::pair{&roomy, &grown}, std::pair{&branch, &grown_branch},
                                    std::pair{&assigned, &grown_assigned}}) {
      const Tensor k_new = randn({1, 2, 1, 4}, &g), v_new = randn({1, 2, 1, 4}, &g);
      cache->append(k_new, v_new);
      reference->append(k_new, v_new);
    }
    for (auto [cache, reference] : {std::pair{&roomy, &grown}, std::pair{&branch, &grown_branch},
                                    std::pair{&assigned, &grown_assigned}}) {
      EXPECT_TRUE(testing::tensor_equal(cache->k, reference->k)) << "step " << step;
      EXPECT_TRUE(testing::tensor_equal(cache->v, reference->v)) << "step " << step;
    }
  }
  EXPECT_TRUE(branch.k_room.defined() && !branch.k.shares_storage(roomy.k))
      << "the copy appends in place too, into its own room";
  EXPECT_FALSE(assigned.k.shares_storage(roomy.k));
}

// With grad mode on, appends concatenate even with a capacity (a write in place would not be
// recorded by autograd): the gradient check through a cached step, with a room asked for.
// (Its finite differences run with grad mode off, and there the room is used.)
TEST(AttentionKVCache, GradModeConcatenatesEvenWithACapacity) {
  Generator g(53);
  MultiHeadAttention m(8, 2, MultiHeadOptions{.causal = true}, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m,
      [&] {
        KVCache cache;
        cache.capacity = 4;
        m.forward(narrow(x, 1, 0, 3), Tensor(), &cache);
        EXPECT_EQ(cache.k_room.defined(), !is_grad_enabled());  // gradcheck runs both ways
        return m.forward(narrow(x, 1, 3, 1), Tensor(), &cache);
      },
      x));
}

// GPT decoding with roomy caches gives the very logits of concatenating ones, step by step.
TEST(AttentionKVCache, GPTStepsWithARoomEqualThoseWithout) {
  manual_seed(9);
  GPT m(GPTConfig{.vocab_size = 11, .n_embd = 16, .n_head = 2, .n_layer = 2, .block = 8});
  NoGradGuard no_grad;
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 9, 0, 3, 3, 7}, {1, 8});
  std::vector<KVCache> grown(2), roomy(2);
  for (KVCache& c : roomy) c.capacity = 8;
  EXPECT_TRUE(testing::tensor_equal(m.forward(raw::narrow(ids, 1, 0, 2), &roomy),
                                    m.forward(raw::narrow(ids, 1, 0, 2), &grown)));
  for (int64_t t = 2; t < 8; ++t)
    EXPECT_TRUE(testing::tensor_equal(m.forward(raw::narrow(ids, 1, t, 1), &roomy),
                                      m.forward(raw::narrow(ids, 1, t, 1), &grown)))
        << "token " << t;
  EXPECT_TRUE(roomy[0].k_room.defined() && roomy[1].v_room.defined());
}

TEST(AttentionKVCache, MismatchedCacheIsANamedError) {
  KVCache cache;
  cache.append(zeros({1, 2, 3, 4}), zeros({1, 2, 3, 4}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        cache.append(zeros({1, 1, 1, 4}), zeros({1, 1, 1, 4}));
      },
      {"KVCache::append", "(1, 2, 3, 4)", "(1, 1, 1, 4)"}));
}

// ---- flash attention -------------------------------------------------------------------------

TEST(AttentionFlash, EqualsStandardPathPlainAndCausal) {
  Generator g(60);
  // T not a multiple of the tiles (32 queries, 64 keys), D_v != D.
  const Tensor q = randn({2, 3, 70, 8}, &g), k = randn({2, 3, 70, 8}, &g),
               v = randn({2, 3, 70, 6}, &g);
  AttentionOptions o;
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
  o.causal = true;
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
  o.scale = 0.7;
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
}

TEST(AttentionFlash, EqualsStandardPathAcrossManyTiles) {
  Generator g(61);
  const Tensor q = randn({1, 2, 200, 16}, &g), k = randn({1, 2, 200, 16}, &g),
               v = randn({1, 2, 200, 16}, &g);
  AttentionOptions o{.causal = true};
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
}

TEST(AttentionFlash, EqualsStandardPathWithFewerOrMoreQueriesThanKeys) {
  Generator g(62);
  const Tensor k = randn({2, 130, 8}, &g), v = randn({2, 130, 8}, &g);
  AttentionOptions o{.causal = true};
  // Queries after 100 cached keys (as in decoding), and more queries than keys (empty rows).
  EXPECT_TRUE(flash_equals_standard(randn({2, 30, 8}, &g), k, v, o));
  EXPECT_TRUE(flash_equals_standard(randn({2, 150, 8}, &g), k, v, o));
  o.causal = false;
  EXPECT_TRUE(flash_equals_standard(randn({2, 1, 8}, &g), k, v, o));
}

TEST(AttentionFlash, EqualsStandardPathWithWindowALiBiRoPEAndGQA) {
  Generator g(63);
  const Tensor q = randn({2, 4, 90, 8}, &g), k = randn({2, 2, 90, 8}, &g),
               v = randn({2, 2, 90, 8}, &g);
  AttentionOptions o{.causal = true};
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));  // grouped
  o.window = 20;
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
  o.alibi_slopes = alibi_slopes(4);
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
  o.rope = true;
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));
  o.causal = false;
  o.window = 0;
  EXPECT_TRUE(flash_equals_standard(q, k, v, o));  // ALiBi without causal: -slope |i - j|
}

TEST(AttentionFlash, Gradcheck) {
  Generator g(64);
  AttentionOptions o{.causal = true, .alibi_slopes = alibi_slopes(2), .flash = true};
  const GradcheckResult r = gradcheck(
      [&](const Inputs& in) { return scaled_dot_product_attention(in[0], in[1], in[2], o).output; },
      {randn({1, 2, 5, 4}, &g), randn({1, 2, 5, 4}, &g), randn({1, 2, 5, 3}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;
}

TEST(AttentionFlash, SameBitsOnOneTwoAndThreeThreads) {
  Generator g(65);
  const Tensor q = randn({2, 2, 150, 16}, &g), k = randn({2, 1, 150, 16}, &g),
               v = randn({2, 1, 150, 16}, &g), up = randn({2, 2, 150, 16}, &g);
  AttentionOptions o{.causal = true, .flash = true};
  const int saved = num_threads();
  std::vector<std::vector<Tensor>> results;
  for (int t : {1, 2, 3}) {
    set_num_threads(t);
    results.push_back(run_with_grads(q, k, v, o, up));
  }
  set_num_threads(saved);
  for (size_t r = 1; r < results.size(); ++r)
    for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(testing::tensor_equal(results[r][i], results[0][i]));
}

TEST(AttentionFlash, NeverHoldsATqByTkMatrix) {
  // Forward and backward at T = 1024: the standard path's composed ops hold several (T, T)
  // matrices of 4 MiB (scores, weights, their gradients); the fused kernel keeps the weights
  // alone (its dS is per-thread scratch); flash holds O(T * D) tensors only, so its peak stays
  // below one of them.
  Generator g(66);
  const int64_t T = 1024, D = 16;
  const Tensor q = randn({1, 1, T, D}, &g), k = randn({1, 1, T, D}, &g),
               v = randn({1, 1, T, D}, &g), up = randn({1, 1, T, D}, &g);
  AttentionOptions o{.causal = true};
  auto peak_of = [&](bool flash, bool fused = false) {
    const FusedGuard path(fused);
    o.flash = flash;
    const size_t before = memory_stats().allocated;
    reset_peak_memory();
    run_with_grads(q, k, v, o, up);
    return memory_stats().peak - before;
  };
  const size_t one_matrix = static_cast<size_t>(T * T) * sizeof(float);
  EXPECT_LT(peak_of(true), one_matrix / 4);
  EXPECT_GT(peak_of(false), 2 * one_matrix);
  const size_t fused = peak_of(false, true);
  EXPECT_GT(fused, one_matrix);
  EXPECT_LT(fused, 2 * one_matrix);
}

TEST(AttentionFlash, MaskOrDropoutIsANamedError) {
  AttentionOptions o{.mask = causal_mask(3), .flash = true};
  EXPECT_TRUE(testing::throws_error(
      [&] {
        scaled_dot_product_attention(randn({3, 2}), randn({3, 2}), randn({3, 2}), o);
      },
      {"scaled_dot_product_attention", "flash", "not a mask, dropout, softcap or sinks",
       "got a mask"}));
  o.mask = Tensor();
  o.dropout_p = 0.1;
  EXPECT_TRUE(testing::throws_error(
      [&] {
        scaled_dot_product_attention(randn({3, 2}), randn({3, 2}), randn({3, 2}), o);
      },
      {"flash", "dropout_p > 0"}));
}

TEST(AttentionFlash, MultiHeadAttentionModuleGradcheck) {
  Generator g(67);
  MultiHeadOptions o{.num_kv_heads = 1, .causal = true, .flash = true};
  MultiHeadAttention m(8, 2, o, &g);
  Tensor x = randn({2, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_FALSE(m.attention_weights.defined());  // never built
}

// ---- dropout ---------------------------------------------------------------------------------

TEST(AttentionDropout, KeptWeightsScaledByOneOverOneMinusPAndOutputUsesThem) {
  Generator g(70);
  const Tensor q = randn({2, 6, 4}, &g), k = randn({2, 6, 4}, &g), v = randn({2, 6, 4}, &g);
  AttentionOptions plain{.causal = true};
  const AttentionOutput a = scaled_dot_product_attention(q, k, v, plain);
  AttentionOptions dropped = plain;
  dropped.dropout_p = 0.25;
  Generator gd(1);
  dropped.generator = &gd;
  const AttentionOutput b = scaled_dot_product_attention(q, k, v, dropped);
  const std::vector<float> wa = a.weights.to_vector<float>(), wb = b.weights.to_vector<float>();
  int zeroed = 0;
  for (size_t i = 0; i < wa.size(); ++i) {
    EXPECT_TRUE(wb[i] == 0.0f || std::fabs(wb[i] - wa[i] / 0.75f) < 1e-6f) << i;
    zeroed += wb[i] == 0.0f && wa[i] != 0.0f;
  }
  EXPECT_GT(zeroed, 0);
  EXPECT_TRUE(testing::tensor_near(b.output, raw::matmul(b.weights, v), 1e-6));
}

TEST(AttentionDropout, GradcheckWithAFixedDropPattern) {
  Generator g(71);
  const GradcheckResult r = gradcheck(
      [&](const Inputs& in) {
        Generator gd(3);  // the same pattern on every call
        AttentionOptions o{.causal = true, .dropout_p = 0.3, .generator = &gd};
        return scaled_dot_product_attention(in[0], in[1], in[2], o).output;
      },
      {randn({4, 3}, &g), randn({4, 3}, &g), randn({4, 3}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;
}

// ---- RoPE ------------------------------------------------------------------------------------

TEST(AttentionRoPE, EqualsThePairRotationsOfItsFormula) {
  Generator g(80);
  const int64_t T = 5, D = 6, offset = 3;
  const Tensor x = randn({T, D}, &g);
  const Tensor y = rope(x, offset, 100.0);
  std::vector<double> expected(static_cast<size_t>(T * D));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < D / 2; ++i) {
      const double angle = static_cast<double>(t + offset) * std::pow(100.0, -2.0 * i / D);
      const double a = x.at({t, i}), b = x.at({t, i + D / 2});
      expected[static_cast<size_t>(t * D + i)] = a * std::cos(angle) - b * std::sin(angle);
      expected[static_cast<size_t>(t * D + i + D / 2)] = b * std::cos(angle) + a * std::sin(angle);
    }
  EXPECT_TRUE(testing::tensor_near(y, {T, D}, expected, 1e-6));
  EXPECT_TRUE(
      testing::tensor_equal(raw::narrow(rope(x, 0, 100.0), 0, 0, 1), raw::narrow(x, 0, 0, 1)));
}

TEST(AttentionRoPE, ScoresDependOnlyOnRelativePosition) {
  Generator g(81);
  const Tensor q = randn({1, 8}, &g), k = randn({1, 8}, &g);
  auto score = [&](int64_t tq, int64_t tk) {
    return raw::sum(raw::mul(rope(q, tq), rope(k, tk))).item<float>();
  };
  EXPECT_NEAR(score(5, 2), score(13, 10), 1e-5);
  EXPECT_NEAR(score(7, 7), score(0, 0), 1e-5);
  EXPECT_GT(std::fabs(score(5, 2) - score(5, 4)), 1e-3);
  // and a rotation keeps lengths
  EXPECT_NEAR(raw::sum(raw::mul(rope(q, 9), rope(q, 9))).item<float>(),
              raw::sum(raw::mul(q, q)).item<float>(), 1e-5);
}

TEST(AttentionRoPE, CoreOptionEqualsRotatingQAndKByHand) {
  Generator g(82);
  const Tensor q = randn({2, 3, 8}, &g), k = randn({2, 7, 8}, &g), v = randn({2, 7, 8}, &g);
  AttentionOptions o{.causal = true, .rope = true};
  const Tensor a = scaled_dot_product_attention(q, k, v, o).output;
  o.rope = false;
  const Tensor b = scaled_dot_product_attention(rope(q, 4), rope(k, 0), v, o).output;
  EXPECT_TRUE(testing::tensor_equal(a, b));
}

TEST(AttentionRoPE, GradcheckFunctionAndModule) {
  Generator g(83);
  const GradcheckResult r =
      gradcheck([](const Inputs& in) { return rope(in[0], 2); }, {randn({2, 3, 4}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;
  MultiHeadOptions o{.causal = true, .rope = true};
  MultiHeadAttention m(8, 2, o, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  EXPECT_TRUE(testing::throws_error([] { rope(randn({2, 3})); }, {"rope", "D even", "(2, 3)"}));
  // The message names the dtype with the shape (dtype_and_shape_of), or says it is undefined.
  EXPECT_TRUE(testing::throws_error(
      [] {
        rope(from_vector(std::vector<int64_t>{1, 2, 3, 4}, {2, 2}));
      },
      {"rope: a float32 input (..., T, D) with D even, got torch.int64 (2, 2)"}));
  EXPECT_TRUE(testing::throws_error(
      [] { rope(Tensor()); }, {"rope: a float32 input (..., T, D) with D even, got undefined"}));
}

// ---- ALiBi -----------------------------------------------------------------------------------

TEST(AttentionALiBi, SlopesAreThePapers) {
  EXPECT_EQ(alibi_slopes(4), (std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f}));
  const std::vector<float> s8 = alibi_slopes(8);
  for (size_t h = 0; h < 8; ++h) EXPECT_FLOAT_EQ(s8[h], std::pow(0.5f, static_cast<float>(h + 1)));
  // Not a power of two: the 4-head slopes, then every other 8-head slope (the paper's code).
  EXPECT_EQ(alibi_slopes(6),
            (std::vector<float>{0.25f, 0.0625f, 0.015625f, 0.00390625f, 0.5f, 0.125f}));
}

TEST(AttentionALiBi, CoreAddsMinusSlopeTimesDistance) {
  Generator g(90);
  const Tensor q = randn({1, 2, 4, 4}, &g), k = randn({1, 2, 6, 4}, &g),
               v = randn({1, 2, 6, 4}, &g);
  AttentionOptions o{.causal = true, .alibi_slopes = {0.5f, 0.125f}};
  const Tensor a = scaled_dot_product_attention(q, k, v, o).weights;
  // By hand: scores / 2 - slope * (i + 2 - j), causal, softmax.
  const Tensor scores = raw::div(raw::matmul(q, raw::transpose(k, -2, -1)), scalar_tensor(2.0f));
  std::vector<double> expected;
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 4; ++i) {
      std::vector<double> row;
      double m = -INFINITY, z = 0;
      for (int64_t j = 0; j < 6; ++j) {
        const double s =
            j <= i + 2 ? scores.at({0, h, i, j}) - o.alibi_slopes[h] * (i + 2 - j) : -INFINITY;
        row.push_back(s);
        m = std::max(m, s);
      }
      for (double& s : row) z += (s = std::exp(s - m));
      for (double s : row) expected.push_back(s / z);
    }
  EXPECT_TRUE(testing::tensor_near(a, {1, 2, 4, 6}, expected, 1e-6));
}

TEST(AttentionALiBi, GradcheckModuleAndEqualsFlash) {
  Generator g(91);
  MultiHeadOptions o{.causal = true, .alibi = true};
  MultiHeadAttention m(8, 2, o, &g);
  Tensor x = randn({1, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
  const Tensor standard = m(x);
  m.options.flash = true;
  EXPECT_TRUE(testing::tensor_near(m(x), standard, 1e-5));
  EXPECT_TRUE(testing::throws_error(
      [] {
        AttentionOptions a{.alibi_slopes = {1.0f, 2.0f, 3.0f}};
        scaled_dot_product_attention(randn({1, 2, 3, 2}), randn({1, 2, 3, 2}), randn({1, 2, 3, 2}),
                                     a);
      },
      {"one ALiBi slope per query head", "H = 3", "(1, 2, 3, 2)"}));
}

}  // namespace
}  // namespace qkv::attention
