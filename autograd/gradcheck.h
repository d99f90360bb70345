// gradcheck.h: checking a backward formula against finite differences.
//
// For f and inputs x, pick a random upstream gradient g (a plain sum() would hide a wrong
// formula that happens to have the right row sums) and compare
//   analytic:  d<g, f(x)>/dx   from autograd
//   numeric:   (<g, f(x + eps e_j)> - <g, f(x - eps e_j)>) / (2 eps)   for every element j
// <g, f> is accumulated in double, so the only float32 noise is f's own rounding.
//
// Why these defaults: f runs in float32 (relative rounding ~6e-8). A central difference has
// truncation error ~eps^2 |f'''| / 6 and rounding error ~6e-8 |<g, f>| / eps; eps = 1e-2
// balances them for values of order 1, leaving errors around 1e-4. A pass needs
// |analytic - numeric| <= atol + rtol * |numeric| for every element: atol 1e-3, rtol 1e-2
// catch any wrong formula (those are off by O(1)) without flagging rounding. Keep inputs
// away from kinks (relu at 0, max at a tie), where no derivative exists.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace qkv {

struct GradcheckOptions {
  double eps = 1e-2;
  double atol = 1e-3;
  double rtol = 1e-2;
  uint64_t seed = 0;  // for the random upstream gradient
};

struct GradcheckInputReport {
  double max_abs_error = 0;  // max over elements of |analytic - numeric|
  double max_rel_error = 0;  // the same over max(|numeric|, 1e-6)
  int64_t worst_index = -1;  // flat index of the element furthest outside the tolerance
  bool ok = true;
};

struct GradcheckResult {
  bool ok = true;
  std::vector<GradcheckInputReport> inputs;
  std::string summary;  // one line per input: "input 0 (2, 3): max abs 3.1e-05, max rel 2.2e-04 ok"
};

// f takes copies of `inputs` that require grad and returns one float32 tensor.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace qkv
