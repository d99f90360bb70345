// test_attention.cpp: the core and the classic modules. Oracles: a hand-written loop for the
// core, gradcheck for every module, equalities between variants that must agree (the two
// causal methods, one-head wrapper vs SelfAttention, fused vs wrapper, cross vs self), and the
// causal promise itself (the future changes nothing and receives no gradient).
#include <cmath>

#include "attention/all.h"
#include "tests/attention/module_gradcheck.h"
#include "tests/testing.h"

namespace qkv::attention {
namespace {

using Inputs = std::vector<Tensor>;

// The core, written as loops over one (T_q, D) x (T_k, D) problem: the oracle.
std::vector<double> naive_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::vector<std::vector<bool>>& allowed) {
  const int64_t T_q = q.size(0), T_k = k.size(0), D = q.size(1), D_v = v.size(1);
  std::vector<double> out;
  for (int64_t i = 0; i < T_q; ++i) {
    std::vector<double> s(static_cast<size_t>(T_k));
    double m = -INFINITY;
    for (int64_t j = 0; j < T_k; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < D; ++d) dot += q.at({i, d}) * k.at({j, d});
      s[static_cast<size_t>(j)] =
          allowed[static_cast<size_t>(i)][static_cast<size_t>(j)] ? dot / std::sqrt(D) : -INFINITY;
      m = std::max(m, s[static_cast<size_t>(j)]);
    }
    double z = 0;
    for (double& x : s) z += (x = std::isinf(x) ? 0 : std::exp(x - m));
    for (int64_t e = 0; e < D_v; ++e) {
      double acc = 0;
      for (int64_t j = 0; j < T_k; ++j)
        if (z > 0) acc += s[static_cast<size_t>(j)] / z * v.at({j, e});
      out.push_back(acc);
    }
  }
  return out;
}

std::vector<std::vector<bool>> to_allowed(const Tensor& mask) {
  std::vector<std::vector<bool>> a;
  for (int64_t i = 0; i < mask.size(0); ++i) {
    a.emplace_back();
    for (int64_t j = 0; j < mask.size(1); ++j) a.back().push_back(mask.at<bool>({i, j}));
  }
  return a;
}

TEST(AttentionCore, EqualsTheNaiveLoopsWithAndWithoutMasks) {
  Generator g(1);
  for (auto [T_q, T_k] : std::vector<std::pair<int64_t, int64_t>>{{5, 5}, {3, 7}, {1, 9}, {6, 6}}) {
    const Tensor q = randn({T_q, 4}, &g), k = randn({T_k, 4}, &g), v = randn({T_k, 3}, &g);
    const Tensor none = ones({T_q, T_k}, Dtype::boolean);
    EXPECT_TRUE(testing::tensor_near(scaled_dot_product_attention(q, k, v).output, {T_q, 3},
                                     naive_attention(q, k, v, to_allowed(none)), 1e-5));
    AttentionOptions causal{.causal = true};
    EXPECT_TRUE(testing::tensor_near(scaled_dot_product_attention(q, k, v, causal).output, {T_q, 3},
                                     naive_attention(q, k, v, to_allowed(causal_mask(T_q, T_k))),
                                     1e-5))
        << T_q << "x" << T_k;
  }
}

TEST(AttentionCore, WeightRowsSumToOneAndScaleIsOneOverRootD) {
  Generator g(2);
  const Tensor q = randn({2, 3, 5, 8}, &g), k = randn({2, 3, 5, 8}, &g),
               v = randn({2, 3, 5, 8}, &g);
  const AttentionOutput a = scaled_dot_product_attention(q, k, v);
  EXPECT_TRUE(testing::tensor_near(raw::sum(a.weights, -1), ones({2, 3, 5}), 1e-6));
  AttentionOptions explicit_scale{.scale = 1 / std::sqrt(8.0)};
  EXPECT_TRUE(testing::tensor_near(scaled_dot_product_attention(q, k, v, explicit_scale).output,
                                   a.output, 1e-6));
}

