// test_module.cpp: the Module tree and its names, initial weights equal to PyTorch's bit for
// bit (values from tools/gen_nn_reference.py), the layers' values and gradients, Dropout, and
// the losses.
#include <cmath>
#include <map>
#include <numbers>

#include "nn/all.h"
#include "tests/testing.h"

namespace qkv::nn {
namespace {
#include "tests/nn/torch_nn_reference.inc"

// A small model with a nested list, the shape of the tiny GPT's parameter tree.
struct Block : Module {
  Block() {
    q = register_module("q", std::make_shared<Linear>(4, 4));
    ln = register_module("ln", std::make_shared<LayerNorm>(4));
  }
  std::shared_ptr<Linear> q;
  std::shared_ptr<LayerNorm> ln;
};
struct Model : Module {
  Model() {
    embed = register_module("embed", std::make_shared<Embedding>(10, 4));
    blocks = register_module("blocks", std::make_shared<ModuleList>());
    blocks->push_back(std::make_shared<Block>());
    blocks->push_back(std::make_shared<Block>());
    scale = register_parameter("scale", ones({4}));
  }
  std::shared_ptr<Embedding> embed;
  std::shared_ptr<ModuleList> blocks;
  Tensor scale;
};

TEST(Module, NamesAreTorchStateDictKeysInRegistrationOrder) {
  Model m;
  std::vector<std::string> names;
  for (const auto& [name, p] : m.named_parameters()) names.push_back(name);
  // torch lists a module's own parameters before its children's.
  EXPECT_EQ(names, (std::vector<std::string>{
                       "scale", "embed.weight", "blocks.0.q.weight", "blocks.0.q.bias",
                       "blocks.0.ln.weight", "blocks.0.ln.bias", "blocks.1.q.weight",
                       "blocks.1.q.bias", "blocks.1.ln.weight", "blocks.1.ln.bias"}));
  EXPECT_EQ(m.num_parameters(), 4 + 40 + 2 * (16 + 4 + 4 + 4));
  EXPECT_EQ(m.parameters().size(), 10u);
  EXPECT_EQ(m.blocks->at<Block>(1)->q->weight.shares_storage(m.parameters()[6]), true);
}

TEST(Module, ParametersAreLeavesThatRequireGrad) {
  Model m;
  for (const Tensor& p : m.parameters()) {
    EXPECT_TRUE(requires_grad(p));
    EXPECT_TRUE(is_leaf(p));
  }
  // Parameter(t) shares t's storage, as torch.nn.Parameter does.
  const Tensor t = rand({2, 2});
  const Tensor p = Parameter(t);
  EXPECT_TRUE(p.shares_storage(t));
  EXPECT_TRUE(requires_grad(p));
}

TEST(Module, ZeroGradForgetsEveryGradient) {
  Model m;
  const Tensor ids = from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  Tensor y = m.embed->forward(ids);
  for (size_t i = 0; i < m.blocks->size(); ++i) y = m.blocks->at<Block>(i)->q->forward(y);
  backward(sum(y * m.scale));
  EXPECT_TRUE(grad(m.scale).defined());
  m.zero_grad();
  for (const Tensor& p : m.parameters()) EXPECT_FALSE(grad(p).defined());
}

TEST(Module, TrainAndEvalReachEverySubmodule) {
  Sequential s({std::make_shared<Linear>(2, 2), std::make_shared<Dropout>(0.5)});
  EXPECT_TRUE(s.is_training());
  s.eval();
  for (const auto& [_, child] : s.named_children()) EXPECT_FALSE(child->is_training());
  s.train();
  for (const auto& [_, child] : s.named_children()) EXPECT_TRUE(child->is_training());
}

TEST(Module, RejectsBadNamesAndBadLists) {
  struct Bad : Module {
    void dup() {
      register_parameter("w", ones({1}));
      register_parameter("w", ones({1}));
    }
    void dotted() { register_parameter("a.b", ones({1})); }
  };
  Bad b;
  EXPECT_THROW(b.dup(), Error);
  EXPECT_THROW(b.dotted(), Error);
  ModuleList list;
  list.push_back(std::make_shared<Linear>(1, 1));
  EXPECT_THROW(list.at<Linear>(1), Error);
  EXPECT_THROW(list.at<LayerNorm>(0), Error);
}

// ---- initialisation: bit-identical to PyTorch ----------------------------------------------

TEST(Init, SameSeedSameOrderGivesTorchsWeightsBitForBit) {
  manual_seed(123);
  // The same modules, in the same order, as tools/gen_nn_reference.py.
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> modules = {
      {"linear", std::make_shared<Linear>(3, 4)},
      {"linear_no_bias", std::make_shared<Linear>(4, 2, false)},
      {"linear_20_7", std::make_shared<Linear>(20, 7)},
      {"embedding_small", std::make_shared<Embedding>(2, 3)},
      {"embedding", std::make_shared<Embedding>(10, 3)},
      {"layer_norm", std::make_shared<LayerNorm>(5)},
      {"mlp", std::make_shared<Sequential>(std::vector<std::shared_ptr<UnaryModule>>{
                  std::make_shared<Linear>(5, 8), std::make_shared<GELU>(),
                  std::make_shared<Linear>(8, 2)})},
  };
  const Tensor param = Parameter(rand({3, 2}));
  std::map<std::string, Tensor> ours;
  for (const auto& [mod, m] : modules)
    for (const auto& [name, p] : m->named_parameters()) ours[mod + "/" + name] = p;
  ours["parameter/rand"] = param;
  ASSERT_EQ(ours.size(), kTorchInit.size());
  for (const InitCase& c : kTorchInit) {
    const std::string key = std::string(c.module) + "/" + c.name;
    ASSERT_TRUE(ours.count(key)) << key;
    EXPECT_TRUE(testing::tensor_near(ours[key], c.shape, {c.values.begin(), c.values.end()}, 0.0))
        << key;
  }
}

TEST(Init, LinearWithoutBiasDrawsOnlyItsWeight) {
  Generator a(5), b(5);
  Linear with(3, 2, true, &a), without(3, 2, false, &b);
  EXPECT_TRUE(testing::tensor_equal(with.weight, without.weight));
  EXPECT_FALSE(without.bias.defined());
  EXPECT_EQ(without.named_parameters().size(), 1u);
  // `a` drew 2 more numbers (the bias) than `b`.
  b.random();
  b.random();
  EXPECT_EQ(a.random(), b.random());
}

// ---- layers: values and gradients ----------------------------------------------------------

TEST(Layers, LinearIsXTimesWTransposedPlusB) {
  Linear lin(3, 2);
  const Tensor x = tensor({{1., 2., 3.}, {-1., 0., 4.}});
  const Tensor w = lin.weight, b = lin.bias;
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int o = 0; o < 2; ++o) {
      double acc = b.at({o});
      for (int k = 0; k < 3; ++k) acc += x.at({i, k}) * w.at({o, k});
      expected.push_back(acc);
    }
  EXPECT_TRUE(testing::tensor_near(lin(x), {2, 2}, expected, 1e-6));
  // Batched inputs (B, T, in) keep their leading dims.
  EXPECT_EQ(lin(randn({4, 5, 3})).shape(), (Shape{4, 5, 2}));
  EXPECT_THROW(lin(randn({2, 4})), Error);
}

TEST(Layers, LayerNormNormalisesTheLastDim) {
  LayerNorm ln(4);
  const Tensor x = tensor({{1., 2., 3., 4.}, {10., 10., 10., 14.}});
  const Tensor y = ln(x);
  // Row 0: mean 2.5, population variance 1.25.
  const double s = 1 / std::sqrt(1.25 + 1e-5);
  // Row 1: mean 11, variance 3.
  const double t = 1 / std::sqrt(3 + 1e-5);
  EXPECT_TRUE(testing::tensor_near(
      y, {2, 4}, {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s, -t, -t, -t, 3 * t}, 1e-5));
  EXPECT_THROW(ln(randn({2, 3})), Error);
}

TEST(Layers, EmbeddingLooksUpRows) {
  Embedding emb(5, 3);
  const Tensor ids = from_vector(std::vector<int64_t>{4, 0, 4}, {1, 3});
  const Tensor y = emb(ids);
  EXPECT_EQ(y.shape(), (Shape{1, 3, 3}));
  EXPECT_TRUE(testing::tensor_equal(raw::select(raw::select(y, 0, 0), 0, 0),
                                    raw::select(emb.weight, 0, 4)));
  // The gradient of a row used twice is the sum of both upstream rows.
  backward(sum(y));
  EXPECT_TRUE(testing::tensor_near(grad(emb.weight), {5, 3},
                                   {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2}, 0.0));
  EXPECT_THROW(emb(from_vector(std::vector<int64_t>{5}, {1})), Error);
}

TEST(Layers, GeluBothFormsAndReluAndTanh) {
  const Tensor x = tensor({-2.0f, -0.5f, 0.0f, 0.7f, 3.0f});
  std::vector<double> exact, approx, relu_v, tanh_v;
  for (double v : x.to_vector<double>()) {
    exact.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
    approx.push_back(0.5 * v *
                     (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))));
    relu_v.push_back(v > 0 ? v : 0);
    tanh_v.push_back(std::tanh(v));
  }
  EXPECT_TRUE(testing::tensor_near(GELU()(x), {5}, exact, 1e-6));
  EXPECT_TRUE(testing::tensor_near(GELU(GeluApproximation::tanh)(x), {5}, approx, 1e-6));
  EXPECT_TRUE(testing::tensor_near(ReLU()(x), {5}, relu_v, 0.0));
  EXPECT_TRUE(testing::tensor_near(Tanh()(x), {5}, tanh_v, 1e-6));
}

