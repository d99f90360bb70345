// grad_mode.h: switches that change whether and how history is recorded.
//
//   { qkv::NoGradGuard no_grad;  ... }      // like `with torch.no_grad():`
//   { qkv::AnomalyGuard anomaly; ... }      // like torch.autograd.detect_anomaly()
//
// Both are per thread and restore the previous setting when they go out of scope.
#pragma once

namespace qkv {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

class NoGradGuard {
 public:
  NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// Anomaly mode: every op checks what it produced, forward and backward, and the first one that
// makes a NaN or an Inf throws a qkv::Error naming itself and its input shapes. It costs a pass
// over every result, so it is off unless asked for.
bool is_anomaly_enabled();
void set_anomaly_enabled(bool enabled);

class AnomalyGuard {
 public:
  AnomalyGuard() : previous_(is_anomaly_enabled()) { set_anomaly_enabled(true); }
  ~AnomalyGuard() { set_anomaly_enabled(previous_); }
  AnomalyGuard(const AnomalyGuard&) = delete;
  AnomalyGuard& operator=(const AnomalyGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace qkv
