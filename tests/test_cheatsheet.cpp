// test_cheatsheet.cpp: every qkv line of tutorials/pytorch_to_qkv.md, compiled and run here,
// each checked to do what the PyTorch line beside it does (dtypes, shapes, values: PyTorch
// 1.13's where a number is printed). The last test reads the table and fails on a qkv line
// that does not appear in this file, so the table and the library cannot drift apart.
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "attention/all.h"
#include "tests/testing.h"

namespace qkv {
namespace {

std::string printed(const Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

TEST(CheatSheet, MakingTensors) {
  EXPECT_EQ(tensor({{1., 2.}, {3., 4.}}).dtype(), Dtype::float32);
  EXPECT_EQ(tensor({{1., 2.}, {3., 4.}}).shape(), Shape({2, 2}));
  EXPECT_EQ(tensor({0, 1, 2}).dtype(), Dtype::int64);  // torch.tensor([0, 1, 2]).dtype: int64
  EXPECT_EQ(printed(tensor({0, 1, 2})), "tensor([0, 1, 2])");
  EXPECT_EQ(tensor({true, false}).dtype(), Dtype::boolean);
  EXPECT_EQ(zeros({2, 3}).shape(), Shape({2, 3}));
  EXPECT_EQ(ones({2, 3}).to_vector<float>(), std::vector<float>(6, 1.0f));
  EXPECT_EQ(full({2, 3}, 7.0).to_vector<float>(), std::vector<float>(6, 7.0f));
  const Tensor x = rand({2, 3});
  EXPECT_EQ(zeros_like(x).shape(), x.shape());
  EXPECT_EQ(arange(5).dtype(), Dtype::int64);
  EXPECT_EQ(printed(arange(0.0, 1.0, 0.25)), "tensor([0.0000, 0.2500, 0.5000, 0.7500])");
  EXPECT_EQ(printed(eye(3)), "tensor([[1., 0., 0.],\n        [0., 1., 0.],\n        [0., 0., 1.]])");
  manual_seed(123);
  EXPECT_EQ(printed(rand({3, 2})),  // torch.manual_seed(123); torch.rand(3, 2)
            "tensor([[0.2961, 0.5166],\n        [0.2517, 0.6886],\n        [0.0740, 0.8665]])");
  EXPECT_EQ(randn({3, 2}).shape(), Shape({3, 2}));
  const Tensor r = randint(0, 10, {4});
  EXPECT_EQ(r.dtype(), Dtype::int64);
  for (const int64_t v : r.to_vector<int64_t>()) EXPECT_TRUE(v >= 0 && v < 10);
}

TEST(CheatSheet, ReadingATensor) {
  const Tensor x = tensor({{1., 2., 3.}, {4., 5., 6.}});
  EXPECT_EQ(x.shape(), Shape({2, 3}));
  EXPECT_EQ(x.size(0), 2);
  EXPECT_EQ(x.dim(), 2);
  EXPECT_EQ(x.numel(), 6);
  EXPECT_EQ(x.dtype(), Dtype::float32);
  const Tensor loss = sum(x);
  EXPECT_EQ(loss.item<float>(), 21.0f);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
#if !defined(__EMSCRIPTEN__)  // GoogleTest's capture of stdout ends the program under Node.js
  ::testing::internal::CaptureStdout();
  std::cout << x << "\n";
  EXPECT_EQ(::testing::internal::GetCapturedStdout(),
            "tensor([[1., 2., 3.],\n        [4., 5., 6.]])\n");
#endif
  const Tensor ids = tensor({0, 1, 2});
  EXPECT_EQ(to(ids, Dtype::float32).to_vector<float>(), (std::vector<float>{0, 1, 2}));
  EXPECT_FALSE(clone(x).shares_storage(x));
}

TEST(CheatSheet, ViewsAndShapes) {
  const Tensor x = tensor({{1., 2., 3.}, {4., 5., 6.}});
  const Tensor y = tensor({{7., 8., 9.}, {10., 11., 12.}});
  EXPECT_EQ(printed(select(x, 0, 0)), "tensor([1., 2., 3.])");
  EXPECT_EQ(printed(select(x, 1, 1)), "tensor([2., 5.])");
  EXPECT_EQ(slice(x, 0, 1, 3).shape(), Shape({1, 3}));  // x[1:3] of 2 rows: one row
  EXPECT_EQ(printed(slice(x, 1, 0, x.size(1), 2)), "tensor([[1., 3.],\n        [4., 6.]])");
  EXPECT_TRUE(view(x, {3, 2}).shares_storage(x));
  EXPECT_EQ(reshape(x, {-1}).shape(), Shape({6}));
  EXPECT_EQ(transpose(x, 0, 1).shape(), Shape({3, 2}));
  EXPECT_EQ(permute(x, {1, 0}).strides(), Shape({1, 3}));
  EXPECT_EQ(unsqueeze(x, 0).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(squeeze(unsqueeze(x, 0), 0).shape(), Shape({2, 3}));
  EXPECT_TRUE(contiguous(x).shares_storage(x));  // already contiguous: itself
  EXPECT_TRUE(contiguous(transpose(x, 0, 1)).is_contiguous());
  EXPECT_EQ(expand(x, {4, 2, 3}).strides(), Shape({0, 3, 1}));
  EXPECT_EQ(cat({x, y}, 0).shape(), Shape({4, 3}));
  EXPECT_EQ(stack({x, y}, 0).shape(), Shape({2, 2, 3}));
  EXPECT_EQ(split(x, 1, 0).size(), 2u);
}

TEST(CheatSheet, ArithmeticAndReductions) {
  const Tensor x = tensor({{1., 2., 3.}, {4., 5., 6.}});
  const Tensor y = tensor({10., 20., 30.});
  const Tensor w = ones({3, 2});
  EXPECT_EQ(printed(x + y), "tensor([[11., 22., 33.],\n        [14., 25., 36.]])");
  EXPECT_EQ((x * 2.0f).to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ((1.0f - x).to_vector<float>(), (std::vector<float>{0, -1, -2, -3, -4, -5}));
  EXPECT_EQ(printed(matmul(x, w)), "tensor([[ 6.,  6.],\n        [15., 15.]])");
  const Tensor a = tensor({1., 2., 3.}), b = tensor({4., 5., 6.});
  EXPECT_EQ(matmul(a, b).dim(), 0);
  EXPECT_EQ(matmul(a, b).item<float>(), 32.0f);
  EXPECT_EQ(sum(x).item<float>(), 21.0f);
  EXPECT_EQ(printed(sum(x, 1, true)), "tensor([[ 6.],\n        [15.]])");
  EXPECT_EQ(printed(mean(x, -1)), "tensor([2., 5.])");
  EXPECT_EQ(printed(var(x, -1, false, 0)), "tensor([0.6667, 0.6667])");
  EXPECT_EQ(printed(max(x, 1, true).values), "tensor([[3.],\n        [6.]])");
  EXPECT_EQ(printed(argmax(x, -1)), "tensor([2, 2])");
  EXPECT_EQ(printed(exp(x)).substr(0, 17), "tensor([[  2.7183");
  EXPECT_TRUE(testing::tensor_near(log(exp(x)), x, 1e-6));
  EXPECT_EQ(printed(sqrt(x)).substr(0, 23), "tensor([[1.0000, 1.4142");
  EXPECT_EQ(pow(x, 2.0f).to_vector<float>(), (std::vector<float>{1, 4, 9, 16, 25, 36}));
  // torch.softmax(torch.tensor([[1., 2., 3.], [4., 5., 6.]]), dim=-1)
  EXPECT_EQ(printed(softmax(x, -1)),
            "tensor([[0.0900, 0.2447, 0.6652],\n        [0.0900, 0.2447, 0.6652]])");
  EXPECT_EQ(printed(log_softmax(x, -1)),
            "tensor([[-2.4076, -1.4076, -0.4076],\n        [-2.4076, -1.4076, -0.4076]])");
  EXPECT_EQ(tril(ones({4, 4})).to_vector<float>()[1], 0.0f);
  const Tensor mask = tensor({{false, true, true}, {false, false, true}});
  EXPECT_EQ(printed(masked_fill(x, mask, -INFINITY)),
            "tensor([[1., -inf, -inf],\n        [4., 5., -inf]])");
  {
    const Tensor x = tensor({-1., 2.});  // torch.where(x > 0, x, 0 * x) prints tensor([-0., 2.])
    EXPECT_EQ(printed(where(gt(x, zeros_like(x)), x, 0.0f * x)), "tensor([-0., 2.])");
    EXPECT_EQ(printed(relu(x)), "tensor([0., 2.])");
    EXPECT_EQ(printed(gelu(x)), "tensor([-0.1587,  1.9545])");
    EXPECT_EQ(printed(tanh(x)), "tensor([-0.7616,  0.9640])");
  }
}

TEST(CheatSheet, Autograd) {
  manual_seed(0);
  Tensor w = requires_grad_(rand({3}));
  EXPECT_TRUE(requires_grad(w));
  Tensor y = w * 2.0f;
  retain_grad(y);
  EXPECT_EQ(grad_fn_name(y), "MulBackward0");
  const Tensor loss = sum(y * y);
  EXPECT_FALSE(grad(w).defined());
  backward(loss);
  EXPECT_TRUE(testing::tensor_near(grad(w), detach(w) * 8.0f, 1e-6));  // d/dw (2w)^2 = 8w
  EXPECT_TRUE(grad(y).defined());
  zero_grad(w);
  EXPECT_FALSE(grad(w).defined());
  const Tensor x = w;
  EXPECT_FALSE(requires_grad(detach(x)));
  { NoGradGuard no_grad; }
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(requires_grad(w * 2.0f));
  }
}

TEST(CheatSheet, ModulesLossesAndOptimizers) {
  testing::TempDir dir;
  const std::string path = dir.file("m.safetensors");
  manual_seed(0);
  nn::Linear linear(3, 4);
  nn::Embedding table(10, 4);
  nn::LayerNorm norm(4);
  nn::Sequential model({std::make_shared<nn::Linear>(3, 4), std::make_shared<nn::ReLU>()});
  const Tensor x = rand({5, 3});
  EXPECT_EQ(model(x).shape(), Shape({5, 4}));
  EXPECT_EQ(model.parameters().size(), 2u);
  EXPECT_EQ(model.named_parameters()[0].first, "0.weight");
  model.eval();
  model.train();
  const Tensor logits = rand({5, 4}), targets = tensor({0, 1, 2, 3, 0});
  EXPECT_TRUE(std::isfinite(cross_entropy(logits, targets).item<float>()));
  const Tensor target = zeros({5, 4});
  const Tensor y = model(x);
  EXPECT_TRUE(std::isfinite(nn::mse_loss(y, target).item<float>()));
  nn::AdamW opt(model.parameters(), 1e-3);
  opt.zero_grad();
  backward(nn::mse_loss(model(x), target));
  nn::clip_grad_norm_(model.parameters(), 1.0);
  opt.step();
  EXPECT_EQ(opt.steps(), 1);
  nn::save(model, path);
  nn::load(model, path);
  manual_seed(1);
  const Tensor q = rand({1, 2, 4, 8}), k = rand({1, 2, 4, 8}), v = rand({1, 2, 4, 8});
  EXPECT_EQ(attention::scaled_dot_product_attention(q, k, v, {.causal = true}).output.shape(),
            Shape({1, 2, 4, 8}));
  const int before = num_threads();
  set_num_threads(2);
  set_num_threads(before);
  EXPECT_EQ(linear.weight.shape(), Shape({4, 3}));
  EXPECT_EQ(table.weight.shape(), Shape({10, 4}));
  EXPECT_EQ(norm.weight.shape(), Shape({4}));
}

// Every qkv cell of the table (each `...` in the second column) appears in this file.
TEST(CheatSheet, EveryLineOfTheTableIsCompiledHere) {
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  };
  const std::string table = read(std::string(QKV_SOURCE_DIR) + "/tutorials/pytorch_to_qkv.md");
  const std::string here = read(std::string(QKV_SOURCE_DIR) + "/tests/test_cheatsheet.cpp");
  std::istringstream lines(table);
  int cells = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| `", 0) != 0) continue;  // a row of a table, not its header
    // The second column: between the second and third " | " of the row.
    const size_t first = line.find(" | ");
    const size_t second = line.find(" | ", first + 3);
    ASSERT_NE(second, std::string::npos) << line;
    const std::string qkv = line.substr(first + 3, second - first - 3);
    for (size_t at = qkv.find('`'); at != std::string::npos; at = qkv.find('`', at + 1)) {
      const size_t end = qkv.find('`', at + 1);
      ASSERT_NE(end, std::string::npos) << line;
      const std::string code = qkv.substr(at + 1, end - at - 1);
      EXPECT_NE(here.find(code), std::string::npos) << "not compiled here: " << code;
      ++cells;
      at = end;
    }
  }
  EXPECT_GE(cells, 60);
}

}  // namespace
}  // namespace qkv
