// fuzz_input.h: what every fuzz target shares: a reader that turns the fuzzer's bytes into
// small numbers, and the rule for what counts as a bug.
//
// A fuzz target is a function LLVMFuzzerTestOneInput(data, size) that must survive *any*
// bytes. libFuzzer (clang -fsanitize=fuzzer) calls it millions of times with mutated inputs
// and reports an input that crashes, trips AddressSanitizer/UBSan, hangs, or throws anything
// that escapes. In qkv, bad input is allowed to end in exactly one way: a qkv::Error. So each
// target catches qkv::Error and nothing else; any other exception (std::bad_alloc from an
// absurd size, std::out_of_range from an unchecked index) escapes and is reported as a bug.
//
// The same targets are also linked with replay_main.cpp into ordinary programs that run each
// file of the committed corpus once: ctest does that in every build, so inputs that once found
// a bug stay fixed (tests/fuzz/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "attention/all.h"

namespace qkv::fuzz {

// Reads the fuzzer's bytes front to back; past the end every read returns 0.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  // An integer in [lo, hi] (both included), from one byte.
  int64_t in(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(byte()) % (hi - lo + 1); }
  std::string rest() {
    std::string s(reinterpret_cast<const char*>(data_) + pos_, size_ - std::min(pos_, size_));
    pos_ = size_;
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The one failure a fuzz target may report on purpose: an invariant that does not hold.
// abort() makes libFuzzer (and the replay driver) stop and keep the input.
[[noreturn]] inline void invariant_broken(const char* what) {
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what);
  std::abort();
}
#define QKV_FUZZ_CHECK(cond) \
  ((cond) ? void(0) : ::qkv::fuzz::invariant_broken(#cond " (" __FILE__ ")"))

}  // namespace qkv::fuzz