// causal = true runs a fused kernel (scale, hide the future, softmax); the same mask given as
// a bool mask runs the general path. They must agree bit for bit, in value and gradient, for
// square, cached (T_q < T_k) and over-long (T_q > T_k, rows with no key) shapes, with the
// default scale and an explicit one.
TEST(AttentionCore, FusedCausalPathEqualsTheGeneralPathBitForBit) {
  Generator g(21);
  // Rows of 37 and 64 keys exercise the kernels' 16-wide lanes and their tails.
  for (auto [T_q, T_k] : std::vector<std::pair<int64_t, int64_t>>{
           {6, 6}, {3, 7}, {7, 4}, {37, 37}, {64, 64}, {20, 50}}) {
    for (bool explicit_scale : {false, true}) {
      const Tensor q0 = randn({2, T_q, 5}, &g), k0 = randn({2, T_k, 5}, &g),
                   v0 = randn({2, T_k, 3}, &g);
      const Tensor up = randn({2, T_q, 3}, &g);
      std::vector<std::vector<Tensor>> grads;
      std::vector<Tensor> outs;
      for (bool fused : {true, false}) {
        const Tensor q = requires_grad_(raw::clone(q0)), k = requires_grad_(raw::clone(k0)),
                     v = requires_grad_(raw::clone(v0));
        AttentionOptions o;
        if (explicit_scale) o.scale = 0.3;
        if (fused)
          o.causal = true;
        else
          o.mask = causal_mask(T_q, T_k);
        const AttentionOutput a = scaled_dot_product_attention(q, k, v, o);
        backward(sum(a.output * up));
        outs.push_back(a.output);
        grads.push_back({grad(q), grad(k), grad(v)});
      }
      EXPECT_TRUE(testing::tensor_equal(outs[0], outs[1])) << T_q << "x" << T_k;
      for (size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(testing::tensor_equal(grads[0][i], grads[1][i]))
            << T_q << "x" << T_k << " input " << i;
    }
  }
}

// Plain self-attention on (B, H, T, D) heads takes the fused multi-head kernel inside the core
// when fused paths are on. It runs the same GEMMs and softmax rows as the composed ops, so the
// output, the weights and the gradients of q, k and v agree bit for bit with fused paths off,
// causal or not, on any thread count, for heads read through a Linear's split (strided views)
// and for contiguous ones.
TEST(AttentionCore, FusedKernelEqualsTheComposedOpsBitForBit) {
  Generator g(22);
  struct Case {
    int64_t B, T, H, D;
  };
  // T = 3 and 5: one block of few rows; 37, 64: two row blocks for causal; 150: five; 400:
  // thirteen, and sums longer than the GEMM's KC block of 384.
  for (const Case c : {Case{2, 37, 3, 5}, Case{2, 64, 4, 8}, Case{1, 3, 2, 4}, Case{1, 5, 1, 6},
                       Case{1, 150, 2, 16}, Case{1, 400, 1, 8}}) {
    for (bool causal : {true, false}) {
      for (bool split : {true, false}) {
        const int64_t C = c.H * c.D;
        const Tensor qkv0 = randn({c.B, c.T, 3 * C}, &g), up = randn({c.B, c.H, c.T, c.D}, &g);
        // q, k, v as the heads of one (B, T, 3C) tensor (as split_heads makes them from a
        // Linear's output), or each contiguous (B, H, T, D).
        auto run = [&](bool fused, int threads) {
          const FusedGuard path(fused);
          const int saved = num_threads();
          set_num_threads(threads);
          const Tensor qkv = requires_grad_(raw::clone(qkv0));
          auto heads = [&](int64_t part) {
            const Tensor h = split_heads(narrow(qkv, -1, part * C, C), c.H);
            return split ? h : contiguous(h);
          };
          const AttentionOutput a =
              scaled_dot_product_attention(heads(0), heads(1), heads(2), {.causal = causal});
          EXPECT_EQ(grad_fn_name(a.output) == "FusedAttentionBackward0", fused);
          backward(a.output, up);
          set_num_threads(saved);
          return std::vector<Tensor>{a.output, a.weights, grad(qkv)};
        };
        const std::vector<Tensor> composed = run(false, 1);
        for (int threads : {1, 3}) {
          const std::vector<Tensor> fused = run(true, threads);
          for (size_t i = 0; i < 3; ++i)
            EXPECT_TRUE(testing::tensor_equal(fused[i], composed[i]))
                << "T " << c.T << " causal " << causal << " split " << split << " item " << i
                << " threads " << threads;
        }
      }
    }
  }
}

// The kernel's weights are for looking at: a gradient through them would need the composed
// ops, and the backward says so instead of leaving a term out.
TEST(AttentionCore, FusedKernelWeightsCarryNoGradient) {
  Generator g(23);
  const Tensor q = requires_grad_(randn({1, 2, 5, 4}, &g));
  const AttentionOutput a = scaled_dot_product_attention(q, q, q, {.causal = true});
  EXPECT_TRUE(testing::throws_error(
      [&] { backward(sum(a.weights)); },
      {"scaled_dot_product_attention", "fused", "set_fused_enabled(false)", "QKV_FUSED=0"}));
  {
    const FusedGuard plain(false);
    const AttentionOutput b = scaled_dot_product_attention(q, q, q, {.causal = true});
    backward(sum(b.weights * b.weights));  // the composed ops: a gradient through the weights
    EXPECT_TRUE(grad(q).defined());
  }
  EXPECT_TRUE(fused_enabled());
  EXPECT_TRUE(testing::throws_error(
      [] {
        raw::fused_attention_forward(zeros({2, 3, 10}), zeros({2, 3, 10}), zeros({2, 3, 10}), true);
      },
      {"fused_attention", "(B, H, T, D)", "(2, 3, 10)"}));
  EXPECT_TRUE(testing::throws_error(
      [] {
        raw::fused_attention_forward(zeros({1, 2, 3, 4}), zeros({1, 2, 3, 4}), zeros({1, 2, 4, 4}),
                                     true);
      },
      {"fused_attention", "one shape", "(1, 2, 4, 4)"}));
}

TEST(AttentionMasks, CausalPaddingAndSlidingWindowShapes) {
  EXPECT_EQ(causal_mask(3).to_vector<bool>(),
            (std::vector<bool>{true, false, false, true, true, false, true, true, true}));
  // Two queries after three cached keys: right-aligned, so the last query sees everything.
  EXPECT_EQ(causal_mask(2, 4).to_vector<bool>(),
            (std::vector<bool>{true, true, true, false, true, true, true, true}));
  const Tensor pad = padding_mask(from_vector(std::vector<int64_t>{2, 4}, {2}), 4);
  EXPECT_EQ(pad.shape(), (Shape{2, 1, 1, 4}));
  EXPECT_EQ(pad.to_vector<bool>(),
            (std::vector<bool>{true, true, false, false, true, true, true, true}));
  EXPECT_EQ(sliding_window_mask(4, 2).to_vector<bool>(),
            (std::vector<bool>{true, false, false, false, true, true, false, false,  //
                               false, true, true, false, false, false, true, true}));
  // A window as long as the sequence is plain causal attention.
  EXPECT_TRUE(testing::tensor_equal(sliding_window_mask(5, 5), causal_mask(5)));
  EXPECT_THROW(padding_mask(from_vector(std::vector<int64_t>{5}, {1}), 4), Error);
  EXPECT_THROW(sliding_window_mask(4, 0), Error);
}

TEST(AttentionCore, PaddingMaskHidesPaddedKeys) {
  Generator g(3);
  const Tensor q = randn({2, 1, 4, 3}, &g), k = randn({2, 1, 4, 3}, &g),
               v = randn({2, 1, 4, 2}, &g);
  AttentionOptions options{.mask = padding_mask(from_vector(std::vector<int64_t>{4, 2}, {2}), 4)};
  const AttentionOutput a = scaled_dot_product_attention(q, k, v, options);
  // Sequence 1 has 2 real tokens: its result equals attention over those two keys alone.
  const Tensor q1 = raw::select(raw::select(q, 0, 1), 0, 0);
  const Tensor k1 = raw::narrow(raw::select(raw::select(k, 0, 1), 0, 0), 0, 0, 2);
  const Tensor v1 = raw::narrow(raw::select(raw::select(v, 0, 1), 0, 0), 0, 0, 2);
  EXPECT_TRUE(testing::tensor_near(raw::select(raw::select(a.output, 0, 1), 0, 0),
                                   scaled_dot_product_attention(q1, k1, v1).output, 1e-6));
}

TEST(AttentionCore, AFullyMaskedRowGivesZerosNotNaNAndZeroGradient) {
  Generator g(4);
  const Tensor q = requires_grad_(randn({3, 4}, &g)), k = requires_grad_(randn({3, 4}, &g)),
               v = requires_grad_(randn({3, 2}, &g));
  // Query 1 may see nothing (think: a padded query position).
  AttentionOptions options{
      .mask = from_vector(
          std::vector<bool>{true, true, false, false, false, false, true, false, true}, {3, 3})};
  const AttentionOutput a = scaled_dot_product_attention(q, k, v, options);
  for (float x : a.output.to_vector<float>()) EXPECT_FALSE(std::isnan(x));
  EXPECT_TRUE(testing::tensor_equal(raw::select(a.output, 0, 1), zeros({2})));
  EXPECT_TRUE(testing::tensor_equal(raw::select(a.weights, 0, 1), zeros({3})));
  backward(sum(a.output * a.output) + sum(a.weights));
  EXPECT_TRUE(testing::tensor_equal(raw::select(grad(q), 0, 1), zeros({4})));
  for (const Tensor& t : {grad(q), grad(k), grad(v)})
    for (float x : t.to_vector<float>()) EXPECT_FALSE(std::isnan(x));
  // The same through an additive mask of -inf.
  options.mask = raw::masked_fill(zeros({3, 3}), raw::logical_not(options.mask), -INFINITY);
  const AttentionOutput b = scaled_dot_product_attention(q, k, v, options);
  EXPECT_TRUE(testing::tensor_equal(b.output, a.output));
}

// The two mask conventions (attention/core.h): attention's bool mask keeps where true, as
// causal_mask does; masked_fill hides where true. Handing attention the masked_fill-style mask
// (the upper triangle) is not silently close to right: each query then sees only its future,
// query 0's weights move off key 0, and the last query, with nothing left to see, gets zeros.
TEST(AttentionCore, AHideMaskWhereAKeepMaskBelongsChangesTheResultVisibly) {
  Generator g(12);
  const int64_t T = 5;
  const Tensor q = randn({T, 4}, &g), k = randn({T, 4}, &g), v = randn({T, 3}, &g);
  const Tensor keep = causal_mask(T), hide = raw::logical_not(keep);
  AttentionOptions right, wrong;
  right.mask = keep;
  wrong.mask = hide;
  const AttentionOutput a = scaled_dot_product_attention(q, k, v, right);
  const AttentionOutput b = scaled_dot_product_attention(q, k, v, wrong);
  // The keep mask is causal attention, and masked_fill with the hide mask is the same thing.
  AttentionOptions causal{.causal = true};
  EXPECT_TRUE(
      testing::tensor_equal(a.weights, scaled_dot_product_attention(q, k, v, causal).weights));
  const Tensor scores = raw::div(raw::matmul(q, raw::transpose(k, 0, 1)), 2.0f);  // sqrt(4)
  EXPECT_TRUE(testing::tensor_near(
      a.weights, raw::softmax(raw::masked_fill(scores, hide, -INFINITY), -1), 1e-6));
  // Given the hide mask, query 0 puts no weight on key 0 (it had all of it), and the last query
  // sees nothing: weights and output of zero.
  EXPECT_EQ(raw::select(a.weights, 0, 0).to_vector<float>()[0], 1.0f);
  EXPECT_EQ(raw::select(b.weights, 0, 0).to_vector<float>()[0], 0.0f);
  EXPECT_TRUE(testing::tensor_equal(raw::select(b.weights, 0, T - 1), zeros({T})));
  EXPECT_TRUE(testing::tensor_equal(raw::select(b.output, 0, T - 1), zeros({3})));
  double largest = 0;
  const std::vector<float> wa = a.weights.to_vector<float>(), wb = b.weights.to_vector<float>();
  for (size_t i = 0; i < wa.size(); ++i)
    largest = std::max(largest, std::fabs(double{wa[i]} - wb[i]));
  EXPECT_GT(largest, 0.5) << "the two conventions should give clearly different weights";
}

TEST(AttentionCore, BadShapesAreNamedErrors) {
  const Tensor q = randn({4, 3});
  EXPECT_THROW(scaled_dot_product_attention(q, randn({4, 2}), randn({4, 3})), Error);
  EXPECT_THROW(scaled_dot_product_attention(q, randn({4, 3}), randn({5, 3})), Error);
  EXPECT_THROW(scaled_dot_product_attention(randn({3}), q, q), Error);
  AttentionOptions bad_mask{.mask = ones({3, 3}, Dtype::boolean)};
  EXPECT_THROW(scaled_dot_product_attention(q, q, q, bad_mask), Error);
  EXPECT_THROW(MultiHeadAttention(10, 3), Error);
  try {
    MultiHeadAttention(10, 3);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("d_model (10) divisible by num_heads (3)"),
              std::string::npos);
  }
}

