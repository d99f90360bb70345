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

}  // namespace

// Set as the program starts, before main (a static initialiser). A static initialiser of
// another file that ran before it would read false: the plain paths.
std::atomic<bool> detail::g_fused_on{from_environment()};

void set_fused_enabled(bool on) {
  detail::g_fused_on.store(on, std::memory_order_relaxed);
}

}  // namespace qkv
