// test_engine.cpp: the graph and the engine: accumulation, reuse, freeing, retain_graph,
// no_grad, detach, retain_grad, hooks, autograd::grad, anomaly mode, export, memory.
#include "autograd/all.h"
#include "tests/testing.h"

namespace qkv {
namespace {

TEST(Engine, ScalarBackwardAndGradFnNames) {
  const Tensor x = requires_grad_(tensor({1., 2., 3.}));
  const Tensor y = x * x;
  const Tensor loss = sum(y);
  EXPECT_EQ(grad_fn_name(y), "MulBackward0");
  EXPECT_EQ(grad_fn_name(loss), "SumBackward0");
  EXPECT_TRUE(is_leaf(x));
  EXPECT_FALSE(is_leaf(y));
  backward(loss);
  EXPECT_TRUE(testing::tensor_near(grad(x), {3}, {2, 4, 6}, 0));
}

TEST(Engine, PrintsHistoryLikePyTorch) {
  const Tensor x = requires_grad_(tensor({1., 2.}));
  EXPECT_EQ(to_string(x), "tensor([1., 2.], requires_grad=True)");
  EXPECT_EQ(to_string(x * 2.0f), "tensor([2., 4.], grad_fn=<MulBackward0>)");
  EXPECT_EQ(to_string(detach(x)), "tensor([1., 2.])");
}

TEST(Engine, NonScalarNeedsAnExplicitGradient) {
  const Tensor x = requires_grad_(tensor({1., 2.}));
  const Tensor y = x * 3.0f;
  EXPECT_TRUE(testing::throws_error([&] { backward(y); }, {"backward", "scalar", "(2,)"}));
  backward(y, tensor({1.0f, -1.0f}));
  EXPECT_TRUE(testing::tensor_near(grad(x), {2}, {3, -3}, 0));
}

TEST(Engine, ANodeUsedTwiceAccumulates) {
  // y = a * a + a: the graph reuses `a`'s history in three places.
  const Tensor x = requires_grad_(tensor({2.0f}));
  const Tensor a = x * 3.0f;  // a = 6
  const Tensor y = a * a + a;
  backward(sum(y));
  EXPECT_NEAR(grad(x).item(), (2 * 6 + 1) * 3.0f, 1e-5);  // dy/da * da/dx
}

TEST(Engine, LeavesAccumulateAcrossBackwardsUntilZeroGrad) {
  const Tensor w = requires_grad_(tensor({1.0f, 1.0f}));
  for (int i = 0; i < 3; ++i) backward(sum(w * 2.0f));
  EXPECT_TRUE(testing::tensor_near(grad(w), {2}, {6, 6}, 0));
  zero_grad(w);
  EXPECT_FALSE(grad(w).defined());
  backward(sum(w));
  EXPECT_TRUE(testing::tensor_near(grad(w), {2}, {1, 1}, 0));
}

TEST(Engine, BroadcastGradientsAreSummedBackToTheInputShape) {
  const Tensor bias = requires_grad_(tensor({0.0f, 0.0f, 0.0f}));  // (3,)
  const Tensor x = ones({4, 3});
  backward(sum(x + bias));
  EXPECT_TRUE(testing::tensor_near(grad(bias), {3}, {4, 4, 4}, 0));
  EXPECT_TRUE(grad(bias).is_contiguous());
}

TEST(Engine, TheGraphIsFreedUnlessRetained) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor loss = sum(exp(x));
  backward(loss, {}, /*retain_graph=*/true);
  backward(loss);  // a second pass works because the first kept the graph
  EXPECT_TRUE(testing::tensor_near(grad(x), {2}, {2 * std::exp(1.0), 2 * std::exp(2.0)}, 1e-5));
  EXPECT_TRUE(testing::throws_error([&] { backward(loss); },
                                    {"backward", "freed", "SumBackward0", "retain_graph"}));
}

TEST(Engine, AChainOf100000OpsNeedsNoRecursion) {
  const Tensor x = requires_grad_(tensor({1.0f}));
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0f;
  backward(y);
  EXPECT_EQ(grad(x).item(), 1.0f);
  y = Tensor();  // freeing the 100,000-node chain must not overflow the stack either
  EXPECT_TRUE(is_leaf(x));
}

TEST(Engine, NoGradDetachAndRequiresGrad) {
  const Tensor x = requires_grad_(tensor({1.0f}));
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(requires_grad(x * 2.0f));
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_TRUE(is_grad_enabled());
  const Tensor d = detach(x * 2.0f);
  EXPECT_FALSE(requires_grad(d));
  EXPECT_TRUE(detach(x).shares_storage(x));            // the same data, without history
  EXPECT_FALSE(requires_grad(tensor({1.0f}) * 2.0f));  // no input needs grad: no history
  EXPECT_TRUE(testing::throws_error([&] { requires_grad_(x * 2.0f); },
                                    {"requires_grad_", "leaf", "MulBackward0"}));
  EXPECT_TRUE(testing::throws_error([] { requires_grad_(arange(3)); },
                                    {"requires_grad_", "float32", "torch.int64"}));
  EXPECT_TRUE(
      testing::throws_error([] { backward(tensor({1.0f})); }, {"backward", "requires grad"}));
}

TEST(Engine, ChunkChecksItsArgumentsAsTheRawChunkDoes) {
  const Tensor x = requires_grad_(tensor({1., 2., 3.}));
  EXPECT_TRUE(testing::throws_error([&] { chunk(x, 0); }, {"chunk", "chunks > 0", "got 0"}));
  EXPECT_TRUE(testing::throws_error([&] { chunk(x, 2, 1); }, {"chunk", "dim"}));
  const std::vector<Tensor> parts = chunk(x, 2);  // ceil(3 / 2) = 2: sizes 2 and 1, as torch
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].to_vector(), (std::vector<float>{3}));
}