// ---- gradcheck every module ----------------------------------------------------------------

TEST(AttentionGradcheck, SimplifiedSelfAttention) {
  Generator g(5);
  SimplifiedSelfAttention m;
  Tensor x = randn({4, 3}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
}

TEST(AttentionGradcheck, SelfAttention) {
  Generator g(6);
  SelfAttention m(3, 2, 4, &g);
  Tensor x = randn({2, 5, 3}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
}

TEST(AttentionGradcheck, MultiHeadAttentionWrapper) {
  Generator g(7);
  MultiHeadAttentionWrapper m(3, 2, 1, 3, &g);
  Tensor x = randn({4, 3}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
}

TEST(AttentionGradcheck, MultiHeadAttentionCausal) {
  Generator g(8);
  MultiHeadAttention m(8, 2, {.causal = true}, &g);
  Tensor x = randn({2, 4, 8}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
}

TEST(AttentionGradcheck, CrossAttentionWithDifferentLengths) {
  Generator g(9);
  CrossAttention m(3, 2, 4, &g);
  Tensor x1 = randn({3, 3}, &g), x2 = randn({5, 3}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x1, x2); }, x1));
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x1, x2); }, x2));
}

TEST(AttentionGradcheck, CausalAttentionAllThreeMethods) {
  for (CausalMasking method : {CausalMasking::negative_infinity, CausalMasking::additive,
                               CausalMasking::multiply_and_renormalise}) {
    Generator g(10);
    CausalAttention m(3, 2, 4, method, 0.0, &g);
    Tensor x = randn({5, 3}, &g);
    EXPECT_TRUE(gradcheck_module(
        m, [&] { return m(x); }, x))
        << static_cast<int>(method);
  }
}

