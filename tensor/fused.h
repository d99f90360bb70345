// fused.h: the one switch for qkv's fused paths.
//
// A fused path is a faster kernel chosen inside a readable entry point when the inputs allow
// it, as PyTorch's scaled_dot_product_attention picks a flash or math backend: the attention
// core (attention/core.h) runs the fused multi-head kernel (tensor/fused_attention.h) for plain
// self-attention, and the one-kernel causal softmax for a plain causal mask. Each gives the
// numbers of the composed ops it replaces, and a test holds it to them. Turned off, every
// entry point runs its composed ops: the code a learner reads, step by step.
//
// On by default; QKV_FUSED=0 in the environment starts a program with it off.
#pragma once

namespace qkv {

bool fused_enabled();
void set_fused_enabled(bool on);

// Sets the switch for a scope and restores it after: { FusedGuard plain(false); ... }
class FusedGuard {
 public:
  explicit FusedGuard(bool on) : previous_(fused_enabled()) { set_fused_enabled(on); }
  ~FusedGuard() { set_fused_enabled(previous_); }
  FusedGuard(const FusedGuard&) = delete;
  FusedGuard& operator=(const FusedGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace qkv
