// activation.cpp: Dropout (the activations are one-liners in the header).
#include "nn/activation.h"

namespace qkv::nn {

Dropout::Dropout(double prob, Generator* gen) : p(prob), gen_(gen) {
  check(prob >= 0.0 && prob <= 1.0, "Dropout", "a probability in [0, 1], got ", prob);
}

Tensor Dropout::forward(const Tensor& x) {
  return dropout(x, p, is_training(), gen_);
}

Tensor dropout(const Tensor& x, double p, bool training, Generator* gen) {
  check(p >= 0.0 && p <= 1.0, "dropout", "a probability in [0, 1], got ", p);
  if (!training || p == 0.0) return x;
  if (p == 1.0) return x * 0.0f;
  // keep where u < 1 - p, then scale by 1 / (1 - p): a constant mask times x, so the gradient
  // is the same mask times dout.
  const Tensor u = rand(x.shape(), gen);
  const Tensor keep = raw::to(raw::lt(u, static_cast<float>(1.0 - p)), Dtype::float32);
  return x * raw::mul(keep, static_cast<float>(1.0 / (1.0 - p)));
}

}  // namespace qkv::nn