// Every module's forward, gradchecked through its inputs and its parameters.
TEST(Layers, GradcheckLinearLayerNormAndMlp) {
  Generator g(3);
  Linear lin(3, 4, true, &g);
  auto linear_fn = [&](const std::vector<Tensor>& in) {
    return matmul(in[0], transpose(in[1], 0, 1)) + in[2];
  };
  // The module's own forward must agree with the formula gradchecked below.
  const Tensor x = randn({2, 3}, &g);
  EXPECT_TRUE(testing::tensor_near(lin(x), linear_fn({x, lin.weight, lin.bias}), 0.0));
  EXPECT_TRUE(gradcheck(linear_fn, {x, raw::clone(lin.weight), raw::clone(lin.bias)}).ok);

  auto layer_norm_fn = [](const std::vector<Tensor>& in) {
    LayerNorm ln(5);
    ln.weight = in[1];
    ln.bias = in[2];
    return ln.forward(in[0]);
  };
  const GradcheckResult r =
      gradcheck(layer_norm_fn, {randn({3, 5}, &g), randn({5}, &g), randn({5}, &g)});
  EXPECT_TRUE(r.ok) << r.summary;

  auto mse_fn = [](const std::vector<Tensor>& in) { return mse_loss(in[0], in[1]); };
  EXPECT_TRUE(gradcheck(mse_fn, {randn({4, 3}, &g), randn({4, 3}, &g)}).ok);
}