TEST(AttentionGradcheck, KarpathyHead) {
  Generator g(11);
  Head m(6, 4, 0.0, &g);
  Tensor x = randn({2, 5, 6}, &g);
  EXPECT_TRUE(gradcheck_module(
      m, [&] { return m(x); }, x));
}

// ---- variants that must agree --------------------------------------------------------------

// Gradients of every parameter and of x after backward(sum(out * upstream)).
std::vector<Tensor> grads_of(nn::Module& m, const Tensor& x, const Tensor& out,
                             const Tensor& upstream) {
  backward(sum(out * upstream));
  std::vector<Tensor> gs = {grad(x)};
  for (const Tensor& p : m.parameters()) gs.push_back(grad(p));
  return gs;
}

TEST(AttentionEquivalence, TheCausalMethodsAgreeInOutputAndGradient) {
  Generator g(12);
  const Tensor x0 = randn({2, 6, 3}, &g), upstream = randn({2, 6, 4}, &g);
  std::vector<Tensor> outputs;
  std::vector<std::vector<Tensor>> grads;
  for (CausalMasking method : {CausalMasking::negative_infinity, CausalMasking::additive,
                               CausalMasking::multiply_and_renormalise}) {
    manual_seed(123);
    CausalAttention m(3, 2, 4, method);
    const Tensor x = requires_grad_(raw::clone(x0));
    const Tensor out = m(x);
    outputs.push_back(out);
    grads.push_back(grads_of(m, x, out, upstream));
    // Every method's weights: zero above the diagonal, rows summing to 1.
    EXPECT_TRUE(testing::tensor_equal(raw::triu(m.attention_weights, 1), zeros({2, 6, 6})));
    EXPECT_TRUE(testing::tensor_near(raw::sum(m.attention_weights, -1), ones({2, 6}), 1e-6));
  }
  // -inf and the additive mask are the same arithmetic: bit-identical.
  EXPECT_TRUE(testing::tensor_equal(outputs[1], outputs[0]));
  // Multiply-and-renormalise rounds differently (a division by the row sum): equal to 1e-6.
  EXPECT_TRUE(testing::tensor_near(outputs[2], outputs[0], 1e-6, 1e-5));
  for (size_t i = 0; i < grads[0].size(); ++i) {
    EXPECT_TRUE(testing::tensor_equal(grads[1][i], grads[0][i])) << i;
    EXPECT_TRUE(testing::tensor_near(grads[2][i], grads[0][i], 1e-5, 1e-4)) << i;
  }
}

