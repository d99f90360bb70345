// fused.h: the one switch for qkv's fused paths.
//
// A fused path is a faster kernel chosen inside a readable entry point when the inputs allow
// it, as PyTorch's scaled_dot_product_attention picks a flash or math backend: the attention
// core (attention/core.h) runs the fused multi-head kernel (tensor/fused_attention.h) for plain
// self-attention, and the one-kernel causal softmax for a plain causal mask. Each gives the
// numbers of the composed ops it replaces, and a test holds it to them. Turned off, every
// entry point runs its composed ops: the code a learner reads, step by step. (The intrinsics
// beneath the plain loops have a switch of their own: tensor/simd/intrinsics.h.)
//
// On by default; QKV_FUSED=0 in the environment starts a program with it off (any value but 0
// or 1 leaves it on, and check_environment() in environment.h reports it).
#pragma once

#include <atomic>

namespace qkv {

namespace detail {
extern std::atomic<bool> g_fused_on;  // read at start-up from QKV_FUSED (fused.cpp)
}  // namespace detail

// Inline, as a softmax row asks it for every row: one load, no call.
inline bool fused_enabled() {
  return detail::g_fused_on.load(std::memory_order_relaxed);
}
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