TEST(Engine, RetainGradKeepsAnIntermediatesGradient) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor h = x * 3.0f;
  retain_grad(h);
  const Tensor unkept = h * 1.0f;
  backward(sum(unkept * unkept));
  EXPECT_TRUE(testing::tensor_near(grad(h), {2}, {6, 12}, 1e-6));  // d/dh sum(h^2) = 2h
  EXPECT_FALSE(grad(unkept).defined());
}

TEST(Engine, HooksReadAndReplaceGradients) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor h = x * 2.0f;
  Tensor seen;
  register_hook(h, [&](const Tensor& g) {
    seen = g;
    return raw::mul(g, 10.0f);  // replaces the gradient flowing on to x
  });
  register_hook(x, [](const Tensor&) { return Tensor(); });  // reads only
  backward(sum(h * 3.0f));
  EXPECT_TRUE(testing::tensor_near(seen, {2}, {3, 3}, 0));
  EXPECT_TRUE(testing::tensor_near(grad(x), {2}, {60, 60}, 0));
  EXPECT_TRUE(testing::throws_error(
      [&] { register_hook(tensor({1.0f}), [](const Tensor& g) { return g; }); },
      {"register_hook", "requires grad"}));
}

TEST(Engine, AutogradGradLeavesDotGradAlone) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor y = requires_grad_(tensor({3.0f}));
  const Tensor h = x * x;
  const Tensor out = sum(h) * y;
  const auto g = autograd::grad({out}, {x, h, y});
  EXPECT_TRUE(testing::tensor_near(g[0], {2}, {6, 12}, 0));  // 2x * y
  EXPECT_TRUE(testing::tensor_near(g[1], {2}, {3, 3}, 0));   // an intermediate: y
  EXPECT_TRUE(testing::tensor_near(g[2], {1}, {5}, 0));      // sum(x^2)
  EXPECT_FALSE(grad(x).defined());
  EXPECT_FALSE(grad(y).defined());
  // An input the output does not depend on gets zeros.
  const Tensor unused = requires_grad_(tensor({1.0f}));
  const auto z = autograd::grad({sum(x * 2.0f)}, {unused});
  EXPECT_TRUE(testing::tensor_near(z[0], {1}, {0}, 0));
}

