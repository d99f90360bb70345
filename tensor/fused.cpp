// fused.cpp: the fused-paths switch of fused.h, read from QKV_FUSED once at start-up.
#include "tensor/fused.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace qkv {
namespace {

bool from_environment() {
  const char* value = std::getenv("QKV_FUSED");
  return value == nullptr || std::strcmp(value, "0") != 0;
}

std::atomic<bool>& switch_state() {
  static std::atomic<bool> on{from_environment()};
  return on;
}

}  // namespace

bool fused_enabled() {
  return switch_state().load(std::memory_order_relaxed);
}

void set_fused_enabled(bool on) {
  switch_state().store(on, std::memory_order_relaxed);
}

}  // namespace qkv
