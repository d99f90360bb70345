// linear.cpp: the affine layer (see linear.h).
#include "nn/linear.h"

#include <cmath>

namespace qkv::nn {

Linear::Linear(int64_t in, int64_t out, bool has_bias, Generator* gen)
    : in_features(in), out_features(out) {
  check(in > 0 && out > 0, "Linear", "positive in_features and out_features, got ", in, " and ",
        out);
  // torch computes the two bounds by two different routes; they agree in exact arithmetic but
  // may differ in the last bit of a double, so both are computed exactly as torch does.
  //   weight: kaiming_uniform_(a = sqrt(5)): gain = sqrt(2 / (1 + a^2)), bound = sqrt(3) * gain /
  //   sqrt(in) bias:   bound = 1 / sqrt(in)
  const double fan_in = static_cast<double>(in);
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double weight_bound = std::sqrt(3.0) * (gain / std::sqrt(fan_in));
  Tensor w = Tensor::empty({out, in});
  uniform_(w, -weight_bound, weight_bound, gen);
  weight = register_parameter("weight", w);
  if (has_bias) {
    const double bias_bound = 1.0 / std::sqrt(fan_in);
    Tensor b = Tensor::empty({out});
    uniform_(b, -bias_bound, bias_bound, gen);
    bias = register_parameter("bias", b);
  }
}

Tensor Linear::forward(const Tensor& x) {
  check(x.defined() && x.dim() >= 1 && x.size(-1) == in_features, "Linear",
        "an input whose last dim is in_features = ", in_features, ", got shape ", shape_of(x));
  // x @ W^T + b, which is matmul(x, transpose(weight, 0, 1)) + bias, as one node (the
  // transpose is a view: the GEMM reads W through swapped strides).
  return linear(x, weight, bias);
}

}  // namespace qkv::nn