TEST(Layers, ModuleGradientsReachEveryParameter) {
  // Gradcheck through the parameters of a whole Sequential: perturb each parameter in place.
  Generator g(4);
  Sequential mlp({std::make_shared<Linear>(3, 5, true, &g), std::make_shared<GELU>(),
                  std::make_shared<Linear>(5, 2, true, &g)});
  const Tensor x = randn({4, 3}, &g);
  backward(sum(mlp(x)));
  for (const auto& [name, p] : mlp.named_parameters()) {
    const Tensor analytic = grad(p);
    ASSERT_TRUE(analytic.defined()) << name;
    float* d = p.data_ptr();
    for (int64_t i = 0; i < p.numel(); ++i) {
      const float saved = d[i];
      NoGradGuard no_grad;
      d[i] = saved + 1e-2f;
      const double up = sum(mlp(x)).item<float>();
      d[i] = saved - 1e-2f;
      const double down = sum(mlp(x)).item<float>();
      d[i] = saved;
      EXPECT_NEAR(analytic.to_vector<float>()[static_cast<size_t>(i)], (up - down) / 2e-2, 2e-3)
          << name << " element " << i;
    }
  }
}

// ---- Dropout --------------------------------------------------------------------------------

TEST(Dropout, ScalesSurvivorsAndKeepsTheExpectation) {
  Generator g(11);
  Dropout drop(0.25, &g);
  const Tensor x = ones({200, 100});
  const Tensor y = drop(x);
  int64_t kept = 0;
  for (float v : y.to_vector<float>()) {
    ASSERT_TRUE(v == 0.0f || v == static_cast<float>(1 / 0.75)) << v;
    kept += v != 0.0f;
  }
  // 20,000 draws with p(keep) = 0.75: the count is 15,000 +- 4 sigma (sigma ~ 61).
  EXPECT_NEAR(static_cast<double>(kept), 15000.0, 250.0);
  EXPECT_NEAR(mean(y).item<float>(), 1.0, 0.02);
}

