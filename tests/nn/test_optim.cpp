// test_optim.cpp: SGD, Adam and AdamW take PyTorch's steps (10 steps on a small model, values
// from tools/gen_nn_reference.py, equal to 1e-6), gradient clipping returns torch's norm and
// leaves torch's gradients, and the warmup-cosine schedule has its documented shape.
#include <cmath>
#include <functional>
#include <map>
#include <numbers>

#include "nn/all.h"
#include "tests/testing.h"

namespace qkv::nn {
namespace {
#include "tests/nn/torch_nn_reference.inc"

// Linear(4, 8) -> tanh -> Linear(8, 3), with the reference's starting weights.
std::shared_ptr<Sequential> reference_model() {
  auto model = std::make_shared<Sequential>(std::vector<std::shared_ptr<UnaryModule>>{
      std::make_shared<Linear>(4, 8), std::make_shared<Tanh>(), std::make_shared<Linear>(8, 3)});
  NamedTensors initial;
  size_t i = 0;
  for (const auto& [name, p] : model->named_parameters())
    initial.emplace_back(name, from_vector(kOptimInitial[i++], p.shape()));
  load_state_dict(*model, initial);
  return model;
}

struct Config {
  std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)> make;
  double clip = 0;  // 0: no clipping
};

std::map<std::string, Config> configs() {
  using P = std::vector<Tensor>;
  return {
      {"sgd", {[](P p) { return std::make_unique<SGD>(p, 0.1); }}},
      {"sgd_momentum_wd", {[](P p) { return std::make_unique<SGD>(p, 0.1, 0.9, 0, 0.01); }}},
      {"sgd_dampening", {[](P p) { return std::make_unique<SGD>(p, 0.05, 0.5, 0.3); }}},
      {"sgd_nesterov", {[](P p) { return std::make_unique<SGD>(p, 0.1, 0.9, 0, 0, true); }}},
      {"adam", {[](P p) { return std::make_unique<Adam>(p, 1e-2); }}},
      {"adam_wd", {[](P p) { return std::make_unique<Adam>(p, 1e-2, 0.8, 0.99, 1e-6, 0.1); }}},
      {"adamw", {[](P p) { return std::make_unique<AdamW>(p, 1e-2); }}},
      {"adamw_wd", {[](P p) { return std::make_unique<AdamW>(p, 2e-2, 0.9, 0.999, 1e-8, 0.3); }}},
      {"adamw_clip", {[](P p) { return std::make_unique<AdamW>(p, 1e-2); }, 0.05}},
  };
}

TEST(Optim, TenStepsEqualPyTorchs) {
  const Tensor x = from_vector(kOptimX, {6, 4});
  const Tensor y = from_vector(kOptimY, {6});
  const auto all = configs();
  ASSERT_EQ(all.size(), kTorchOptim.size());
  for (const OptimCase& c : kTorchOptim) {
    SCOPED_TRACE(c.config);
    const Config& config = all.at(c.config);
    auto model = reference_model();
    auto opt = config.make(model->parameters());
    std::vector<double> losses;
    for (int step = 0; step < 10; ++step) {
      opt->zero_grad();
      const Tensor loss = cross_entropy((*model)(x), y);
      backward(loss);
      if (config.clip > 0) clip_grad_norm_(model->parameters(), config.clip);
      opt->step();
      losses.push_back(loss.item<float>());
    }
    EXPECT_EQ(opt->steps(), 10);
    EXPECT_TRUE(testing::values_near(losses, {c.losses.begin(), c.losses.end()}, 1e-6));
    const auto params = model->parameters();
    ASSERT_EQ(params.size(), c.params.size());
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_TRUE(testing::values_near(params[i].to_vector<double>(),
                                       {c.params[i].begin(), c.params[i].end()}, 1e-6))
          << "parameter " << i;
  }
}

// Parameters large enough to be split over threads (slices may span parameters, and start at
// odd offsets, so an element lands in the vector loop on one thread count and in its scalar
// remainder on another): Adam gives the same bits on 1 and 3 threads, with decoupled weight
// decay (AdamW), with coupled decay and with none. (The one-thread loop is the one held to
// PyTorch above.)
TEST(Optim, AdamIsTheSameOnOneAndThreeThreads) {
  using Make = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>;
  const std::vector<std::pair<const char*, Make>> kinds = {
      {"AdamW",
       [](std::vector<Tensor> p) {
         return std::make_unique<AdamW>(std::move(p), 1e-2, 0.9, 0.999, 1e-8, 0.1);
       }},
      {"Adam with weight decay",
       [](std::vector<Tensor> p) {
         return std::make_unique<Adam>(std::move(p), 1e-2, 0.9, 0.999, 1e-8, 0.1);
       }},
      {"Adam", [](std::vector<Tensor> p) { return std::make_unique<Adam>(std::move(p), 1e-2); }}};
  // Not `const auto& [name, make]`: Clang before 16 cannot capture a structured binding.
  for (const auto& kind : kinds) {
    const char* name = kind.first;
    const Make& make = kind.second;
    auto train = [&make](int threads) {
      const int saved = num_threads();
      set_num_threads(threads);
      manual_seed(5);
      Linear a(300, 201), b(201, 7);
      std::vector<Tensor> params = a.parameters();
      for (const Tensor& p : b.parameters()) params.push_back(p);
      const std::unique_ptr<Optimizer> opt = make(params);
      Generator g(6);
      const Tensor x = randn({16, 300}, &g);
      for (int step = 0; step < 3; ++step) {
        opt->zero_grad();
        const Tensor h = b(gelu(a(x)));
        backward(sum(h * h));
        opt->step();
      }
      set_num_threads(saved);
      return params;
    };
    const auto one = train(1), three = train(3);
    ASSERT_EQ(one.size(), three.size());
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(testing::tensor_equal(one[i], three[i])) << name << ", parameter " << i;
  }
}

TEST(Optim, DefaultsArePyTorchs) {
  const Tensor p = Parameter(zeros({1}));
  Adam adam({p});
  EXPECT_EQ(adam.lr(), 1e-3);
  EXPECT_EQ(adam.beta1, 0.9);
  EXPECT_EQ(adam.beta2, 0.999);
  EXPECT_EQ(adam.eps, 1e-8);
  EXPECT_EQ(adam.weight_decay, 0.0);
  AdamW adamw({p});
  EXPECT_EQ(adamw.weight_decay, 1e-2);
  EXPECT_EQ(adamw.name(), "AdamW");
}

TEST(Optim, ParametersWithoutGradientAreLeftAlone) {
  const Tensor a = Parameter(ones({2})), b = Parameter(ones({2}));
  AdamW opt({a, b}, 0.1);
  backward(sum(a * 3.0f));
  opt.step();
  EXPECT_TRUE(testing::tensor_equal(b, ones({2})));
  EXPECT_LT(a.to_vector<float>()[0], 1.0f);
}

TEST(Optim, RejectsWhatIsNotALeafParameter) {
  const Tensor leaf = Parameter(ones({2}));
  EXPECT_THROW(SGD({leaf * 2.0f}, 0.1), Error);
  EXPECT_THROW(SGD({ones({2})}, 0.1), Error);
  EXPECT_THROW(SGD({}, 0.1), Error);
  EXPECT_THROW(SGD({leaf}, -1.0), Error);
  EXPECT_THROW(Adam({leaf}, 1e-3, 1.0), Error);
  EXPECT_THROW(SGD({leaf}, 0.1, 0.0, 0.0, 0.0, /*nesterov=*/true), Error);
}

TEST(Optim, ClipGradNormMatchesTorch) {
  const Tensor p1 = Parameter(zeros({2, 2})), p2 = Parameter(zeros({3}));
  backward(sum(p1 * tensor({{3.0f, -4.0f}, {1.0f, 2.0f}})));
  backward(sum(p2 * tensor({0.5f, -12.0f, 2.0f})));
  const double norm = clip_grad_norm_({p1, p2}, 5.0);
  EXPECT_NEAR(norm, kClipNorm, 1e-5);
  EXPECT_TRUE(testing::tensor_near(grad(p1), {2, 2}, {kClipGrad1.begin(), kClipGrad1.end()}, 1e-7));
  EXPECT_TRUE(testing::tensor_near(grad(p2), {3}, {kClipGrad2.begin(), kClipGrad2.end()}, 1e-7));
  // Under the limit, nothing changes.
  const Tensor q = Parameter(zeros({2}));
  backward(sum(q * tensor({0.3f, 0.4f})));
  EXPECT_NEAR(clip_grad_norm_({q}, 1.0), 0.5, 1e-7);
  EXPECT_TRUE(testing::tensor_near(grad(q), {2}, {0.3, 0.4}, 1e-7));
}

TEST(Schedule, WarmupThenCosineToTheFloor) {
  const WarmupCosine s{1e-3, 1e-4, 10, 110};
  EXPECT_DOUBLE_EQ(s.lr(0), 1e-4);  // (0 + 1) / 10 of the base
  EXPECT_DOUBLE_EQ(s.lr(4), 5e-4);
  EXPECT_DOUBLE_EQ(s.lr(9), 1e-3);  // warmup ends at the base rate
  EXPECT_DOUBLE_EQ(s.lr(10), 1e-3);
  EXPECT_NEAR(s.lr(60), (1e-3 + 1e-4) / 2, 1e-15);  // halfway down the cosine
  EXPECT_NEAR(s.lr(35), 1e-4 + 0.5 * 9e-4 * (1 + std::cos(std::numbers::pi * 0.25)), 1e-15);
  EXPECT_DOUBLE_EQ(s.lr(110), 1e-4);
  EXPECT_DOUBLE_EQ(s.lr(5000), 1e-4);
  for (int64_t t = 10; t < 110; ++t) EXPECT_GE(s.lr(t), s.lr(t + 1));
  EXPECT_THROW(s.lr(-1), Error);
  EXPECT_THROW((WarmupCosine{1e-3, 1e-4, 20, 10}.lr(0)), Error);
}

}  // namespace
}  // namespace qkv::nn
