// test_reduce.cpp: reductions and softmax against naive double-precision loops over every dim.
#include <algorithm>
#include <cmath>

#include "tensor/bit_cast.h"
#include "tensor/softmax.h"
#include "tests/tensor/lane_sum_forms.h"
#include "tests/testing.h"

namespace qkv {
namespace {

// The naive fold over `dim` of a contiguous (outer, n, inner) view, in double.
template <class Fold>
std::vector<double> fold_dim(const Tensor& a, int64_t dim, Fold fold) {
  const std::vector<double> v = a.to_vector<double>();
  int64_t outer = 1, inner = 1;
  const int64_t n = a.size(dim);
  for (int64_t d = 0; d < dim; ++d) outer *= a.size(d);
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= a.size(d);
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      std::vector<double> row;
      for (int64_t k = 0; k < n; ++k) row.push_back(v[(o * n + k) * inner + i]);
      out.push_back(fold(row));
    }
  return out;
}

Shape without(Shape s, int64_t dim, bool keepdim) {
  if (keepdim)
    s[dim] = 1;
  else
    s.erase(s.begin() + dim);
  return s;
}

double sum_of(const std::vector<double>& r) {
  double s = 0;
  for (double x : r) s += x;
  return s;
}
double var_of(const std::vector<double>& r) {
  const double m = sum_of(r) / r.size();
  double s = 0;
  for (double x : r) s += (x - m) * (x - m);
  return s / (r.size() - 1);
}

class ReduceShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(ReduceShapes, EveryDimWithAndWithoutKeepdim) {
  const Shape shape = GetParam();
  Generator g(5);
  Tensor a = randn(shape, &g);
  for (int64_t d = 0; d < a.dim(); ++d) {
    for (bool keep : {false, true}) {
      const Shape s = without(shape, d, keep);
      EXPECT_TRUE(testing::tensor_near(raw::sum(a, d, keep), s, fold_dim(a, d, sum_of), 1e-5))
          << "sum dim " << d;
      EXPECT_TRUE(testing::tensor_near(raw::mean(a, d, keep), s,
                                       fold_dim(a, d, [](auto& r) { return sum_of(r) / r.size(); }),
                                       1e-6))
          << "mean dim " << d;
      if (a.size(d) > 1) {
        EXPECT_TRUE(
            testing::tensor_near(raw::var(a, d, keep), s, fold_dim(a, d, var_of), 1e-5, 1e-5))
            << "var dim " << d;
      }
      auto mx = raw::max(a, d, keep);
      EXPECT_TRUE(testing::tensor_near(
          mx.values, s,
          fold_dim(a, d, [](auto& r) { return *std::max_element(r.begin(), r.end()); }), 0));
      EXPECT_TRUE(testing::tensor_near(
          mx.indices, s,
          fold_dim(
              a, d,
              [](auto& r) { return double(std::max_element(r.begin(), r.end()) - r.begin()); }),
          0));
      EXPECT_TRUE(testing::tensor_near(
          raw::min(a, d, keep).values, s,
          fold_dim(a, d, [](auto& r) { return *std::min_element(r.begin(), r.end()); }), 0));
    }
  }
  // Over everything, and through a non-contiguous view of the same numbers.
  const double total = sum_of(a.to_vector<double>());
  EXPECT_NEAR(raw::sum(a).item<double>(), total, 1e-4);
  if (a.dim() >= 2) {
    EXPECT_NEAR(raw::sum(raw::transpose(a, 0, -1)).item<double>(), total, 1e-4);
  }
  EXPECT_NEAR(raw::mean(a).item<double>(), total / a.numel(), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ReduceShapes,
                         ::testing::Values(Shape{7}, Shape{3, 4}, Shape{2, 3, 5}, Shape{1, 33, 2},
                                           Shape{129, 3}));

TEST(Reduce, ArgmaxTakesTheFirstMaximumAndFlattens) {
  Tensor a = tensor({{1., 5., 5.}, {7., 0., 7.}});
  EXPECT_EQ(raw::argmax(a, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(raw::argmax(a).item<int64_t>(), 3);
  EXPECT_EQ(raw::argmax(a).dtype(), Dtype::int64);
  EXPECT_EQ(raw::max(a).item(), 7.0f);
  EXPECT_EQ(raw::min(a).item(), 0.0f);
}

TEST(Reduce, VarCorrectionAndSingleElement) {
  Tensor x = tensor({1., 2., 3., 4.});
  EXPECT_NEAR(raw::var(x).item(), 1.6666666f, 1e-6);         // unbiased, torch's default
  EXPECT_NEAR(raw::var(x, 0).item(), 1.25f, 1e-6);           // population
  EXPECT_TRUE(std::isnan(raw::var(tensor({3.0f})).item()));  // n - 1 = 0: NaN, as torch
}

TEST(Reduce, SumOverSeveralDimsAndSumToShape) {
  Tensor a = ones({2, 3, 4});
  EXPECT_TRUE(testing::tensor_near(raw::sum(a, {0, -1}), {3}, {8, 8, 8}, 0));
  EXPECT_EQ(raw::sum(a, {0, 2}, true).shape(), (Shape{1, 3, 1}));
  // The reverse of broadcasting (1, 4) -> (2, 3, 4): sum the stretched dims back.
  EXPECT_TRUE(testing::tensor_near(raw::sum_to_shape(a, {1, 4}), {1, 4}, {6, 6, 6, 6}, 0));
  EXPECT_TRUE(testing::tensor_near(raw::sum_to_shape(a, {3, 1}), {3, 1}, {8, 8, 8}, 0));
  EXPECT_TRUE(testing::tensor_near(raw::sum_to_shape(a, Shape{}), Shape{}, {24}, 0));
}

TEST(Reduce, EmptyInputs) {
  EXPECT_EQ(raw::sum(zeros({0})).item(), 0.0f);
  EXPECT_TRUE(std::isnan(raw::mean(zeros({0})).item()));
  EXPECT_TRUE(testing::throws_error([] { raw::max(zeros({0})); }, {"max", "(0,)"}));
}

// Contiguous tensors take a fast path (rows added along memory, several accumulators); strided
// ones the general walk. Both must give the double-precision sum, for every dim.
TEST(Reduce, SumAndMeanFastPathAgreeWithTheStridedPathOnEveryDim) {
  Generator g(12);
  const Tensor a = randn({3, 17, 5}, &g);
  const Tensor strided = raw::transpose(raw::contiguous(raw::transpose(a, 0, 2)), 0, 2);
  ASSERT_FALSE(strided.is_contiguous());
  const auto v = a.to_vector<double>();
  for (int64_t d = 0; d < 3; ++d) {
    for (bool keepdim : {false, true}) {
      EXPECT_TRUE(
          testing::tensor_near(raw::sum(a, d, keepdim), raw::sum(strided, d, keepdim), 1e-6));
      EXPECT_TRUE(
          testing::tensor_near(raw::mean(a, d, keepdim), raw::mean(strided, d, keepdim), 1e-6));
    }
  }
  // And against an oracle for the middle dim: out[i, k] = sum_j a[i, j, k].
  std::vector<double> expected;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 5; ++k) {
      double acc = 0;
      for (int64_t j = 0; j < 17; ++j) acc += v[static_cast<size_t>((i * 17 + j) * 5 + k)];
      expected.push_back(acc);
    }
  EXPECT_TRUE(testing::tensor_near(raw::sum(a, 1), {3, 5}, expected, 1e-5));
}

// Large sums are shared out by output (rows for the last dim, column ranges otherwise): each
// output is still one thread's additions in one order, so 1 and 3 threads give the same bits,
// and both equal a double-precision oracle.
TEST(Reduce, LargeSumsAreTheSameOnOneAndThreeThreads) {
  Generator g(13);
  const Tensor a = randn({40, 37, 61}, &g);  // 90k elements: above the parallel threshold
  const auto v = a.to_vector<double>();
  const int saved = num_threads();
  for (int64_t d = 0; d < 3; ++d) {
    set_num_threads(1);
    const Tensor one = raw::sum(a, d), mean_one = raw::mean(a, d);
    set_num_threads(3);
    const Tensor three = raw::sum(a, d), mean_three = raw::mean(a, d);
    EXPECT_TRUE(testing::tensor_equal(one, three)) << "dim " << d;
    EXPECT_TRUE(testing::tensor_equal(mean_one, mean_three)) << "dim " << d;
  }
  set_num_threads(saved);
  // The bias-gradient shape: the sum over all rows of a (rows, C) matrix, against an oracle.
  const Tensor rows = raw::reshape(a, {40 * 37, 61});
  std::vector<double> expected(61, 0.0);
  for (size_t r = 0; r < 40 * 37; ++r)
    for (size_t c = 0; c < 61; ++c) expected[c] += v[r * 61 + c];
  EXPECT_TRUE(testing::tensor_near(raw::sum(rows, 0), {61}, expected, 1e-5));
}

// A sum over a leading or middle dim runs in blocks of 32, then 8, then single columns, with
// the sums in registers; each column is still added row after row in double. So it must be bit
// for bit the obvious loop, for widths that leave every kind of remainder, on 1 and 2 threads
// (the threads take ranges of 16 columns), and for the mean (the same sum times 1/n).
TEST(Reduce, ColumnSumsAreBitForBitTheSequentialDoubleSum) {
  const int saved = num_threads();
  for (int64_t outer : {1, 3})
    for (int64_t inner : {1, 7, 8, 31, 32, 33, 45, 100, 512}) {
      const int64_t n = 300;
      Generator g(static_cast<uint64_t>(20 + inner));
      const Tensor a = randn({outer, n, inner}, &g);
      const auto v = a.to_vector();
      std::vector<float> sum(static_cast<size_t>(outer * inner)), mean(sum.size());
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t k = 0; k < inner; ++k) {
          double acc = 0;
          for (int64_t i = 0; i < n; ++i) acc += v[static_cast<size_t>((o * n + i) * inner + k)];
          sum[static_cast<size_t>(o * inner + k)] = static_cast<float>(acc);
          mean[static_cast<size_t>(o * inner + k)] =
              static_cast<float>(acc * (1.0 / static_cast<double>(n)));
        }
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const std::string where = "outer " + std::to_string(outer) + ", inner " +
                                  std::to_string(inner) + ", " + std::to_string(threads) +
                                  " threads";
        EXPECT_EQ(raw::sum(a, 1).to_vector(), sum) << where;
        EXPECT_EQ(raw::mean(a, 1).to_vector(), mean) << where;
      }
    }
  set_num_threads(saved);
}

// lane_sum's vector form (GCC, Clang) and its portable scalar form (other compilers) add the
// same numbers in the same order: the same bits, for every tail length, in float and in double
// lanes. Both are held to a plain 8-lane reference too.
TEST(Reduce, LaneSumIsTheSameInItsVectorAndPortableForms) {
  Generator g(14);
  const std::vector<float> a = randn({1000}, &g).to_vector(), b = randn({1000}, &g).to_vector();
  for (int64_t n : {0, 1, 7, 8, 9, 15, 16, 64, 131, 1000}) {
    const float m = 0.25f;
    EXPECT_EQ(lane_sum_forms::vector::products(n, a.data(), b.data(), m),
              lane_sum_forms::portable::products(n, a.data(), b.data(), m))
        << "n = " << n;
    EXPECT_EQ(lane_sum_forms::vector::squares(n, a.data(), m),
              lane_sum_forms::portable::squares(n, a.data(), m))
        << "n = " << n;
    // The reference: element j into lane j % 8, lanes paired, then the tail in order.
    double lane[8] = {};
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
      for (int64_t l = 0; l < 8; ++l) {
        const double d = static_cast<double>(a[j + l] - m);
        lane[l] += d * d;
      }
    double ref =
        ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    for (; j < n; ++j) {
      const double d = static_cast<double>(a[j] - m);
      ref += d * d;
    }
    EXPECT_EQ(lane_sum_forms::portable::squares(n, a.data(), m), ref) << "n = " << n;
  }
}

std::vector<double> softmax_oracle(const std::vector<double>& r) {
  double m = -INFINITY, s = 0;
  for (double x : r) m = std::max(m, x);
  for (double x : r) s += std::exp(x - m);
  std::vector<double> out;
  for (double x : r) out.push_back(std::exp(x - m) / s);
  return out;
}

TEST(Softmax, EveryDimMatchesTheOracleAndRowsSumToOne) {
  Generator g(9);
  Tensor a = raw::mul(randn({3, 4, 5}, &g), 3.0f);
  for (int64_t d = 0; d < 3; ++d) {
    Tensor s = raw::softmax(a, d);
    Tensor ls = raw::log_softmax(a, d);
    // Compare along dim d by moving it last in both.
    Tensor st = raw::contiguous(raw::transpose(s, d, -1));
    Tensor lt = raw::contiguous(raw::transpose(ls, d, -1));
    Tensor at = raw::contiguous(raw::transpose(a, d, -1));
    const auto v = at.to_vector<double>();
    const int64_t n = at.size(-1);
    std::vector<double> expected, expected_log;
    for (size_t i = 0; i < v.size(); i += n) {
      for (double p : softmax_oracle({v.begin() + i, v.begin() + i + n})) {
        expected.push_back(p);
        expected_log.push_back(std::log(p));
      }
    }
    EXPECT_TRUE(testing::values_near(st.to_vector<double>(), expected, 1e-6)) << "dim " << d;
    EXPECT_TRUE(testing::values_near(lt.to_vector<double>(), expected_log, 1e-5)) << "dim " << d;
    EXPECT_TRUE(testing::tensor_near(raw::sum(s, d), without(a.shape(), d, false),
                                     std::vector<double>(a.numel() / a.size(d), 1.0), 1e-6));
  }
}

TEST(Softmax, HugeLogitsDoNotOverflow) {
  Tensor s = raw::softmax(tensor({1000., 1001., 1002.}), 0);
  EXPECT_TRUE(testing::tensor_near(s, {3}, {0.09003057, 0.24472847, 0.66524096}, 1e-6));
  Tensor ls = raw::log_softmax(tensor({0., -200.}), 0);
  EXPECT_TRUE(testing::tensor_near(ls, {2}, {0.0, -200.0}, 1e-4));  // no log(0) = -inf
}

TEST(Softmax, MaskedEntriesGetZeroAndAFullyMaskedRowIsNanAsInTorch) {
  Tensor s = raw::softmax(tensor({{0.5f, -INFINITY}, {-INFINITY, -INFINITY}}), -1);
  EXPECT_EQ(s.at({0, 0}), 1.0f);
  EXPECT_EQ(s.at({0, 1}), 0.0f);
  EXPECT_TRUE(std::isnan(s.at({1, 0})));
}

// Long rows exercise the vectorised exp (16 lanes plus a tail) over its whole useful range:
// relative error within a few float ulps of the double-precision softmax, exact zeros for
// weights below e^-87, and the same bits whatever the thread count.
TEST(Softmax, LongRowsAreAccurateAndThreadIndependent) {
  Generator g(10);
  for (float spread : {1.0f, 10.0f, 40.0f}) {
    const Tensor a = raw::mul(randn({64, 37}, &g), spread);
    const Tensor s = raw::softmax(a, -1);
    const auto v = a.to_vector<float>();
    const auto got = s.to_vector<double>();
    for (size_t r = 0; r < 64; ++r) {
      // The oracle takes x - max in float, as any float32 softmax must (that rounding alone is
      // 2^-24 |x - max| in the exponent), then exp and the sum in double: what is left to
      // compare is the exp, the float sum and the division.
      const float m = *std::max_element(v.begin() + r * 37, v.begin() + (r + 1) * 37);
      std::vector<double> shifted;
      for (size_t j = 0; j < 37; ++j) shifted.push_back(static_cast<double>(v[r * 37 + j] - m));
      const auto expected = softmax_oracle(shifted);
      for (size_t j = 0; j < 37; ++j) {
        const double e = expected[j], x = got[r * 37 + j];
        if (e < 1e-37) {
          EXPECT_LE(x, 1e-37);  // underflow: zero (or a tiny normal), never garbage
        } else {
          EXPECT_NEAR(x, e, 4e-7 * e + 1e-12)
              << "spread " << spread << " row " << r << " col " << j;
        }
      }
    }
  }
  const Tensor big = randn({300, 211}, &g);
  const int saved = num_threads();
  set_num_threads(1);
  const Tensor one = raw::softmax(big, -1);
  set_num_threads(3);
  const Tensor three = raw::softmax(big, -1);
  set_num_threads(saved);
  EXPECT_TRUE(testing::tensor_equal(one, three));
  // NaN in, NaN out for that row only.
  const Tensor with_nan = raw::softmax(tensor({{1.0f, NAN, 2.0f}, {1.0f, 2.0f, 3.0f}}), -1);
  EXPECT_TRUE(std::isnan(with_nan.at({0, 0})));
  EXPECT_FALSE(std::isnan(with_nan.at({1, 0})));
}

// causal_softmax_row (attention's rows: keys [0, visible) of n) is softmax over the row with
// the hidden keys at -inf, bit for bit: the general path (masked_fill, then softmax) and the
// fused attention kernel must agree exactly. Rows of 16 to 64 keys after rounding take a
// separate kernel with the length fixed at compile time; the others, the general loops. The
// kernel reads some hidden keys (whole chunks of kCausalRowChunk) and masks them away: with
// every hidden key NaN, the same bits.
TEST(Softmax, CausalRowIsTheMaskedSoftmaxBitForBit) {
  Generator g(21);
  const float mul = 1.5f, div = std::sqrt(32.0f);
  for (int64_t n : {5, 16, 17, 33, 48, 64, 65, 100}) {
    const auto x = raw::mul(randn({n}, &g), 4.0f).to_vector<float>();
    for (int64_t visible = 0; visible <= n; ++visible) {
      std::vector<float> masked(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j)
        masked[static_cast<size_t>(j)] =
            j < visible ? x[static_cast<size_t>(j)] * mul / div : -INFINITY;
      const auto expected = visible == 0
                                ? std::vector<float>(static_cast<size_t>(n), 0.0f)
                                : raw::softmax(from_vector(masked, {n}), 0).to_vector<float>();
      std::vector<float> got(static_cast<size_t>(n), -1.0f);
      raw::causal_softmax_row(x.data(), got.data(), n, visible, mul, div);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(qkv::bit_cast<uint32_t>(got[static_cast<size_t>(j)]),
                  qkv::bit_cast<uint32_t>(expected[static_cast<size_t>(j)]))
            << "n " << n << " visible " << visible << " key " << j;
      std::vector<float> hidden_nan = x, got_nan(static_cast<size_t>(n), -1.0f);
      std::fill(hidden_nan.begin() + visible, hidden_nan.end(), std::nanf(""));
      raw::causal_softmax_row(hidden_nan.data(), got_nan.data(), n, visible, mul, div);
      for (int64_t j = 0; j < n; ++j)
        ASSERT_EQ(qkv::bit_cast<uint32_t>(got_nan[static_cast<size_t>(j)]),
                  qkv::bit_cast<uint32_t>(got[static_cast<size_t>(j)]))
            << "hidden keys NaN: n " << n << " visible " << visible << " key " << j;
    }
  }
}

}  // namespace
}  // namespace qkv
