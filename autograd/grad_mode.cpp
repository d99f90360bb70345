// grad_mode.cpp: the per-thread switches of grad_mode.h.
#include "autograd/grad_mode.h"

namespace qkv {
namespace {
thread_local bool grad_enabled = true;
thread_local bool anomaly_enabled = false;
}  // namespace

bool is_grad_enabled() {
  return grad_enabled;
}
void set_grad_enabled(bool enabled) {
  grad_enabled = enabled;
}
bool is_anomaly_enabled() {
  return anomaly_enabled;
}
void set_anomaly_enabled(bool enabled) {
  anomaly_enabled = enabled;
}

}  // namespace qkv
