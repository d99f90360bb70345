// test_training.cpp: end-to-end checks of the engine: the gradients of a small causal
// attention equal PyTorch's, and a 2-layer MLP learns XOR with plain SGD.
#include "autograd/all.h"
#include "tests/testing.h"

namespace qkv {
namespace {
#include "tests/autograd/torch_attention_grads.inc"

TEST(AttentionGradients, EqualPyTorchs) {
  manual_seed(123);
  const Tensor x = rand({6, 3});
  const Tensor W_query = requires_grad_(rand({3, 2}));
  const Tensor W_key = requires_grad_(rand({3, 2}));
  const Tensor W_value = requires_grad_(rand({3, 4}));
  const Tensor q = matmul(x, W_query), k = matmul(x, W_key), v = matmul(x, W_value);
  const Tensor scores = matmul(q, transpose(k, 0, 1)) / std::sqrt(2.0f);
  const Tensor future = raw::triu(ones({6, 6}, Dtype::boolean), 1);
  const Tensor weights = softmax(masked_fill(scores, future, -INFINITY), -1);
  const Tensor out = matmul(weights, v);
  const Tensor upstream = raw::sub(raw::div(raw::view(arange(0.0, 24.0), {6, 4}), 10.0f), 1.0f);
  const Tensor loss = sum(out * upstream);
  backward(loss);
  EXPECT_NEAR(loss.item<double>(), kTorchAttentionLoss, 1e-5);
  EXPECT_TRUE(testing::tensor_near(grad(W_query), {3, 2}, kTorchGradWQuery, 1e-5, 1e-5));
  EXPECT_TRUE(testing::tensor_near(grad(W_key), {3, 2}, kTorchGradWKey, 1e-5, 1e-5));
  EXPECT_TRUE(testing::tensor_near(grad(W_value), {3, 4}, kTorchGradWValue, 1e-5, 1e-5));
}

TEST(Training, TwoLayerMlpLearnsXorWithSgd) {
  manual_seed(0);
  const Tensor x = tensor({{0., 0.}, {0., 1.}, {1., 0.}, {1., 1.}});
  const Tensor y = raw::view(tensor({0., 1., 1., 0.}), {4, 1});
  // 2 -> 8 -> 1 with tanh, weights uniform in +-1/sqrt(fan_in) like nn.Linear.
  auto param = [](Shape s, float bound) {
    Tensor t = Tensor::empty(s);
    uniform_(t, -bound, bound);
    return requires_grad_(t);
  };
  const Tensor w1 = param({2, 8}, 0.7071f), b1 = param({8}, 0.7071f);
  const Tensor w2 = param({8, 1}, 0.3536f), b2 = param({1}, 0.3536f);
  const std::vector<Tensor> params{w1, b1, w2, b2};
  float loss_value = 1;
  for (int step = 0; step < 2000 && loss_value >= 0.01f; ++step) {
    const Tensor h = tanh(matmul(x, w1) + b1);
    const Tensor pred = sigmoid(matmul(h, w2) + b2);
    const Tensor loss = mean(pow(pred - y, 2.0f));
    for (const Tensor& p : params) zero_grad(p);
    backward(loss);
    {
      NoGradGuard no_grad;  // the update is not part of the model's history
      for (const Tensor& p : params) raw::copy_(p, raw::sub(p, raw::mul(grad(p), 2.0f)));
    }
    loss_value = loss.item();
  }
  EXPECT_LT(loss_value, 0.01f);
}

}  // namespace
}  // namespace qkv
