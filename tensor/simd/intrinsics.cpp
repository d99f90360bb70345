// intrinsics.cpp: the intrinsics switch of intrinsics.h, read from QKV_INTRINSICS once at
// start-up.
#include "tensor/simd/intrinsics.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace qkv {

// Set as the program starts, before main (a static initialiser): on unless QKV_INTRINSICS is 0.
std::atomic<bool> detail::g_intrinsics_on{[] {
  const char* value = std::getenv("QKV_INTRINSICS");
  return value == nullptr || std::strcmp(value, "0") != 0;
}()};

void set_intrinsics_enabled(bool on) {
  detail::g_intrinsics_on.store(on, std::memory_order_relaxed);
}

}  // namespace qkv
