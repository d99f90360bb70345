// environment.cpp: check_environment() of environment.h.
#include "tensor/environment.h"

#include <cstdlib>
#include <string>

#include "tensor/allocator.h"
#include "tensor/error.h"
#include "tensor/thread_pool.h"

namespace qkv {

void check_environment() {
  if (const char* fused = std::getenv("QKV_FUSED")) {
    const std::string v = fused;
    check(v == "0" || v == "1", "QKV_FUSED", "0 or 1, got \"", v, "\"");
  }
  num_threads();       // reads QKV_NUM_THREADS as the thread pool starts
  max_tensor_bytes();  // reads QKV_MAX_TENSOR_BYTES
}

}  // namespace qkv
