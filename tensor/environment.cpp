// environment.cpp: check_environment() of environment.h.
#include "tensor/environment.h"

#include <cstdlib>
#include <string>

#include "tensor/allocator.h"
#include "tensor/error.h"
#include "tensor/thread_pool.h"

namespace qkv {

void check_environment() {
  for (const char* name : {"QKV_FUSED", "QKV_INTRINSICS", "QKV_GEMM_VERBOSE"})
    if (const char* value = std::getenv(name)) {
      const std::string v = value;
      check(v == "0" || v == "1", name, "0 or 1, got \"", v, "\"");
    }
  if (const char* value = std::getenv("QKV_GEMM")) {
    const std::string v = value;
    check(v == "production" || v == "ladder", "QKV_GEMM", "production or ladder, got \"", v,
          "\"");
  }
  num_threads();       // reads QKV_NUM_THREADS as the thread pool starts
  max_tensor_bytes();  // reads QKV_MAX_TENSOR_BYTES
}

}  // namespace qkv
