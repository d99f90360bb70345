// What NaN and infinity do, op by op: the policy README.md states ("NaN and infinity"), held
// here. qkv follows IEEE arithmetic and PyTorch: a NaN spreads to every result computed from
// it and stays inside the row (or the sum) it entered, -inf in a softmax is a weight of exactly
// 0, and nothing raises an error for a value that is not finite. The one place qkv differs
// from PyTorch on purpose: an attention row whose every key is masked gives zeros, not NaN
// (attention/core.h). The expected values are PyTorch 1.13's for the same inputs.
#include <cmath>
#include <vector>

#include "attention/all.h"
#include "tests/testing.h"

namespace qkv {
namespace {

using attention::AttentionOptions;
using attention::scaled_dot_product_attention;

const float kNan = NAN, kInf = INFINITY;

Tensor row(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return from_vector(std::move(v), {n});
}
Tensor rows(std::vector<float> v, int64_t r) {
  const auto n = static_cast<int64_t>(v.size());
  return from_vector(std::move(v), {r, n / r});
}
bool all_nan(const Tensor& t) {
  for (const float x : t.to_vector<float>())
    if (!std::isnan(x)) return false;
  return true;
}
bool all_finite(const Tensor& t) {
  for (const float x : t.to_vector<float>())
    if (!std::isfinite(x)) return false;
  return true;
}

TEST(NanPolicy, SoftmaxSpreadsNanAndInfinityOverTheirRowOnly) {
  // A NaN or a +inf anywhere in a row makes the whole row NaN (+inf - +inf is NaN); the other
  // rows are untouched.
  for (const float bad : {kNan, kInf}) {
    const Tensor s = softmax(rows({1, bad, 2, 1, 2, 3}, 2), 1);
    EXPECT_TRUE(all_nan(raw::select(s, 0, 0)));
    EXPECT_TRUE(testing::tensor_equal(raw::select(s, 0, 1), softmax(row({1, 2, 3}), 0)));
  }
}

TEST(NanPolicy, MinusInfinityIsAWeightOfExactlyZero) {
  const Tensor s = softmax(row({1, -kInf, 2}), 0);
  const std::vector<float> v = s.to_vector<float>();
  EXPECT_EQ(v[1], 0.0f);
  const std::vector<float> without = softmax(row({1, 2}), 0).to_vector<float>();
  EXPECT_EQ(v[0], without[0]);
  EXPECT_EQ(v[2], without[1]);
  const std::vector<float> log_v = log_softmax(row({1, -kInf, 2}), 0).to_vector<float>();
  EXPECT_TRUE(std::isinf(log_v[1]) && log_v[1] < 0);
  EXPECT_NEAR(log_v[0], -1.3133f, 1e-4);  // PyTorch: tensor([-1.3133, -inf, -0.3133])
  // Every entry -inf: 0 / 0, NaN, in softmax and log_softmax alike (as PyTorch).
  EXPECT_TRUE(all_nan(softmax(row({-kInf, -kInf}), 0)));
  EXPECT_TRUE(all_nan(log_softmax(row({-kInf, -kInf}), 0)));
}

TEST(NanPolicy, LayerNormGivesNanToTheRowWithNanOrInfinity) {
  nn::LayerNorm ln(3);
  for (const float bad : {kNan, kInf, -kInf}) {
    const Tensor y = ln(rows({1, bad, 2, 1, 2, 3}, 2));
    EXPECT_TRUE(all_nan(raw::select(y, 0, 0)));
    // PyTorch: [-1.2247, 0.0000, 1.2247] for the clean row.
    const std::vector<float> clean = raw::select(y, 0, 1).to_vector<float>();
    EXPECT_NEAR(clean[0], -1.2247f, 1e-4);
    EXPECT_EQ(clean[1], 0.0f);
    EXPECT_NEAR(clean[2], 1.2247f, 1e-4);
  }
}

TEST(NanPolicy, CrossEntropyOfNonFiniteLogits) {
  const float log_1_plus_e = static_cast<float>(std::log1p(std::exp(1.0)));  // CE([1, 2], 0)
  // NaN in a row that counts: the loss is NaN.
  EXPECT_TRUE(std::isnan(cross_entropy(rows({1, kNan, 2}, 1), tensor({0})).item<float>()));
  // The same row ignored (target -100): not counted at all.
  EXPECT_NEAR(cross_entropy(rows({1, kNan, 2, 1, 2, 3}, 2), tensor({-100, 0})).item<float>(),
              2.4076f, 1e-4);
  // -inf on another class: that class has probability 0 and the loss is the one without it.
  EXPECT_NEAR(cross_entropy(rows({1, -kInf, 2}, 1), tensor({0})).item<float>(), log_1_plus_e,
              1e-6);
  // -inf on the target: probability 0, loss +inf. +inf anywhere: NaN.
  const float target_minus_inf = cross_entropy(rows({1, -kInf, 2}, 1), tensor({1})).item<float>();
  EXPECT_TRUE(std::isinf(target_minus_inf) && target_minus_inf > 0);
  EXPECT_TRUE(std::isnan(cross_entropy(rows({1, kInf, 2}, 1), tensor({1})).item<float>()));
}

// Causal attention with a NaN in the last position's key, then in its value, on every path:
// composed ops, the fused kernel, flash, and an explicit mask. A key's NaN makes a score that
// the mask replaces with -inf before softmax, so earlier rows never see it. A value's NaN is
// multiplied by the weight 0 that earlier rows give it, and 0 x NaN is NaN: it reaches every
// row, as it does in PyTorch's composed attention.
TEST(NanPolicy, AttentionKeepsAFutureKeysNanOutOfEarlierRowsButNotAFutureValues) {
  Generator g(0);
  const Tensor q = randn({1, 1, 3, 2}, &g), k = randn({1, 1, 3, 2}, &g),
               v = randn({1, 1, 3, 2}, &g);
  const auto poisoned = [](const Tensor& t) {  // t with NaN at position 2, feature 0
    Tensor c = raw::contiguous(t);
    std::vector<float> x = c.to_vector<float>();
    x[4] = kNan;
    return from_vector(std::move(x), t.shape());
  };
  const bool was = fused_enabled();
  for (const bool fused : {false, true}) {
    set_fused_enabled(fused);
    const std::vector<AttentionOptions> paths = {
        {.causal = true}, {.causal = true, .flash = true}, {.mask = attention::causal_mask(3)}};
    for (const AttentionOptions& o : paths) {
      const Tensor clean = scaled_dot_product_attention(q, k, v, o).output;
      const Tensor key_nan = scaled_dot_product_attention(q, poisoned(k), v, o).output;
      EXPECT_TRUE(testing::tensor_equal(raw::narrow(key_nan, 2, 0, 2), raw::narrow(clean, 2, 0, 2)))
          << "fused " << fused;
      EXPECT_TRUE(all_nan(raw::narrow(key_nan, 2, 2, 1)));
      const Tensor value_nan = scaled_dot_product_attention(q, k, poisoned(v), o).output;
      EXPECT_TRUE(all_nan(raw::narrow(value_nan, 3, 0, 1))) << "fused " << fused;
      EXPECT_TRUE(testing::tensor_equal(raw::narrow(value_nan, 3, 1, 1), raw::narrow(clean, 3, 1, 1)));
      EXPECT_TRUE(all_finite(clean));
    }
  }
  set_fused_enabled(was);
}

}  // namespace
}  // namespace qkv
