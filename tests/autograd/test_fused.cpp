// test_fused.cpp: ops with a hand-written backward agree with the same math composed from
// primitives, in value and in gradient (their gradchecks are in test_gradcheck.cpp).
#include "autograd/all.h"
#include "tensor/vector_math.h"
#include "tests/testing.h"

namespace qkv {
namespace {

// Value and gradient of f and g at the same input, with the same upstream gradient.
void expect_same(const std::function<Tensor(const Tensor&)>& fused,
                 const std::function<Tensor(const Tensor&)>& composed, const Tensor& input) {
  const Tensor x1 = requires_grad_(raw::clone(input)), x2 = requires_grad_(raw::clone(input));
  const Tensor y1 = fused(x1), y2 = composed(x2);
  EXPECT_TRUE(testing::tensor_near(y1, y2, 1e-5, 1e-5));
  Generator g(7);
  const Tensor up = randn(y1.shape(), &g);
  backward(y1, up);
  backward(y2, up);
  EXPECT_TRUE(testing::tensor_near(grad(x1), grad(x2), 1e-5, 1e-5));
}

TEST(Fused, SoftmaxEqualsExpOverSum) {
  Generator g(1);
  expect_same([](const Tensor& x) { return softmax(x, -1); },
              [](const Tensor& x) {
                const Tensor e = exp(x - max(x, -1, true).values);
                return e / sum(e, -1, true);
              },
              raw::mul(randn({3, 5}, &g), 3.0f));
}

// The backward has a one-pass kernel for the last dim of contiguous tensors and a composed
// path for other dims: both against exp / sum.
TEST(Fused, SoftmaxBackwardOnEveryDimAndLongRows) {
  Generator g(2);
  for (int64_t dim : {0, 1, -1})
    expect_same([dim](const Tensor& x) { return softmax(x, dim); },
                [dim](const Tensor& x) {
                  const Tensor e = exp(x - max(x, dim, true).values);
                  return e / sum(e, dim, true);
                },
                randn({4, 3, 37}, &g));
}

TEST(Fused, GeluBackwardIsDoutTimesTheSlope) {
  Generator g(4);
  const Tensor x = randn({5, 7}, &g), dout = randn({5, 7}, &g);
  for (GeluApproximation a : {GeluApproximation::none, GeluApproximation::tanh})
    EXPECT_TRUE(testing::tensor_near(raw::gelu_backward(x, dout, a),
                                     raw::mul(dout, raw::gelu_derivative(x, a)), 0.0));
  EXPECT_THROW(raw::gelu_backward(x, randn({5, 6}, &g)), Error);
}

// gelu_with_slope is gelu and gelu_derivative in one pass, bit for bit (contiguous or not, one
// thread's chunk or several), and autograd's gelu, which keeps that slope, gives the same
// gradient as raw::gelu_backward computing the slope again from x.
TEST(Fused, GeluWithSlopeIsGeluAndItsDerivativeBitForBit) {
  Generator g(5);
  const Tensor big = raw::mul(randn({300, 257}, &g), 4.0f);  // parallel chunks; tails of 0 to 15
  const Tensor strided = raw::transpose(randn({9, 13}, &g), 0, 1);
  for (GeluApproximation a : {GeluApproximation::none, GeluApproximation::tanh})
    for (const Tensor& x : {big, strided}) {
      const raw::GeluWithSlope r = raw::gelu_with_slope(x, a);
      EXPECT_TRUE(testing::tensor_equal(r.out, raw::gelu(x, a)));
      EXPECT_TRUE(testing::tensor_equal(r.slope, raw::gelu_derivative(x, a)));
      const Tensor leaf = requires_grad_(raw::clone(x));
      const Tensor dout = randn(x.shape(), &g);
      backward(gelu(leaf, a), dout);
      EXPECT_TRUE(testing::tensor_equal(grad(leaf), raw::gelu_backward(x, dout, a)));
    }
  // Without a gradient to come, nothing but the output is computed, and it is the same.
  const Tensor leaf = requires_grad_(raw::clone(big));
  NoGradGuard no_grad;
  EXPECT_TRUE(testing::tensor_equal(gelu(leaf), raw::gelu(big)));
  EXPECT_TRUE(testing::throws_error([] { raw::gelu_with_slope(zeros({2}, Dtype::int64)); },
                                    {"gelu_with_slope", "float32", "int64"}));
}

TEST(Fused, LogSoftmaxEqualsLogOfSoftmax) {
  Generator g(2);
  expect_same([](const Tensor& x) { return log_softmax(x, 0); },
              [](const Tensor& x) { return log(softmax(x, 0)); }, randn({4, 3}, &g));
}

TEST(Fused, CrossEntropyEqualsMeanNegativeLogLikelihood) {
  const Tensor targets = from_vector(std::vector<int64_t>{2, -100, 0, 4, 2}, {5});
  Generator g(3);
  expect_same([&](const Tensor& x) { return cross_entropy(x, targets); },
              [&](const Tensor& x) {
                // -mean over the kept rows of log_softmax(x)[row, target]
                const Tensor logp = log_softmax(x, 1);
                std::vector<Tensor> terms;
                for (int64_t i : {0, 2, 3, 4})
                  terms.push_back(select(select(logp, 0, i), 0, targets.at<int64_t>({i})));
                return -mean(stack(terms));
              },
              randn({5, 6}, &g));
}

// Large enough for the backward to split its rows between threads (300 x 257 logits, every
// seventh row ignored): the same gradient bits on 1 and 3 threads, and the gradient is
// (softmax(x) - onehot) * dout / n, with 0 for the ignored rows.
TEST(Fused, CrossEntropyBackwardIsTheSameOnOneAndThreeThreads) {
  Generator g(5);
  const int64_t N = 300, V = 257;
  const Tensor x0 = raw::mul(randn({N, V}, &g), 3.0f);
  std::vector<int64_t> ids(static_cast<size_t>(N));
  int64_t kept = 0;
  for (int64_t i = 0; i < N; ++i) {
    ids[static_cast<size_t>(i)] = i % 7 == 3 ? -100 : (i * 37) % V;
    kept += i % 7 == 3 ? 0 : 1;
  }
  const Tensor targets = from_vector(ids, {N});
  auto run = [&](int threads) {
    const int saved = num_threads();
    set_num_threads(threads);
    const Tensor x = requires_grad_(raw::clone(x0));
    backward(cross_entropy(x, targets), scalar_tensor(2.5f));
    set_num_threads(saved);
    return grad(x);
  };
  const Tensor one = run(1), three = run(3);
  EXPECT_TRUE(testing::tensor_equal(one, three));
  std::vector<float> expected = raw::softmax(x0, 1).to_vector<float>();
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < V; ++j) {
      float& e = expected[static_cast<size_t>(i * V + j)];
      const int64_t t = ids[static_cast<size_t>(i)];
      e = t == -100 ? 0.0f : (e - (j == t ? 1.0f : 0.0f)) * 2.5f / static_cast<float>(kept);
    }
  EXPECT_TRUE(testing::tensor_near(one, from_vector(expected, {N, V}), 1e-7, 1e-5));
}

// cross_entropy keeps each row's max and log-sum, not the log-probabilities: its loss and its
// gradient must be, bit for bit, what they are when built from log_softmax's output (the loss
// -(1/n) sum of logp[t] in double; the gradient (e^logp - onehot) * dout / n), on rows as long
// as GPT-2's vocabulary, with logits hundreds apart, an ignored row, and logits that are a
// transposed view.
TEST(Fused, CrossEntropyGivesTheBitsOfLogSoftmax) {
  Generator g(9);
  const int64_t V = 50257;
  for (const Tensor& x0 : {raw::mul(randn({5, V}, &g), 40.0f),
                           raw::transpose(raw::mul(randn({V, 3}, &g), 2.0f), 0, 1)}) {
    const int64_t N = x0.size(0);
    std::vector<int64_t> ids(static_cast<size_t>(N));
    for (int64_t i = 0; i < N; ++i) ids[static_cast<size_t>(i)] = i == 1 ? -100 : (i * 7919) % V;
    const Tensor x = requires_grad_(raw::clone(x0));
    const Tensor loss = cross_entropy(x, from_vector(ids, {N}));
    backward(loss, scalar_tensor(1.5f));
    const std::vector<float> logp = raw::log_softmax(x0, 1).to_vector<float>();
    double total = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < N; ++i)
      if (ids[static_cast<size_t>(i)] != -100)
        total -= logp[static_cast<size_t>(i * V + ids[static_cast<size_t>(i)])], ++n;
    EXPECT_EQ(loss.item(), static_cast<float>(total / static_cast<double>(n)));
    std::vector<float> expected(logp.size());
    const float scale = 1.5f / static_cast<float>(n);
    for (int64_t i = 0; i < N; ++i) {
      const int64_t t = ids[static_cast<size_t>(i)];
      for (int64_t j = 0; j < V; ++j) {
        const size_t at = static_cast<size_t>(i * V + j);
        expected[at] =
            t == -100 ? 0.0f : (detail::vector_exp(logp[at]) - (j == t ? 1.0f : 0.0f)) * scale;
      }
    }
    EXPECT_TRUE(testing::tensor_equal(grad(x), from_vector(expected, {N, V})));
  }
}

