// optim.cpp: the update rules of optim.h, written the way torch.optim's single-tensor loops
// write them, so the float32 arithmetic matches step for step.
#include "nn/optim.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "tensor/thread_pool.h"

namespace qkv::nn {

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)), lr_(lr) {
  check(!params_.empty(), "Optimizer", "at least one parameter, got none");
  for (size_t i = 0; i < params_.size(); ++i)
    check(requires_grad(params_[i]) && is_leaf(params_[i]), "Optimizer",
          "parameters that are leaves requiring grad, got parameter ", i, " that is not");
  set_lr(lr);
}

void Optimizer::set_lr(double lr) {
  check(lr >= 0 && std::isfinite(lr), "Optimizer", "a finite learning rate >= 0, got ", lr);
  lr_ = lr;
}

void Optimizer::zero_grad() {
  for (const Tensor& p : params_) qkv::zero_grad(p);
}

std::vector<Tensor>& Optimizer::buffers(const std::string& kind, bool zero_init) {
  auto& b = buffers_[kind];
  b.resize(params_.size());
  if (zero_init)
    for (size_t i = 0; i < b.size(); ++i)
      if (!b[i].defined()) b[i] = zeros(params_[i].shape());
  return b;
}

std::vector<std::pair<std::string, Tensor>> Optimizer::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [kind, list] : buffers_)
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i].defined()) out.emplace_back(kind + "." + std::to_string(i), list[i]);
  return out;
}

void Optimizer::load_state(const std::vector<std::pair<std::string, Tensor>>& state,
                           int64_t steps) {
  check(steps >= 0, "Optimizer::load_state", "a step count >= 0, got ", steps);
  std::map<std::string, std::vector<Tensor>> loaded;
  for (const auto& [key, t] : state) {
    const size_t dot = key.rfind('.');
    check(dot != std::string::npos, "Optimizer::load_state", "names like \"exp_avg.0\", got \"",
          key, "\"");
    const std::string kind = key.substr(0, dot), index = key.substr(dot + 1);
    check(!index.empty() && index.size() < 10 &&
              index.find_first_not_of("0123456789") == std::string::npos,
          "Optimizer::load_state", "names like \"exp_avg.0\", got \"", key, "\"");
    const size_t i = std::stoul(index);
    const auto kinds = state_kinds();
    check(std::find(kinds.begin(), kinds.end(), kind) != kinds.end(), "Optimizer::load_state",
          "state that ", name(), " keeps, got unexpected key \"", key, "\"");
    check(t.defined() && t.dtype() == Dtype::float32, "Optimizer::load_state",
          "float32 tensors, got \"", key, "\" of another dtype");
    check(i < params_.size(), "Optimizer::load_state", "a parameter index below ", params_.size(),
          ", got \"", key, "\"");
    check(t.shape() == params_[i].shape(), "Optimizer::load_state", "\"", key,
          "\" of its parameter's shape ", params_[i].shape(), ", got ", t.shape());
    auto& list = loaded[kind];
    if (list.empty()) list.resize(params_.size());
    check(!list[i].defined(), "Optimizer::load_state", "each key once, got \"", key, "\" twice");
    for (const float x : t.to_vector<float>())
      check(std::isfinite(x) && (x >= 0 || !nonnegative(kind)), "Optimizer::load_state", "\"", key,
            "\" of finite values", nonnegative(kind) ? " >= 0" : "", ", got ", x);
    list[i] = raw::clone(t);
  }
  // Every kind of buffer covers the same parameters: Adam's two moments come as a pair.
  for (const auto& [kind, list] : loaded)
    for (const auto& [other, other_list] : loaded)
      for (size_t i = 0; i < params_.size(); ++i)
        check(list[i].defined() == other_list[i].defined(), "Optimizer::load_state", "\"", kind,
              ".", i, "\" and \"", other, ".", i, "\" together, got ",
              list[i].defined() ? kind : other, ".", i, " alone");
  buffers_ = std::move(loaded);
  steps_ = steps;
}