TEST(Engine, MaskedPositionsGetExactlyZeroGradient) {
  const Tensor scores = requires_grad_(tensor({{1., 2., 3.}, {4., 5., 6.}, {7., 8., 9.}}));
  const Tensor future = raw::triu(ones({3, 3}, Dtype::boolean), 1);
  const Tensor w = softmax(masked_fill(scores, future, -INFINITY), -1);
  backward(sum(w * tensor({{1., 2., 3.}, {4., 5., 6.}, {7., 8., 9.}})));
  const Tensor g = grad(scores);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = i + 1; j < 3; ++j) EXPECT_EQ(g.at({i, j}), 0.0f) << i << "," << j;
  EXPECT_NE(g.at({1, 0}), 0.0f);
}

TEST(Engine, ChangingASavedTensorInPlaceIsCaught) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor a = tensor({3.0f, 4.0f});
  const Tensor y = sum(x * a);  // saves a for x's gradient
  raw::fill_(a, 0.0);           // ... and then a changes under it
  EXPECT_TRUE(
      testing::throws_error([&] { backward(y); }, {"backward", "modified in place", "(2,)"}));
}

TEST(Engine, AnomalyModeNamesTheFirstOpThatMadeNanOrInf) {
  const Tensor x = requires_grad_(tensor({-1.0f, 4.0f}));
  {
    AnomalyGuard anomaly;
    EXPECT_TRUE(testing::throws_error([&] { log(x); }, {"LogBackward0", "NaN", "forward", "(2,)"}));
    const Tensor z = requires_grad_(tensor({0.0f, 4.0f}));
    const Tensor s = sum(sqrt(z));  // fine forward; d sqrt / dz at 0 is Inf
    EXPECT_TRUE(testing::throws_error([&] { backward(s); }, {"SqrtBackward0", "Inf", "backward"}));
  }
  EXPECT_NO_THROW(log(x));  // off again: NaN is just a value
}

TEST(Engine, TheGraphsMemoryIsReleased) {
  std::weak_ptr<Node> node;
  std::weak_ptr<Storage> saved;
  {
    const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
    const Tensor e = exp(x);  // ExpBackward0 saves its own output: the classic cycle risk
    const Tensor loss = sum(e * x);
    node = e.impl().autograd->grad_fn;
    saved = e.impl().storage;
    EXPECT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());
  EXPECT_TRUE(saved.expired());
}

TEST(Engine, BackwardFreesSavedTensors) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  Tensor e = exp(x);
  std::weak_ptr<Storage> saved = e.impl().storage;
  const Tensor loss = sum(e);
  e = Tensor();
  EXPECT_FALSE(saved.expired());  // held by ExpBackward0 for the backward pass
  backward(loss);
  EXPECT_TRUE(saved.expired());  // released once backward has used it
}

TEST(Export, TextAndDot) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor w = requires_grad_(tensor({3.0f, 4.0f}));
  const Tensor h = x * w;
  const Tensor loss = sum(h + h);
  EXPECT_EQ(graph_text(loss),
            "SumBackward0 ()\n"
            "  AddBackward0 (2,)\n"
            "    MulBackward0 (2,)\n"
            "      leaf (2,) requires_grad\n"
            "      leaf (2,) requires_grad\n"
            "    MulBackward0 (2,) (shown above)\n");
  const std::string dot = graph_dot(loss);
  EXPECT_EQ(dot.rfind("digraph qkv {", 0), 0u);
  EXPECT_NE(dot.find("label=\"MulBackward0 (2,)\""), std::string::npos);
  EXPECT_NE(dot.find("shape=box"), std::string::npos);
  // MulBackward0 is drawn once with two edges into AddBackward0.
  size_t count = 0;
  for (size_t p = dot.find("MulBackward0"); p != std::string::npos;
       p = dot.find("MulBackward0", p + 1))
    ++count;
  EXPECT_EQ(count, 1u);
  // ... and reached twice: two edges from it to AddBackward0.
  const size_t first = dot.find("n2 -> n1;");
  ASSERT_NE(first, std::string::npos) << dot;
  EXPECT_NE(dot.find("n2 -> n1;", first + 1), std::string::npos) << dot;
}