// layer_norm, fused, against the formula composed from primitives, through x, w and b.
TEST(Fused, LayerNormEqualsTheComposedFormula) {
  Generator g(3);
  const Tensor x0 = raw::add(raw::mul(randn({2, 5, 8}, &g), 2.0f), 0.5f);
  const Tensor w0 = randn({8}, &g), b0 = randn({8}, &g);
  const Tensor x1 = requires_grad_(raw::clone(x0)), x2 = requires_grad_(raw::clone(x0));
  const Tensor w1 = requires_grad_(raw::clone(w0)), w2 = requires_grad_(raw::clone(w0));
  const Tensor b1 = requires_grad_(raw::clone(b0)), b2 = requires_grad_(raw::clone(b0));
  const Tensor y1 = layer_norm(x1, w1, b1, 1e-5);
  const Tensor centred = x2 - mean(x2, -1, true);
  const Tensor y2 = centred / sqrt(var(x2, -1, true, 0) + 1e-5f) * w2 + b2;
  EXPECT_TRUE(testing::tensor_near(y1, y2, 1e-5, 1e-5));
  const Tensor up = randn(y1.shape(), &g);
  backward(y1, up);
  backward(y2, up);
  EXPECT_TRUE(testing::tensor_near(grad(x1), grad(x2), 1e-5, 1e-4));
  EXPECT_TRUE(testing::tensor_near(grad(w1), grad(w2), 1e-5, 1e-4));
  EXPECT_TRUE(testing::tensor_near(grad(b1), grad(b2), 1e-5, 1e-5));
  EXPECT_EQ(grad_fn_name(y1), "NativeLayerNormBackward0");
  EXPECT_THROW(layer_norm(x0, randn({7}), b0), Error);
  EXPECT_THROW(layer_norm(x0, w0, b0, 0.0), Error);
}

