// test_random.cpp: qkv draws what PyTorch's CPU generator draws (values from
// tools/gen_torch_reference.py, PyTorch 1.13), on both sides of the 16-element switch.
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing.h"

namespace qkv {
namespace {
#include "tests/tensor/torch_reference.inc"

std::vector<double> to_double(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// Uniform draws are exact: a 24-bit integer times 2^-24, then one multiply and one add.
TEST(Random, RandAndUniformEqualTorchBitForBit) {
  int checked = 0;
  for (const RandCase& c : kTorchRandCases) {
    std::string kind = c.kind;
    if (kind == "randn") continue;
    manual_seed(c.seed);
    Tensor t = Tensor::empty(c.shape);
    if (kind == "rand")
      t = rand(c.shape);
    else if (kind == "uniform_-0.5_0.5")
      uniform_(t, -0.5, 0.5);
    else
      uniform_(t, -0.125, 0.125);
    EXPECT_TRUE(testing::tensor_near(t, c.shape, to_double(c.values), 0.0))
        << kind << " seed " << c.seed << " shape " << shape_str(c.shape);
    ++checked;
  }
  EXPECT_EQ(checked, 6 * 11);
}

// Normal draws go through log, sqrt, cos and sin: below 16 elements in double with the C
// library's functions, from 16 on in float with the avx_mathfun polynomials torch's AVX2 path
// uses, including the multiply-adds torch's build fuses (ported in random.cpp with explicit
// std::fma and no other fusing). Both match to the last bit, with or without -march=native
// (checked over 500,000 draws with GCC and Clang).
constexpr double kRandnTol = 0.0;
TEST(Random, RandnEqualsTorchBitForBitOnBothSidesOf16Elements) {
  int checked = 0;
  for (const RandCase& c : kTorchRandCases) {
    if (std::string(c.kind) != "randn") continue;
    manual_seed(c.seed);
    EXPECT_TRUE(
        testing::tensor_near(randn(c.shape), c.shape, to_double(c.values), kRandnTol, kRandnTol))
        << "randn seed " << c.seed << " shape " << shape_str(c.shape);
    ++checked;
  }
  EXPECT_EQ(checked, 6 * 10);
}

TEST(Random, TheDocumentedFacts) {
  manual_seed(42);
  EXPECT_TRUE(testing::tensor_near(randn({5}), {5},
                                   {0.336690, 0.128809, 0.234462, 0.230333, -1.122856}, 1e-6));
  manual_seed(123);
  Tensor emb = randn({50000, 3});
  EXPECT_TRUE(testing::tensor_near(raw::select(emb, 0, 0), {3}, {0.3374, -0.1778, -0.3035}, 1e-4));
}

TEST(Random, SecondNormalIsCachedAcrossCalls) {
  manual_seed(7);
  Tensor a = randn({3}), b = randn({3}), c = randn({1});
  EXPECT_TRUE(testing::tensor_near(raw::cat({a, b, c}), {7}, to_double(kTorchRandnCached), 0.0));
}

TEST(Random, ReseedForgetsTheCachedNormal) {
  manual_seed(7);
  Tensor first = randn({1});
  manual_seed(7);
  EXPECT_TRUE(testing::tensor_equal(randn({1}), first));
}

TEST(Random, NonContiguousNormalUsesTheElementwisePath) {
  manual_seed(7);
  Tensor t = raw::transpose(Tensor::empty({4, 5}), 0, 1);
  normal_(t);
  EXPECT_TRUE(testing::tensor_near(t, {5, 4}, to_double(kTorchNormalTransposed), 0.0));
}

TEST(Random, RandintEqualsTorch) {
  manual_seed(123);
  EXPECT_EQ(randint(50000, {7}).to_vector<int64_t>(), kTorchRandint50000);
  manual_seed(123);
  EXPECT_EQ(randint(-3, 4, {10}).to_vector<int64_t>(), kTorchRandintNeg);
  Generator g(1337);
  Tensor r = randint(1000, {16}, &g);
  EXPECT_EQ(r.dtype(), Dtype::int64);
  EXPECT_EQ(r.to_vector<int64_t>(), kTorchRandintGen);
  Generator big(uint64_t{1} << 40 | 3);
  EXPECT_EQ(randint(0, int64_t{1} << 33, {4}, &big).to_vector<int64_t>(), kTorchRandintBig);
}

TEST(Random, OwnGeneratorLeavesTheDefaultAlone) {
  manual_seed(5);
  Tensor expected = rand({4});
  manual_seed(5);
  Generator other(99);
  rand({10}, &other);
  EXPECT_TRUE(testing::tensor_equal(rand({4}), expected));
}

TEST(Random, StateRoundTripsIncludingTheCachedNormal) {
  Generator g(11);
  randn({1}, &g);  // leaves a cached normal behind
  const std::string saved = g.state();
  Tensor expected = raw::cat({randn({3}, &g), rand({17}, &g)});
  Generator h(0);
  h.set_state(saved);
  EXPECT_TRUE(testing::tensor_equal(raw::cat({randn({3}, &h), rand({17}, &h)}), expected));
  EXPECT_TRUE(testing::throws_error([&] { h.set_state("not a state"); }, {"Generator::set_state"}));
}

// A state that Generator::state() could not have written is refused whole, and the generator
// keeps its own: trailing words, a negative or overflowing seed, a normal that is not finite, an
// engine word of 2^32 or more, a missing word.
TEST(Random, AStateThatIsNotOneIsRefusedAndChangesNothing) {
  Generator g(11);
  randn({1}, &g);
  const std::string good = g.state();
  std::vector<std::string> words;
  {
    std::istringstream is(good);
    for (std::string w; is >> w;) words.push_back(w);
  }
  const auto with = [&](size_t i, const std::string& w) {
    std::vector<std::string> v = words;
    v[i] = w;
    std::string s;
    for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
    return s;
  };
  const std::vector<std::string> bad = {
      good + " trailing junk",
      with(0, "-1"),
      with(0, "99999999999999999999"),
      with(1, "2"),
      with(2, "nan"),
      with(2, "1e999"),
      with(2, "0x1p3"),
      with(3, "4294967296"),
      with(3, "18446744073709551615"),
      with(words.size() - 1, "-1"),
      good.substr(0, good.rfind(' ')),
  };
  Generator h(3);
  const std::string before = h.state();
  for (const std::string& s : bad) {
    EXPECT_TRUE(testing::throws_error([&] { h.set_state(s); }, {"Generator::set_state"}))
        << s.substr(0, 80);
    EXPECT_EQ(h.state(), before);
  }
  h.set_state(with(0, "18446744073709551615"));  // the largest seed is a seed
  EXPECT_EQ(h.initial_seed(), 18446744073709551615ull);
}

// randn's multiply-adds round once, as torch's FMA instructions do, on every platform: where
// the target has no FMA instruction they are computed from doubles (fma_from_doubles).
//
// First, a triple whose exact value lies just below a halfway point between two floats, where
// rounding the double sum to float (rounding twice) goes the wrong way: a b = 2^-24 - 2^-60
// and c = 1 + 2^-23, so a b + c = 1 + 2^-23 + 2^-24 - 2^-60. Rounded once that is 1 + 2^-23.
// In a double it is the halfway point 1 + 2^-23 + 2^-24 itself, which rounds to the even
// neighbour, 1 + 2^-22. Then, where the target has an FMA instruction
// (QKV_HAS_FMA_INSTRUCTION, tensor/random.h), random triples and triples whose sum nearly
// cancels (where the product's last bits decide), against the instruction.
// Every aarch64 CPU has the instruction, whichever compiler builds for it (Clang defines no
// __FP_FAST_FMAF there; randn then took the slower double arithmetic, and this test skipped
// its comparison).
#if defined(__aarch64__)
static_assert(QKV_HAS_FMA_INSTRUCTION == 1, "aarch64 has a fused multiply-add instruction");
#endif
TEST(Random, FmaFromDoublesRoundsOnceLikeTheInstruction) {
  const float a = 1.0f + 0x1p-18f, b = (1.0f - 0x1p-18f) * 0x1p-24f, c = 1.0f + 0x1p-23f;
  const volatile double twice = static_cast<double>(a) * b + c;  // volatile: no fusing
  EXPECT_EQ(static_cast<float>(twice), 1.0f + 0x1p-22f) << "the case should round twice wrongly";
  EXPECT_EQ(detail::fma_from_doubles(a, b, c), 1.0f + 0x1p-23f);
#if QKV_HAS_FMA_INSTRUCTION
  Generator g(11);
  int64_t mismatches = 0, first = -1;
  for (int64_t i = 0; i < 200000; ++i) {
    const float x = g.uniform_float() * 4 - 2, y = g.uniform_float() * 4 - 2;
    const float z = i % 2 ? g.uniform_float() * 4 - 2 : -(x * y) * (1 + 0x1p-20f * (i % 7));
    if (detail::fma_from_doubles(x, y, z) != std::fma(x, y, z)) {
      if (first < 0) first = i;
      ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << "first at triple " << first;
#endif
}

}  // namespace
}  // namespace qkv