TEST(AttentionEquivalence, AOneHeadWrapperIsSelfAttention) {
  manual_seed(123);
  SelfAttention single(3, 2, 4);
  manual_seed(123);
  MultiHeadAttentionWrapper wrapper(3, 2, 4, 1);
  const Tensor x = randn({6, 3});
  EXPECT_TRUE(testing::tensor_equal(wrapper(x), single(x)));
}

TEST(AttentionEquivalence, FusedMultiHeadEqualsTheWrapperWithCopiedWeights) {
  const int64_t C = 8, H = 4, D = C / H, B = 2, T = 5;
  manual_seed(1);
  MultiHeadAttentionWrapper wrapper(C, D, D, H);
  MultiHeadAttention fused(C, H, {.bias = false});
  // Head h's W_query (C, D) is rows h*D..(h+1)*D of q.weight (out, in) = columns of W^T.
  std::vector<Tensor> wq, wk, wv;
  for (int64_t h = 0; h < H; ++h) {
    wq.push_back(raw::transpose(wrapper.head(h)->W_query, 0, 1));
    wk.push_back(raw::transpose(wrapper.head(h)->W_key, 0, 1));
    wv.push_back(raw::transpose(wrapper.head(h)->W_value, 0, 1));
  }
  nn::load_state_dict(fused, {{"q.weight", raw::cat(wq, 0)},
                              {"k.weight", raw::cat(wk, 0)},
                              {"v.weight", raw::cat(wv, 0)},
                              {"o.weight", eye(C)}});  // W_O = I: no mixing
  const Tensor x = randn({B, T, C});
  EXPECT_TRUE(testing::tensor_near(fused(x), wrapper(x), 1e-6));
  // Both hand back (B, H, T, T).
  EXPECT_TRUE(testing::tensor_near(fused.attention_weights, wrapper.attention_weights, 1e-6));
}