// Large enough to be split over threads (rows in blocks of 16; 2112 rows is not a multiple):
// the same digits on 1 and 3 threads, and still the composed formula's values.
TEST(Fused, LayerNormIsTheSameOnOneAndThreeThreads) {
  Generator g(4);
  const Tensor x0 = randn({64, 33, 40}, &g), w0 = randn({40}, &g), b0 = randn({40}, &g);
  const Tensor up = randn({64, 33, 40}, &g);
  auto run = [&](int threads) {
    const int saved = num_threads();
    set_num_threads(threads);
    const Tensor x = requires_grad_(raw::clone(x0)), w = requires_grad_(raw::clone(w0)),
                 b = requires_grad_(raw::clone(b0));
    const Tensor y = layer_norm(x, w, b, 1e-5);
    backward(y, up);
    set_num_threads(saved);
    return std::vector<Tensor>{y, grad(x), grad(w), grad(b)};
  };
  const auto one = run(1), three = run(3);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(testing::tensor_equal(one[i], three[i])) << i;
  const Tensor x = requires_grad_(raw::clone(x0)), w = requires_grad_(raw::clone(w0)),
               b = requires_grad_(raw::clone(b0));
  const Tensor centred = x - mean(x, -1, true);
  const Tensor y = centred / sqrt(var(x, -1, true, 0) + 1e-5f) * w + b;
  backward(y, up);
  EXPECT_TRUE(testing::tensor_near(one[0], y, 1e-5, 1e-5));
  EXPECT_TRUE(testing::tensor_near(one[1], grad(x), 1e-4, 1e-4));
  EXPECT_TRUE(testing::tensor_near(one[2], grad(w), 1e-3, 1e-4));  // sums over 2112 rows
  EXPECT_TRUE(testing::tensor_near(one[3], grad(b), 1e-3, 1e-4));
}

