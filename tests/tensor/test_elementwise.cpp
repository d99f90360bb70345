// test_elementwise.cpp: every elementwise op against a naive oracle that broadcasts by index
// arithmetic (no views, no strides), over a table of shapes with and without broadcasting.
#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>

#include "tensor/bit_cast.h"
#include "tensor/simd/exp.h"
#include "tests/testing.h"

namespace qkv {
namespace {

// The oracle: out[idx] = f(a[idx mapped into a], b[idx mapped into b]), shapes aligned right.
std::vector<double> oracle(const Tensor& a, const Tensor& b, const Shape& out_shape,
                           const std::function<double(double, double)>& f) {
  const std::vector<double> va = a.to_vector<double>(), vb = b.to_vector<double>();
  const int64_t n = shape_numel(out_shape), rank = static_cast<int64_t>(out_shape.size());
  std::vector<double> out;
  for (int64_t flat = 0; flat < n; ++flat) {
    std::vector<int64_t> idx(rank);
    for (int64_t d = rank - 1, rem = flat; d >= 0; --d) {
      idx[d] = rem % out_shape[d];
      rem /= out_shape[d];
    }
    auto pick = [&](const Shape& s, const std::vector<double>& v) {
      int64_t off = 0;
      const int64_t lead = rank - static_cast<int64_t>(s.size());
      for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d)
        off = off * s[d] + (s[d] == 1 ? 0 : idx[d + lead]);
      return v[off];
    };
    out.push_back(f(pick(a.shape(), va), pick(b.shape(), vb)));
  }
  return out;
}

struct ShapePair {
  Shape a, b, out;
};
const std::vector<ShapePair> kShapes = {
    {{5}, {5}, {5}},                 // same shape
    {{2, 3}, {3}, {2, 3}},           // a row against every row
    {{2, 3}, {2, 1}, {2, 3}},        // a column against every column
    {{4, 1, 3}, {2, 3}, {4, 2, 3}},  // both stretch
    {{3, 1}, {1, 4}, {3, 4}},        // outer-product shape
    {{}, {2, 2}, {2, 2}},            // 0-d scalar
    {{2, 1, 4, 1}, {3, 1, 5}, {2, 3, 4, 5}},
    {{7, 33}, {7, 33}, {7, 33}},  // awkward sizes
};

struct BinaryOp {
  const char* name;
  Tensor (*op)(const Tensor&, const Tensor&);
  std::function<double(double, double)> f;
  bool positive_a;  // pow wants a positive base
};
const std::vector<BinaryOp> kBinary = {
    {"add", raw::add, [](double x, double y) { return x + y; }, false},
    {"sub", raw::sub, [](double x, double y) { return x - y; }, false},
    {"mul", raw::mul, [](double x, double y) { return x * y; }, false},
    {"div", raw::div, [](double x, double y) { return x / y; }, false},
    {"pow", raw::pow, [](double x, double y) { return std::pow(x, y); }, true},
    {"maximum", raw::maximum, [](double x, double y) { return std::max(x, y); }, false},
    {"minimum", raw::minimum, [](double x, double y) { return std::min(x, y); }, false},
};

class Binary : public ::testing::TestWithParam<std::tuple<BinaryOp, ShapePair>> {};

TEST_P(Binary, MatchesTheBroadcastingOracle) {
  const auto& [op, shapes] = GetParam();
  Generator g(3);
  Tensor a = raw::add(rand(shapes.a, &g), op.positive_a ? 0.5f : -0.5f);
  Tensor b = raw::add(rand(shapes.b, &g), 0.25f);  // away from 0 for div
  Tensor out = op.op(a, b);
  EXPECT_TRUE(testing::tensor_near(out, shapes.out, oracle(a, b, shapes.out, op.f), 1e-6, 1e-6))
      << op.name << " " << shape_str(shapes.a) << " with " << shape_str(shapes.b);
  // The same through non-contiguous operands: a transposed copy transposed back.
  if (a.dim() == 2) {
    Tensor at = raw::transpose(raw::contiguous(raw::transpose(a, 0, 1)), 0, 1);
    EXPECT_TRUE(testing::tensor_equal(op.op(at, b), out)) << op.name << " strided";
  }
}

INSTANTIATE_TEST_SUITE_P(OpsTimesShapes, Binary,
                         ::testing::Combine(::testing::ValuesIn(kBinary),
                                            ::testing::ValuesIn(kShapes)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::to_string(info.index);
                         });

struct UnaryOp {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> f;
};
const std::vector<UnaryOp> kUnary = {
    {"neg", raw::neg, [](double x) { return -x; }},
    {"exp", raw::exp, [](double x) { return std::exp(x); }},
    {"log", [](const Tensor& t) { return raw::log(raw::abs(t)); },
     [](double x) { return std::log(std::fabs(x)); }},
    {"sqrt", [](const Tensor& t) { return raw::sqrt(raw::abs(t)); },
     [](double x) { return std::sqrt(std::fabs(x)); }},
    {"abs", raw::abs, [](double x) { return std::fabs(x); }},
    {"tanh", raw::tanh, [](double x) { return std::tanh(x); }},
    {"sigmoid", raw::sigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
    {"relu", raw::relu, [](double x) { return x > 0 ? x : 0.0; }},
    {"gelu", [](const Tensor& t) { return raw::gelu(t); },
     [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
    {"gelu_tanh", [](const Tensor& t) { return raw::gelu(t, GeluApproximation::tanh); },
     [](double x) {
       return 0.5 * x *
              (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
     }},
    {"pow3", [](const Tensor& t) { return raw::pow(t, 3.0f); }, [](double x) { return x * x * x; }},
    {"square", [](const Tensor& t) { return raw::pow(t, 2.0f); }, [](double x) { return x * x; }},
    {"clamp", [](const Tensor& t) { return raw::clamp(t, -0.5f, 1.0f); },
     [](double x) { return std::clamp(x, -0.5, 1.0); }},
    {"add_scalar", [](const Tensor& t) { return raw::add(t, 2.0f); },
     [](double x) { return x + 2.0; }},
    {"rsub_scalar", [](const Tensor& t) { return raw::sub(1.0f, t); },
     [](double x) { return 1.0 - x; }},
    {"div_by_scalar", [](const Tensor& t) { return raw::div(t, 4.0f); },
     [](double x) { return x / 4.0; }},
};

class Unary : public ::testing::TestWithParam<UnaryOp> {};

TEST_P(Unary, MatchesTheScalarFormula) {
  const UnaryOp& op = GetParam();
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{7}, Shape{3, 33}}) {
    Generator g(17);
    Tensor x = raw::mul(randn(shape, &g), 2.0f);
    std::vector<double> expected;
    for (double v : x.to_vector<double>()) expected.push_back(op.f(v));
    EXPECT_TRUE(testing::tensor_near(op.op(x), shape, expected, 1e-5, 1e-5))
        << op.name << " " << shape_str(shape);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Unary, ::testing::ValuesIn(kUnary),
                         [](const auto& info) { return std::string(info.param.name); });

// detail::vector_tanh (GELU's tanh form runs on it) against the C library's tanh in double,
// at about a million floats from 0 to 11 (every 997th bit pattern) and their negatives, where
// it switches from its polynomial to its exponential (0.625) and where it reaches 1: within 2
// ulp of the float nearest the exact value. Then the edges: signed zeros, infinities, NaN.
TEST(Elementwise, VectorTanhIsWithinTwoUlpOfTanh) {
  double worst_ulps = 0, worst_x = 0;
  for (uint32_t bits = 0; bits < qkv::bit_cast<uint32_t>(11.0f); bits += 997)
    for (float x : {qkv::bit_cast<float>(bits), -qkv::bit_cast<float>(bits)}) {
      const double exact = std::tanh(static_cast<double>(x));
      const float nearest = static_cast<float>(std::fabs(exact));
      const double ulp = nearest > 0 ? std::nextafter(nearest, 2.0f) - nearest : 1e-45;
      const double ulps = std::fabs(detail::vector_tanh(x) - exact) / ulp;
      if (ulps > worst_ulps) worst_ulps = ulps, worst_x = x;
    }
  EXPECT_LE(worst_ulps, 2.0) << "at x = " << worst_x;
  for (float x : {0.625f, std::nextafter(0.625f, 0.0f), 9.0f, 50.0f})
    EXPECT_NEAR(detail::vector_tanh(x), std::tanh(x), 2e-7f) << x;
  EXPECT_EQ(qkv::bit_cast<uint32_t>(detail::vector_tanh(-0.0f)), qkv::bit_cast<uint32_t>(-0.0f));
  EXPECT_EQ(detail::vector_tanh(0.0f), 0.0f);
  EXPECT_EQ(detail::vector_tanh(INFINITY), 1.0f);
  EXPECT_EQ(detail::vector_tanh(-INFINITY), -1.0f);
  EXPECT_TRUE(std::isnan(detail::vector_tanh(NAN)));
}

// The fast exponentials (detail::exp_into, intrinsics.h's switch) give the plain loop's bits: over
// every 131st bit pattern of a float (33 million, NaNs and infinities among them), then the
// edges of vector_exp's clamps and of its cut to 0, and rows of 1 to 40 (the masked tail).
// Compared as bits: a NaN in gives the same NaN out.
std::vector<uint32_t> exp_edges() {
  std::vector<uint32_t> v;
  for (float x : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 88.0f, -88.0f, -87.0f, 87.0f, 88.7f,
                  -87.3f, -103.0f, 1e-45f, -1e-45f, 1.17549435e-38f})
    for (int d = -3; d <= 3; ++d) v.push_back(qkv::bit_cast<uint32_t>(x) + d);
  return v;
}
::testing::AssertionResult exp_into_matches(const std::vector<float>& x) {
  std::vector<float> fast(x.size()), plain(x.size());
  const auto arg = [&](int64_t i) { return x[static_cast<size_t>(i)]; };
  {
    IntrinsicsGuard on(true);
    detail::exp_into(fast.data(), static_cast<int64_t>(x.size()), arg);
  }
  {
    IntrinsicsGuard off(false);
    detail::exp_into(plain.data(), static_cast<int64_t>(x.size()), arg);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    if (qkv::bit_cast<uint32_t>(plain[i]) != qkv::bit_cast<uint32_t>(detail::vector_exp(x[i])))
      return ::testing::AssertionFailure() << "the plain loop is not vector_exp at " << x[i];
    if (qkv::bit_cast<uint32_t>(fast[i]) != qkv::bit_cast<uint32_t>(plain[i]))
      return ::testing::AssertionFailure() << "exp of " << std::hexfloat << x[i] << ": " << fast[i]
                                           << " fast, " << plain[i] << " plain";
  }
  return ::testing::AssertionSuccess();
}
TEST(Elementwise, FastExpIsVectorExpBitForBit) {
  std::vector<float> x;
  x.reserve(size_t{1} << 20);
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 131) {
    x.push_back(qkv::bit_cast<float>(static_cast<uint32_t>(bits)));
    if (x.size() == x.capacity()) {
      ASSERT_TRUE(exp_into_matches(x));
      x.clear();
    }
  }
  for (uint32_t b : exp_edges()) x.push_back(qkv::bit_cast<float>(b));
  ASSERT_TRUE(exp_into_matches(x));
  for (size_t n = 1; n <= 40; ++n)
    EXPECT_TRUE(
        exp_into_matches(std::vector<float>(x.end() - static_cast<std::ptrdiff_t>(n), x.end())));
}

// GELU's forward with its slope takes its exponentials a block at a time through exp_into:
// on or off, and against raw::gelu and raw::gelu_derivative (the formula element by element),
// bit for bit over every 4099th float from -16 to 16 (parallel chunks, blocks and tails).
TEST(Elementwise, GeluWithSlopeIsTheSameWithTheFastExp) {
  std::vector<float> v;
  for (uint32_t bits = 0; bits < qkv::bit_cast<uint32_t>(16.0f); bits += 4099) {
    v.push_back(qkv::bit_cast<float>(bits));
    v.push_back(-qkv::bit_cast<float>(bits));
  }
  for (uint32_t b : exp_edges()) v.push_back(qkv::bit_cast<float>(b));
  const Tensor x = from_vector(v, {static_cast<int64_t>(v.size())});
  const raw::GeluWithSlope fast = raw::gelu_with_slope(x, GeluApproximation::none);
  raw::GeluWithSlope plain;
  {
    IntrinsicsGuard off(false);
    plain = raw::gelu_with_slope(x, GeluApproximation::none);
  }
  const auto same_bits = [](const Tensor& a, const Tensor& b) {
    const float *pa = a.data_ptr(), *pb = b.data_ptr();
    for (int64_t i = 0; i < a.numel(); ++i)
      if (qkv::bit_cast<uint32_t>(pa[i]) != qkv::bit_cast<uint32_t>(pb[i]) &&
          !(std::isnan(pa[i]) && std::isnan(pb[i])))
        return ::testing::AssertionFailure() << "element " << i << ": " << pa[i] << " vs " << pb[i];
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(same_bits(fast.out, plain.out));
  EXPECT_TRUE(same_bits(fast.slope, plain.slope));
  EXPECT_TRUE(same_bits(fast.out, raw::gelu(x)));
  EXPECT_TRUE(same_bits(fast.slope, raw::gelu_derivative(x)));
}

// Softmax rows take their exponentials through exp_into too: the same bits on or off, for rows
// of 1 to 70 keys (the lengths 16 to 64 that attention's rows are compiled for among them),
// masked causal rows, and log-softmax.
TEST(Elementwise, SoftmaxIsTheSameWithTheFastExp) {
  Generator g(31);
  for (int64_t n = 1; n <= 70; ++n) {
    const Tensor x = raw::mul(randn({5, n}, &g), 6.0f);
    Tensor fast[3], plain[3];
    for (bool on : {true, false}) {
      IntrinsicsGuard use(on);
      Tensor* out = on ? fast : plain;
      out[0] = raw::softmax(x, -1);
      out[1] = raw::log_softmax(x, -1);
      const Tensor rows = raw::contiguous(raw::expand(raw::reshape(x, {5, 1, n}), {5, n, n}));
      out[2] = raw::causal_softmax(rows, 1.0f, 1.7f, 0);
    }
    for (int k = 0; k < 3; ++k)
      EXPECT_TRUE(testing::tensor_equal(fast[k], plain[k])) << n << " " << k;
  }
}

TEST(Elementwise, GeluMatchesTorchValues) {
  // torch.nn.functional.gelu(torch.tensor([-3., -1., -0.5, 0., 0.5, 1., 3.]))
  Tensor x = tensor({-3., -1., -0.5, 0., 0.5, 1., 3.});
  EXPECT_TRUE(testing::tensor_near(
      raw::gelu(x), {7}, {-0.0040496, -0.1586553, -0.1542687, 0.0, 0.3457313, 0.8413447, 2.9959502},
      1e-6));
}

TEST(Elementwise, ComparisonsGiveBoolMasks) {
  Tensor a = tensor({1., 2., 3.}), b = tensor({3., 2., 1.});
  EXPECT_EQ(raw::lt(a, b).dtype(), Dtype::boolean);
  EXPECT_EQ(raw::lt(a, b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(raw::le(a, b).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(raw::gt(a, b).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(raw::ge(a, b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(raw::eq(a, b).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(raw::ne(a, b).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  // Broadcasting: a column against a row gives the outer comparison.
  Tensor m = raw::gt(raw::view(a, {3, 1}), tensor({1.5f, 2.5f}));
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{false, false, true, false, true, true}));
  EXPECT_EQ(raw::logical_not(m).to_vector<bool>(),
            (std::vector<bool>{true, true, false, true, false, false}));
  EXPECT_EQ(raw::isfinite(tensor({1.0f, INFINITY, NAN})).to_vector<bool>(),
            (std::vector<bool>{true, false, false}));
}

TEST(Elementwise, WhereAndMaskedFillBroadcast) {
  Tensor scores = tensor({{1., 2., 3.}, {4., 5., 6.}, {7., 8., 9.}});
  // The causal mask: positions above the diagonal (the future) are filled with -inf.
  Tensor future = raw::triu(ones({3, 3}, Dtype::boolean), 1);
  Tensor masked = raw::masked_fill(scores, future, -INFINITY);
  EXPECT_TRUE(
      testing::tensor_near(masked, {3, 3}, {1, -INFINITY, -INFINITY, 4, 5, -INFINITY, 7, 8, 9}, 0));
  // A (3,) mask broadcasts over rows.
  Tensor col = from_vector(std::vector<bool>{false, true, false}, {3});
  EXPECT_TRUE(testing::tensor_near(raw::masked_fill(scores, col, 0), {3, 3},
                                   {1, 0, 3, 4, 0, 6, 7, 0, 9}, 0));
  Tensor w = raw::where(raw::gt(scores, 4.5f), scores, tensor({-1.0f}));
  EXPECT_TRUE(testing::tensor_near(w, {3, 3}, {-1, -1, -1, -1, 5, 6, 7, 8, 9}, 0));
}

TEST(Elementwise, NanPropagatesLikeTorch) {
  Tensor x = tensor({NAN, -1.0f, 2.0f});
  EXPECT_TRUE(std::isnan(raw::relu(x).to_vector()[0]));
  EXPECT_TRUE(std::isnan(raw::maximum(x, tensor({0.0f})).to_vector()[0]));
}

// The fast paths: a row broadcast over a contiguous tensor (a bias), a column that happens to
// have as many elements as a row (must not take the row path), and large tensors split over
// threads (same result on any thread count).
TEST(Elementwise, RowBroadcastFastPathAndThreadSplit) {
  Generator g(31);
  const Tensor a = randn({6, 6}, &g), row = randn({6}, &g), col = randn({6, 1}, &g);
  std::vector<double> by_row, by_col;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      by_row.push_back(static_cast<double>(a.at({i, j}) + row.at({j})));
      by_col.push_back(static_cast<double>(a.at({i, j}) + col.at({i, 0})));
    }
  EXPECT_TRUE(testing::tensor_near(raw::add(a, row), {6, 6}, by_row, 0.0));
  EXPECT_TRUE(testing::tensor_near(raw::add(a, raw::view(row, {1, 6})), {6, 6}, by_row, 0.0));
  EXPECT_TRUE(testing::tensor_near(raw::add(a, col), {6, 6}, by_col, 0.0));
  const Tensor big = randn({300, 257}, &g), bias = randn({257}, &g);
  const int saved = num_threads();
  set_num_threads(1);
  const Tensor one = raw::mul(raw::add(big, bias), big), gelu_one = raw::gelu(big);
  set_num_threads(3);
  const Tensor three = raw::mul(raw::add(big, bias), big), gelu_three = raw::gelu(big);
  set_num_threads(saved);
  EXPECT_TRUE(testing::tensor_equal(one, three));
  EXPECT_TRUE(testing::tensor_equal(gelu_one, gelu_three));
}

// The block path: b is the end of a's shape, (T, C) on (B, T, C) (the position embeddings on a
// batch), with or without leading 1s. The same bits as b expanded to a's shape and made
// contiguous (the same-shape path), for ops where the order matters, on 1 and 3 threads.
// Shapes whose ends differ, (T, 1) or a b that a must stretch to meet, take the general path.
TEST(Elementwise, BlockBroadcastGivesTheExpandedOperandsBits) {
  Generator g(37);
  const Tensor a = randn({8, 64, 96}, &g);  // 49152 elements: split over threads
  const int saved = num_threads();
  for (const Shape& bs : {Shape{64, 96}, Shape{1, 64, 96}, Shape{1, 96}, Shape{96}}) {
    const Tensor b = randn(bs, &g);
    const Tensor full = raw::contiguous(raw::expand(b, a.shape()));
    using Op = Tensor (*)(const Tensor&, const Tensor&);
    for (const Op op : {Op{raw::add}, Op{raw::sub}, Op{raw::div}}) {
      const Tensor want = op(a, full);
      for (const int threads : {1, 3}) {
        set_num_threads(threads);
        EXPECT_TRUE(testing::tensor_equal(op(a, b), want)) << shape_str(bs) << ", " << threads;
      }
      set_num_threads(saved);
    }
  }
  const Tensor col = randn({64, 1}, &g), wide = randn({2, 64, 96}, &g);
  EXPECT_TRUE(testing::tensor_equal(raw::add(a, col),
                                    raw::add(a, raw::contiguous(raw::expand(col, a.shape())))));
  const Tensor small = randn({1, 64, 96}, &g);
  EXPECT_EQ(raw::add(small, wide).shape(), (Shape{2, 64, 96}));
  EXPECT_TRUE(testing::tensor_equal(
      raw::add(small, wide), raw::add(raw::contiguous(raw::expand(small, {2, 64, 96})), wide)));
}

}  // namespace
}  // namespace qkv
