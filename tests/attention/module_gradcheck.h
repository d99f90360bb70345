// module_gradcheck.h: gradcheck for a whole module, its input and every parameter, shared by
// the attention tests.
#pragma once

#include <cmath>
#include <functional>

#include "nn/all.h"
#include "tests/testing.h"

namespace qkv::attention {

// Gradcheck for a module: the input through qkv::gradcheck, and every parameter by central
// differences on the parameter itself (perturbed in place), against the analytic gradient of
// <upstream, out> for a random upstream.
inline ::testing::AssertionResult gradcheck_module(nn::Module& m,
                                                   const std::function<Tensor()>& run_forward,
                                                   Tensor& input) {
  const Tensor saved_input = input;
  auto f_input = [&](const std::vector<Tensor>& in) {
    input = in[0];  // run_forward reads the input through this reference
    return run_forward();
  };
  const GradcheckResult r = gradcheck(f_input, {saved_input});
  input = saved_input;
  if (!r.ok) return ::testing::AssertionFailure() << "input: " << r.summary;
  // Parameters: analytic gradient of <g, f> against central differences, element by element.
  if (m.parameters().empty()) return ::testing::AssertionSuccess();
  m.zero_grad();
  Generator g(99);
  const Tensor out0 = run_forward();
  const Tensor upstream = randn(out0.shape(), &g);
  backward(sum(out0 * upstream));
  for (const auto& [name, p] : m.named_parameters()) {
    const std::vector<float> analytic = grad(p).to_vector<float>();
    float* d = p.data_ptr();
    for (int64_t i = 0; i < p.numel(); ++i) {
      NoGradGuard no_grad;
      const float saved = d[i];
      d[i] = saved + 1e-2f;
      const double up = raw::sum(raw::mul(run_forward(), upstream)).item<float>();
      d[i] = saved - 1e-2f;
      const double down = raw::sum(raw::mul(run_forward(), upstream)).item<float>();
      d[i] = saved;
      const double numeric = (up - down) / 2e-2;
      const double a = analytic[static_cast<size_t>(i)];
      if (std::fabs(a - numeric) > 2e-3 + 2e-2 * std::fabs(numeric))
        return ::testing::AssertionFailure()
               << name << "[" << i << "]: analytic " << a << ", numeric " << numeric;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace qkv::attention
