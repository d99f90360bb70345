// my_model: a starting point for your own program on qkv. It makes its data (y = sin(x) with a
// little noise), trains a small network on it with AdamW, prints the loss, and saves the
// trained weights as safetensors, which PyTorch can load (README.md, "Models, optimizers and
// checkpoints"). Change the model, the data or the loop; the build is in CMakeLists.txt here.
#include <cmath>
#include <exception>
#include <iostream>
#include <memory>
#include <vector>

#include "attention/all.h"  // every floor: tensor, autograd, nn, attention

using namespace qkv;

// The program's work. An error anywhere in it (a qkv::Error names the operation and the shapes)
// reaches main as an exception.
int run() {
  check_environment();  // the QKV_ variables (tensor/environment.h): a typo is an error
  manual_seed(0);  // torch.manual_seed(0): the same initial weights as PyTorch's
  // The data: 256 points x in [-3, 3), targets sin(x) + noise.
  const Tensor x = rand({256, 1}) * 6.0f - 3.0f;
  std::vector<float> y_values;
  for (float v : x.to_vector<float>()) y_values.push_back(std::sin(v));
  const Tensor y = from_vector(y_values, {256, 1}) + randn({256, 1}) * 0.05f;

  // The model: Linear(1, 32) -> Tanh -> Linear(32, 1), as nn.Sequential would build it.
  nn::Sequential model({std::make_shared<nn::Linear>(1, 32), std::make_shared<nn::Tanh>(),
                        std::make_shared<nn::Linear>(32, 1)});
  nn::AdamW optimizer(model.parameters(), 0.01);

  for (int step = 0; step <= 300; ++step) {
    const Tensor loss = nn::mse_loss(model(x), y);
    optimizer.zero_grad();
    backward(loss);
    optimizer.step();
    if (step % 50 == 0) std::cout << "step " << step << " loss " << loss.item<float>() << "\n";
  }
  nn::save(model, "my_model.safetensors");  // keys "0.weight", "0.bias", "2.weight", "2.bias"
  std::cout << "saved my_model.safetensors\n";
  return 0;
}

// Any error ends the program with one line on stderr, "my_model: error: ...", and status 1,
// never with std::terminate's "terminate called after throwing ...".
int main() {
  try {
    return run();
  } catch (const std::exception& e) {  // qkv::Error is a std::runtime_error
    std::cerr << "my_model: error: " << e.what() << "\n";
    return 1;
  }
}
