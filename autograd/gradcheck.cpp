// gradcheck.cpp: central differences against autograd (see gradcheck.h for the numbers).
#include "autograd/gradcheck.h"

#include <cmath>
#include <cstdio>

#include "autograd/engine.h"
#include "autograd/grad_mode.h"
#include "tensor/random.h"
#include "tensor/view.h"

namespace qkv {
namespace {
double dot(const Tensor& a, const std::vector<double>& g) {
  const std::vector<double> v = a.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += v[i] * g[i];
  return s;
}
}  // namespace

GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                          const std::vector<Tensor>& inputs, const GradcheckOptions& opt) {
  check(!inputs.empty(), "gradcheck", "at least one input, got none");
  std::vector<Tensor> xs;
  for (const Tensor& in : inputs) {
    check(in.defined() && in.dtype() == Dtype::float32, "gradcheck", "float32 inputs, got ",
          in.defined() ? dtype_name(in.dtype()) : "an undefined one");
    xs.push_back(requires_grad_(raw::clone(in)));
  }
  // Analytic: autograd's gradient of <g, f(x)>.
  const Tensor out = f(xs);
  check(out.defined() && out.dtype() == Dtype::float32, "gradcheck",
        "f to return a float32 tensor, got ", out.defined() ? dtype_name(out.dtype()) : "nothing");
  Generator gen(opt.seed);
  const Tensor g = randn(out.shape(), &gen);
  const std::vector<double> gv = g.to_vector<double>();
  check(requires_grad(out), "gradcheck",
        "f's output to depend on its inputs, got one without history");
  const std::vector<Tensor> analytic = autograd::grad({out}, xs, {g});

  // Numeric: nudge one element at a time, under no_grad, on plain copies.
  GradcheckResult result;
  NoGradGuard no_grad;
  std::vector<Tensor> plain;
  for (const Tensor& x : xs) plain.push_back(raw::clone(detach(x)));
  for (size_t k = 0; k < plain.size(); ++k) {
    GradcheckInputReport rep;
    const std::vector<double> a = analytic[k].to_vector<double>();
    float* p = plain[k].data_ptr();
    double worst = 0;
    for (int64_t j = 0; j < plain[k].numel(); ++j) {
      const float keep = p[j];
      p[j] = static_cast<float>(keep + opt.eps);
      const double up = dot(f(plain), gv);
      p[j] = static_cast<float>(keep - opt.eps);
      const double down = dot(f(plain), gv);
      p[j] = keep;
      // Divide by the step actually taken in float32, not the nominal 2 eps.
      const double step = static_cast<double>(static_cast<float>(keep + opt.eps)) -
                          static_cast<double>(static_cast<float>(keep - opt.eps));
      const double numeric = (up - down) / step;
      const double err = std::fabs(a[static_cast<size_t>(j)] - numeric);
      rep.max_abs_error = std::max(rep.max_abs_error, err);
      rep.max_rel_error = std::max(rep.max_rel_error, err / std::max(std::fabs(numeric), 1e-6));
      const double excess = err - (opt.atol + opt.rtol * std::fabs(numeric));
      if (!(excess <= 0) && (rep.ok || excess > worst)) {
        rep.ok = false;
        worst = excess;
        rep.worst_index = j;
      }
    }
    char line[256];
    std::snprintf(line, sizeof line, "input %zu %s: max abs %.2e, max rel %.2e %s%s", k,
                  shape_str(plain[k].shape()).c_str(), rep.max_abs_error, rep.max_rel_error,
                  rep.ok ? "ok" : "FAILED at flat index ",
                  rep.ok ? "" : std::to_string(rep.worst_index).c_str());
    result.summary += std::string(line) + "\n";
    result.ok = result.ok && rep.ok;
    result.inputs.push_back(rep);
  }
  return result;
}

}  // namespace qkv
