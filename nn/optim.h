// optim.h: optimizers with PyTorch's update formulas and defaults, gradient clipping, and a
// learning-rate schedule.
//
//   SGD    p -= lr * v,   v = momentum * v + (1 - dampening) * (g + wd * p)   (v = g + wd p at
//   first) Adam   m = b1 m + (1 - b1) g,  v = b2 v + (1 - b2) g^2   (g += wd * p first)
//          p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//   AdamW  p *= 1 - lr * wd, then Adam without weight decay in g (decoupled weight decay)
// Defaults: Adam lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 0; AdamW the same with
// weight_decay 1e-2: torch.optim's. Updates run under no_grad and skip parameters without grad.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autograd/all.h"

namespace qkv::nn {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  virtual std::string name() const = 0;  // "SGD", "Adam", "AdamW": checkpoints record it
  void zero_grad();  // forgets every parameter's .grad (torch's set_to_none=True)
  double lr() const { return lr_; }
  void set_lr(double lr);
  int64_t steps() const { return steps_; }
  const std::vector<Tensor>& params() const { return params_; }

  // The optimizer's state as named tensors ("exp_avg.3" is parameter 3's first moment) and
  // its step count, for checkpoints; load_state puts them back (shapes must match).
  virtual std::vector<std::pair<std::string, Tensor>> state() const = 0;
  virtual std::vector<std::string> state_kinds() const = 0;  // the buffer names state() uses
  // Whether a kind of buffer can only hold values >= 0 (Adam's second moment): load_state
  // refuses a negative one, which would make sqrt(v) NaN on the next step.
  virtual bool nonnegative(const std::string&) const { return false; }
  void load_state(const std::vector<std::pair<std::string, Tensor>>& state, int64_t steps);

 protected:
  std::vector<Tensor> params_;
  double lr_;
  int64_t steps_ = 0;
  // One buffer per parameter, per kind ("momentum_buffer", "exp_avg", ...): zeros at first,
  // or undefined until first written when zero_init is false.
  std::vector<Tensor>& buffers(const std::string& kind, bool zero_init = true);
  std::map<std::string, std::vector<Tensor>> buffers_;
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, double lr, double momentum = 0, double dampening = 0,
      double weight_decay = 0, bool nesterov = false);
  void step() override;
  std::string name() const override { return "SGD"; }
  std::vector<std::string> state_kinds() const override { return {"momentum_buffer"}; }
  std::vector<std::pair<std::string, Tensor>> state() const override { return named_buffers(); }
  double momentum, dampening, weight_decay;
  bool nesterov;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8, double weight_decay = 0, bool decoupled_weight_decay = false);
  void step() override;
  std::string name() const override { return decoupled_weight_decay ? "AdamW" : "Adam"; }
  std::vector<std::string> state_kinds() const override { return {"exp_avg", "exp_avg_sq"}; }
  bool nonnegative(const std::string& kind) const override { return kind == "exp_avg_sq"; }
  std::vector<std::pair<std::string, Tensor>> state() const override { return named_buffers(); }
  double beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay;  // true: AdamW
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
        double eps = 1e-8, double weight_decay = 1e-2)
      : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay, true) {}
};

// Scales every gradient by max_norm / (total_norm + 1e-6) when the norm of all gradients
// together exceeds max_norm (torch.nn.utils.clip_grad_norm_). Returns the norm before clipping.
double clip_grad_norm_(const std::vector<Tensor>& params, double max_norm);

// Linear warmup from ~0 to base_lr over warmup_steps, then a cosine decay to min_lr at
// total_steps (and min_lr after). lr(step) for step = 0, 1, ...
struct WarmupCosine {
  double base_lr, min_lr;
  int64_t warmup_steps, total_steps;
  double lr(int64_t step) const;
};

}  // namespace qkv::nn