// linear is matmul(x, W^T) + b in one node: the same GEMMs, so the same bits forward and for
// dx and dW; db is one sum over all rows where the composed form sums over dim 0, then dim 1.
// The upstream gradient arrives as a transposed view, as it does from attention's head split.
TEST(Fused, LinearEqualsMatmulPlusBias) {
  Generator g(5);
  const Tensor x0 = randn({6, 40, 24}, &g), w0 = randn({36, 24}, &g), b0 = randn({36}, &g);
  const Tensor up = transpose(randn({6, 36, 40}, &g), 1, 2);  // (6, 40, 36), not contiguous
  auto leaves = [&] {
    return std::vector<Tensor>{requires_grad_(raw::clone(x0)), requires_grad_(raw::clone(w0)),
                               requires_grad_(raw::clone(b0))};
  };
  const auto f = leaves(), c = leaves();
  const Tensor yf = linear(f[0], f[1], f[2]);
  const Tensor yc = matmul(c[0], transpose(c[1], 0, 1)) + c[2];
  EXPECT_TRUE(testing::tensor_equal(yf, yc));
  EXPECT_EQ(grad_fn_name(yf), "ViewBackward0");  // torch 1.13's name for a 3-d input
  backward(yf, up);
  backward(yc, up);
  EXPECT_TRUE(testing::tensor_equal(grad(f[0]), grad(c[0])));
  EXPECT_TRUE(testing::tensor_equal(grad(f[1]), grad(c[1])));
  EXPECT_TRUE(testing::tensor_near(grad(f[2]), grad(c[2]), 1e-6, 1e-6));
  // Without a bias, and on a matrix: torch's node names for those calls.
  EXPECT_EQ(grad_fn_name(linear(f[0], f[1])), "UnsafeViewBackward0");
  EXPECT_EQ(grad_fn_name(linear(raw::reshape(f[0], {240, 24}), f[1], f[2])), "AddmmBackward0");
  EXPECT_TRUE(testing::throws_error([&] { linear(f[0], f[1], zeros({35})); },
                                    {"linear", "(out,) = (36,)", "(35,)"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        linear(f[0], zeros({36, 23}));
      },
      {"linear", "(6, 40, 24)", "(36, 23)"}));
}

TEST(Fused, CrossEntropyRejectsBadTargets) {
  const Tensor logits = zeros({2, 3});
  EXPECT_TRUE(testing::throws_error(
      [&] {
        cross_entropy(logits, from_vector(std::vector<int64_t>{0, 3}, {2}));
      },
      {"cross_entropy", "[0, 2]", "got 3"}));
  EXPECT_TRUE(testing::throws_error([&] { cross_entropy(logits, zeros({2})); },
                                    {"cross_entropy", "int64", "torch.float32"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        cross_entropy(zeros({2, 3, 4}), from_vector(std::vector<int64_t>{0, 1}, {2}));
      },
      {"cross_entropy", "(N, V)", "(2, 3, 4)"}));
  // Every row ignored: NaN, as torch.
  EXPECT_TRUE(
      std::isnan(cross_entropy(logits, from_vector(std::vector<int64_t>{-100, -100}, {2})).item()));
}

}  // namespace
}  // namespace qkv