TEST(AttentionEquivalence, CrossAttentionOfXWithItselfIsSelfAttention) {
  manual_seed(123);
  SelfAttention self(3, 2, 4);
  manual_seed(123);
  CrossAttention cross(3, 2, 4);
  const Tensor x = randn({6, 3});
  EXPECT_TRUE(testing::tensor_equal(cross(x, x), self(x)));
  // Different lengths: one output per query token.
  EXPECT_EQ(cross(x, randn({8, 3})).shape(), (Shape{6, 4}));
}

// ---- the causal promise --------------------------------------------------------------------

TEST(AttentionCausal, ChangingTheFutureChangesNothingBeforeIt) {
  const int64_t T = 7, t = 3;
  Generator g(13);
  const Tensor x = randn({2, T, 8}, &g);
  Tensor x_changed = raw::clone(x);
  raw::copy_(raw::narrow(x_changed, 1, t + 1, T - t - 1), randn({2, T - t - 1, 8}, &g));
  manual_seed(5);
  MultiHeadAttention mha(8, 2, {.causal = true});
  manual_seed(5);
  CausalAttention causal(8, 4, 4);
  manual_seed(5);
  Head head(8, 4);
  std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> modules = {
      {"MultiHeadAttention", [&](const Tensor& in) { return mha(in); }},
      {"CausalAttention", [&](const Tensor& in) { return causal(in); }},
      {"Head", [&](const Tensor& in) { return head(in); }},
  };
  for (const auto& [name, f] : modules) {
    const Tensor a = f(x), b = f(x_changed);
    EXPECT_TRUE(testing::tensor_equal(raw::narrow(a, 1, 0, t + 1), raw::narrow(b, 1, 0, t + 1)))
        << name;
    EXPECT_FALSE(testing::tensor_equal(raw::narrow(a, 1, t + 1, T - t - 1),
                                       raw::narrow(b, 1, t + 1, T - t - 1)))
        << name;
    // The gradient of outputs 0..t with respect to tokens after t is exactly zero.
    const Tensor xg = requires_grad_(raw::clone(x));
    backward(sum(narrow(f(xg), 1, 0, t + 1)));
    EXPECT_TRUE(
        testing::tensor_equal(raw::narrow(grad(xg), 1, t + 1, T - t - 1), zeros({2, T - t - 1, 8})))
        << name;
    EXPECT_FALSE(testing::tensor_equal(raw::narrow(grad(xg), 1, 0, t + 1), zeros({2, t + 1, 8})))
        << name;
  }
}

