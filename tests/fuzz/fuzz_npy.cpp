// fuzz_npy.cpp: the .npy reader on arbitrary bytes.
//
// A .npy file is a magic string, a version, a header length and a Python-dict header
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) followed by the data. Any bytes
// must parse or end in a qkv::Error; what parses must round-trip: writing it and parsing it
// again gives the same bytes a second time.
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Tensor t;
  try {
    t = nn::parse_npy(bytes);
  } catch (const Error&) {
    return 0;  // refused with a named error: the one allowed way out
  }
  QKV_FUZZ_CHECK(t.defined());
  int64_t n = 1;
  for (int64_t s : t.shape()) n *= s;
  QKV_FUZZ_CHECK(n == t.numel());
  const std::string once = nn::npy_bytes(t);
  const Tensor again = nn::parse_npy(once);
  QKV_FUZZ_CHECK(again.shape() == t.shape() && again.dtype() == t.dtype());
  QKV_FUZZ_CHECK(nn::npy_bytes(again) == once);
  return 0;
}