// Leaves given names print them, as micrograd's picture labels a and b; the rest stay "leaf".
TEST(Export, NamedLeaves) {
  const Tensor x = requires_grad_(tensor({1.0f, 2.0f}));
  const Tensor w = requires_grad_(tensor({3.0f, 4.0f}));
  const Tensor loss = sum(x * w);
  EXPECT_EQ(graph_text(loss, {{x, "x"}}),
            "SumBackward0 ()\n"
            "  MulBackward0 (2,)\n"
            "    x (2,) requires_grad\n"
            "    leaf (2,) requires_grad\n");
  EXPECT_NE(graph_dot(loss, {{x, "x"}, {w, "w"}}).find("label=\"w (2,) requires_grad\""),
            std::string::npos);
}

// torch 1.13 names a @ b's node after the kernel its ranks select (checked in Python: dot, mv,
// squeeze_ after mm, mm, clone, and an unsafe view after bmm).
TEST(Engine, MatmulGradFnNamesFollowTorch) {
  auto name = [](Shape sa, Shape sb) {
    return grad_fn_name(matmul(requires_grad_(ones(sa)), requires_grad_(ones(sb))));
  };
  EXPECT_EQ(name({3}, {3}), "DotBackward0");
  EXPECT_EQ(name({2, 3}, {3}), "MvBackward0");
  EXPECT_EQ(name({3}, {3, 5}), "SqueezeBackward3");
  EXPECT_EQ(name({2, 3}, {3, 5}), "MmBackward0");
  EXPECT_EQ(name({4, 2, 3}, {3, 5}), "UnsafeViewBackward0");
  EXPECT_EQ(name({4, 2, 3}, {4, 3, 5}), "UnsafeViewBackward0");
  EXPECT_EQ(name({2, 3}, {4, 3, 5}), "CloneBackward0");
  EXPECT_EQ(name({4, 2, 3}, {3}), "UnsafeViewBackward0");
  EXPECT_EQ(name({3}, {4, 3, 5}), "UnsafeViewBackward0");
}

// Found by tests/fuzz (corpus/tensor_ops/regression_sum_dim_of_0d_backward): torch lets a 0-d
// tensor be reduced over "dim 0" (the identity); the backwards of these reductions used to
// fail (sum) or read past the empty shape (mean, var, max, min).
TEST(Engine, ReducingA0dTensorOverDimZeroBackpropagatesOne) {
  const std::vector<std::pair<const char*, std::function<Tensor(const Tensor&)>>> reductions = {
      {"sum", [](const Tensor& x) { return sum(x, 0); }},
      {"sum keepdim", [](const Tensor& x) { return sum(x, 0, true); }},
      {"mean", [](const Tensor& x) { return mean(x, 0); }},
      {"max", [](const Tensor& x) { return max(x, 0).values; }},
      {"min", [](const Tensor& x) { return min(x, 0).values; }},
  };
  for (const auto& [name, reduce] : reductions) {
    const Tensor x = requires_grad_(full({}, 3.0f));
    const Tensor y = reduce(x);
    EXPECT_EQ(y.dim(), 0) << name;
    EXPECT_EQ(y.item(), 3.0f) << name;
    backward(y);
    EXPECT_EQ(grad(x).dim(), 0) << name;
    EXPECT_EQ(grad(x).item(), 1.0f) << name;
  }
  // var over one element with correction 0 is 0, and so is its gradient (2 (x - mean) / 1).
  const Tensor x = requires_grad_(full({}, 3.0f));
  backward(var(x, 0, false, 0));
  EXPECT_EQ(grad(x).item(), 0.0f);
}

}  // namespace
}  // namespace qkv