SGD::SGD(std::vector<Tensor> params, double lr, double m, double d, double wd, bool n)
    : Optimizer(std::move(params), lr), momentum(m), dampening(d), weight_decay(wd), nesterov(n) {
  check(m >= 0 && wd >= 0, "SGD", "momentum and weight_decay >= 0, got ", m, " and ", wd);
  check(!n || (m > 0 && d == 0), "SGD", "nesterov with momentum > 0 and dampening 0, got momentum ",
        m, " and dampening ", d);
}

void SGD::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    Tensor d_p = grad(p);
    if (!d_p.defined()) continue;
    if (weight_decay != 0) d_p = raw::add(d_p, raw::mul(p, static_cast<float>(weight_decay)));
    if (momentum != 0) {
      Tensor& buf = buffers("momentum_buffer", false)[i];
      // The buffer starts as the gradient itself the first time (torch's rule).
      buf = !buf.defined() ? raw::clone(d_p)
                           : raw::add(raw::mul(buf, static_cast<float>(momentum)),
                                      raw::mul(d_p, static_cast<float>(1 - dampening)));
      d_p = nesterov ? raw::add(d_p, raw::mul(buf, static_cast<float>(momentum))) : buf;
    }
    raw::copy_(p, raw::sub(p, raw::mul(d_p, static_cast<float>(lr_))));
  }
  ++steps_;
}

namespace {

// One Adam step's float constants, handed to the element loop by value. The loop owns that
// copy, so the compiler knows no store to p, m or v can change a constant, and keeps them all in
// registers. Read through references (a lambda's [&] captures), they had to be reloaded after
// every store, and the loop stayed scalar: a division and a square root per element, one at a
// time, 1.5 ms of the larger tiny GPT's 70 ms step (0.55-0.62 ms as vector code). The kind of
// weight decay is a template parameter for the same reason: no test inside the loop.
struct AdamScalars {
  float step_size, bias_correction2_sqrt, b1, b2, one_minus_b1, one_minus_b2, eps, wd, decay;
};
enum class Decay { none, coupled, decoupled };

// One pass per element, in torch's order of operations (float):
//   p *= 1 - lr wd (AdamW)  or  g += wd p (Adam, when wd != 0)
//   m = b1 m + (1 - b1) g          v = b2 v + (1 - b2) g^2
//   p -= step_size * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// Vector or scalar, each element goes through the same IEEE operations.
template <Decay kDecay>
void adam_update(const AdamScalars c, float* pp, float* pm, float* pv, const float* pg, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    float g = pg[j], p = pp[j];
    if constexpr (kDecay == Decay::decoupled) p = p * c.decay;
    if constexpr (kDecay == Decay::coupled) g = g + p * c.wd;
    const float m = pm[j] * c.b1 + g * c.one_minus_b1;
    const float v = pv[j] * c.b2 + g * g * c.one_minus_b2;
    pm[j] = m;
    pv[j] = v;
    const float denom = std::sqrt(v) / c.bias_correction2_sqrt + c.eps;
    pp[j] = p - m / denom * c.step_size;
  }
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, double lr, double b1, double b2, double e, double wd,
           bool decoupled)
    : Optimizer(std::move(params), lr),
      beta1(b1),
      beta2(b2),
      eps(e),
      weight_decay(wd),
      decoupled_weight_decay(decoupled) {
  check(b1 >= 0 && b1 < 1 && b2 >= 0 && b2 < 1, "Adam", "betas in [0, 1), got ", b1, " and ", b2);
  check(e >= 0 && wd >= 0, "Adam", "eps and weight_decay >= 0, got ", e, " and ", wd);
}

