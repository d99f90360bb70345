// intrinsics.h: the switch for qkv's hand-written intrinsics outside the GEMM: on AVX-512 and
// AVX2, the exponentials of softmax, the cross-entropy, the flash attention and GELU's forward,
// 16 or 8 at a time in instructions the compiler does not choose for them (exp.h). Each gives
// the bits of the plain loop it replaces, and a test holds it to them; off, the plain loops run.
// (The fused ops, which replace whole composed computations, have their own switch: fused.h.)
//
// On by default; QKV_INTRINSICS=0 in the environment starts a program with it off
// (check_environment() in environment.h rejects any value but 0 or 1).
#pragma once

#include <atomic>

namespace qkv {

namespace detail {
extern std::atomic<bool> g_intrinsics_on;  // read at start-up from QKV_INTRINSICS
}  // namespace detail

// Inline, as a softmax row asks it for every row: one load, no call.
inline bool intrinsics_enabled() {
  return detail::g_intrinsics_on.load(std::memory_order_relaxed);
}
void set_intrinsics_enabled(bool on);

// Sets the switch for a scope and restores it after: { IntrinsicsGuard plain(false); ... }
class IntrinsicsGuard {
 public:
  explicit IntrinsicsGuard(bool on) : previous_(intrinsics_enabled()) {
    set_intrinsics_enabled(on);
  }
  ~IntrinsicsGuard() { set_intrinsics_enabled(previous_); }
  IntrinsicsGuard(const IntrinsicsGuard&) = delete;
  IntrinsicsGuard& operator=(const IntrinsicsGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace qkv