TEST(AttentionModules, ParameterNamesAndDrawOrder) {
  manual_seed(123);
  SelfAttention sa(3, 2, 4);
  manual_seed(123);
  const Tensor wq = rand({3, 2}), wk = rand({3, 2}), wv = rand({3, 4});
  EXPECT_TRUE(testing::tensor_equal(sa.W_query, wq));
  EXPECT_TRUE(testing::tensor_equal(sa.W_key, wk));
  EXPECT_TRUE(testing::tensor_equal(sa.W_value, wv));
  MultiHeadAttention mha(8, 2);
  std::vector<std::string> names;
  for (const auto& [n, _] : mha.named_parameters()) names.push_back(n);
  EXPECT_EQ(names, (std::vector<std::string>{"q.weight", "q.bias", "k.weight", "k.bias", "v.weight",
                                             "v.bias", "o.weight", "o.bias"}));
  MultiHeadAttentionWrapper w(3, 2, 1, 2);
  EXPECT_EQ(w.named_parameters()[3].first, "heads.1.W_query");
  Head h(4, 2);
  EXPECT_EQ(h.named_parameters()[0].first, "key.weight");
}

TEST(AttentionModules, DropoutOnlyInTraining) {
  Generator g(14);
  MultiHeadAttention m(8, 2, {.causal = true, .dropout = 0.5}, &g);
  const Tensor x = randn({1, 6, 8}, &g);
  m.eval();
  const Tensor a = m(x), b = m(x);
  EXPECT_TRUE(testing::tensor_equal(a, b));
  const std::vector<float> eval_weights = m.attention_weights.to_vector<float>();
  m.train();
  const Tensor c = m(x);
  EXPECT_FALSE(testing::tensor_equal(c, a));
  // Each weight is dropped (0) or kept and scaled by 1 / (1 - 0.5) = 2.
  const std::vector<float> train_weights = m.attention_weights.to_vector<float>();
  int dropped = 0;
  for (size_t i = 0; i < eval_weights.size(); ++i) {
    EXPECT_TRUE(train_weights[i] == 0.0f || train_weights[i] == 2.0f * eval_weights[i]) << i;
    dropped += train_weights[i] == 0.0f && eval_weights[i] != 0.0f;
  }
  EXPECT_GT(dropped, 0);
}

}  // namespace
}  // namespace qkv::attention