void Adam::step() {
  NoGradGuard no_grad;
  const int64_t t = steps_ + 1;
  // Python floats in torch: these scalars are computed in double, then used as float.
  const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(t));
  const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(t));
  const AdamScalars c{.step_size = static_cast<float>(lr_ / bias_correction1),
                      .bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2)),
                      .b1 = static_cast<float>(beta1),
                      .b2 = static_cast<float>(beta2),
                      .one_minus_b1 = static_cast<float>(1 - beta1),
                      .one_minus_b2 = static_cast<float>(1 - beta2),
                      .eps = static_cast<float>(eps),
                      .wd = static_cast<float>(weight_decay),
                      .decay = static_cast<float>(1 - lr_ * weight_decay)};  // AdamW: p *= decay
  std::vector<Tensor>& ms = buffers("exp_avg");
  std::vector<Tensor>& vs = buffers("exp_avg_sq");
  // Every element is updated on its own, so the parameters are laid end to end as one long
  // range and split over the thread pool in equal slices (one slice may span several
  // parameters): a 128 x 512 weight and a 128-wide bias share the work evenly. No element
  // depends on another, so the result is the same on any number of threads.
  struct Span {
    float *p, *m, *v;
    const float* g;
    int64_t begin, n;  // where this parameter starts in the long range, and its size
  };
  std::vector<Span> spans;
  std::vector<Tensor> keep_alive;  // contiguous copies of non-contiguous gradients
  int64_t total = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& p = params_[i];
    const Tensor g_t = grad(p);
    if (!g_t.defined()) continue;
    check(p.is_contiguous(), "Adam", "contiguous parameters, got parameter ", i, " of strides ",
          p.strides());
    keep_alive.push_back(raw::contiguous(g_t));
    spans.push_back({p.data_ptr(), ms[i].data_ptr(), vs[i].data_ptr(), keep_alive.back().data_ptr(),
                     total, p.numel()});
    total += p.numel();
    p.impl().storage->bump_version();  // written in place below, as raw::copy_ would count it
  }
  const Decay decay = decoupled_weight_decay ? Decay::decoupled
                      : c.wd != 0.0f         ? Decay::coupled
                                             : Decay::none;
  parallel_chunks(total, [&](int64_t lo, int64_t hi) {
    for (const Span& s : spans) {
      const int64_t a = std::max(lo, s.begin), b = std::min(hi, s.begin + s.n);
      if (a >= b) continue;
      const int64_t o = a - s.begin;
      if (decay == Decay::decoupled)
        adam_update<Decay::decoupled>(c, s.p + o, s.m + o, s.v + o, s.g + o, b - a);
      else if (decay == Decay::coupled)
        adam_update<Decay::coupled>(c, s.p + o, s.m + o, s.v + o, s.g + o, b - a);
      else
        adam_update<Decay::none>(c, s.p + o, s.m + o, s.v + o, s.g + o, b - a);
    }
  });
  ++steps_;
}

double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm) {
  check(max_norm > 0, "clip_grad_norm_", "max_norm > 0, got ", max_norm);
  double total = 0;
  for (const Tensor& p : params) {
    const Tensor g = grad(p);
    if (!g.defined()) continue;
    for (double v : g.to_vector<double>()) total += v * v;
  }
  const double norm = std::sqrt(total);
  // torch does this arithmetic on float32 tensors: clip_coef = max_norm / (total_norm + 1e-6),
  // clamped to 1 and multiplied into every gradient. The same float steps give the same bits.
  const float coef = static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f);
  if (coef < 1.0f) {
    NoGradGuard no_grad;
    for (const Tensor& p : params) {
      const Tensor g = grad(p);
      if (g.defined()) raw::copy_(g, raw::mul(g, coef));
    }
  }
  return norm;
}

double WarmupCosine::lr(int64_t step) const {
  check(step >= 0, "WarmupCosine", "a step >= 0, got ", step);
  check(warmup_steps >= 0 && warmup_steps <= total_steps && min_lr <= base_lr && min_lr >= 0,
        "WarmupCosine", "0 <= warmup_steps <= total_steps and 0 <= min_lr <= base_lr, got ",
        "warmup_steps ", warmup_steps, ", total_steps ", total_steps, ", min_lr ", min_lr,
        ", base_lr ", base_lr);
  if (step < warmup_steps) return base_lr * static_cast<double>(step + 1) / warmup_steps;
  if (step >= total_steps) return min_lr;
  const double progress =
      static_cast<double>(step - warmup_steps) / static_cast<double>(total_steps - warmup_steps);
  return min_lr + 0.5 * (base_lr - min_lr) * (1 + std::cos(std::numbers::pi * progress));
}

}  // namespace qkv::nn
