// activation.h: activations and Dropout as modules, for Sequential.
#pragma once

#include "nn/module.h"

namespace qkv::nn {

class ReLU : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return relu(x); }
};

// GELU: x * Phi(x), exact (erf) by default; GeluApproximation::tanh gives GPT-2's form.
class GELU : public UnaryModule {
 public:
  explicit GELU(GeluApproximation approximate = GeluApproximation::none)
      : approximate(approximate) {}
  Tensor forward(const Tensor& x) override { return gelu(x, approximate); }
  GeluApproximation approximate;
};

class Tanh : public UnaryModule {
 public:
  Tensor forward(const Tensor& x) override { return tanh(x); }
};

// Dropout: in training, zero each element with probability p and scale the survivors by
// 1 / (1 - p), so the expected value is unchanged; in eval mode, the identity. The keep/drop
// draws are uniforms from the generator (default: the global one), one per element.
class Dropout : public UnaryModule {
 public:
  explicit Dropout(double p = 0.5, Generator* gen = nullptr);
  Tensor forward(const Tensor& x) override;
  double p;

 private:
  Generator* gen_;
};

// The functional form, used by Dropout and by attention's dropout on its weights.
Tensor dropout(const Tensor& x, double p, bool training, Generator* gen = nullptr);

}  // namespace qkv::nn