TEST(Dropout, EvalIsIdentityAndTheGradientUsesTheSameMask) {
  Generator g(12);
  Dropout drop(0.5, &g);
  const Tensor x = requires_grad_(randn({6, 7}));
  const Tensor y = drop(x);
  backward(sum(y));
  // dx is 2 where the element was kept and 0 where it was dropped: y / x elementwise.
  const auto yv = y.to_vector<float>(), xv = x.to_vector<float>(), gv = grad(x).to_vector<float>();
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_FLOAT_EQ(gv[i], yv[i] == 0 ? 0.0f : 2.0f);
  drop.eval();
  EXPECT_TRUE(testing::tensor_equal(drop(x), x));
  // The draws come from the generator: the same state gives the same mask.
  Generator a(9), b(9);
  EXPECT_TRUE(testing::tensor_equal(dropout(x, 0.3, true, &a), dropout(x, 0.3, true, &b)));
  EXPECT_THROW(Dropout(1.5), Error);
  EXPECT_TRUE(testing::tensor_equal(dropout(x, 1.0, true), zeros({6, 7})));
}

// ---- losses ---------------------------------------------------------------------------------

TEST(Losses, CrossEntropyMeanWithIgnoreIndex) {
  const Tensor logits = tensor({{2.0f, 0.5f, -1.0f}, {0.1f, 0.2f, 0.3f}, {1.0f, 1.0f, 1.0f}});
  const Tensor targets = from_vector(std::vector<int64_t>{0, 2, -100}, {3});
  // Mean over the two rows that count: -log softmax(row)[target].
  auto nll = [](std::vector<double> row, int t) {
    double m = *std::max_element(row.begin(), row.end()), s = 0;
    for (double v : row) s += std::exp(v - m);
    return -(row[static_cast<size_t>(t)] - m - std::log(s));
  };
  const double expected = (nll({2.0, 0.5, -1.0}, 0) + nll({0.1, 0.2, 0.3}, 2)) / 2;
  EXPECT_NEAR(cross_entropy(logits, targets).item<float>(), expected, 1e-6);
  EXPECT_NEAR(mse_loss(tensor({1.0f, 2.0f}), tensor({0.0f, 4.0f})).item<float>(), 2.5, 1e-7);
}

}  // namespace
}  // namespace qkv::nn
