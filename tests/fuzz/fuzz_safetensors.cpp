// fuzz_safetensors.cpp: the safetensors reader on arbitrary bytes.
//
// A safetensors file is an 8-byte little-endian header length, a JSON header naming each
// tensor's dtype, shape and byte range, then the raw data. Every one of those numbers comes
// from the file, so every one is a way to make a careless reader allocate petabytes, read past
// the end or loop forever. Any bytes must parse or end in a qkv::Error. What parses must
// survive a round trip: writing it and parsing it again gives the same bytes a second time.
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  nn::SafetensorsFile file;
  try {
    file = nn::parse_safetensors(bytes);
  } catch (const Error&) {
    return 0;  // refused with a named error: the one allowed way out
  }
  for (const auto& [name, t] : file.tensors) {
    QKV_FUZZ_CHECK(t.defined());
    int64_t n = 1;
    for (int64_t s : t.shape()) n *= s;
    QKV_FUZZ_CHECK(n == t.numel());
  }
  const std::string once = nn::safetensors_bytes(file.tensors, file.metadata);
  const nn::SafetensorsFile again = nn::parse_safetensors(once);
  QKV_FUZZ_CHECK(again.tensors.size() == file.tensors.size());
  QKV_FUZZ_CHECK(again.metadata == file.metadata);
  QKV_FUZZ_CHECK(nn::safetensors_bytes(again.tensors, again.metadata) == once);
  return 0;
}
