// random.h: a random generator that draws exactly what PyTorch's CPU generator draws.
//
// torch.manual_seed(123); torch.rand(3)  and  qkv::manual_seed(123); qkv::rand({3})  print the
// same digits. The engine is the 32-bit Mersenne Twister (std::mt19937 is the same algorithm);
// the recipes that turn its 32-bit draws into floats are PyTorch's, step for step (see
// shared/reference/torch-rng.md, and the comments in random.cpp). randn of 16 or more elements
// follows torch's AVX2 kernel (what torch runs on any x86-64 CPU of the last decade), down to
// the multiply-adds torch's build fuses, so it matches on any compiler and target; a torch
// running its scalar fallback (some ARM builds) rounds those normals differently in the last bit.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "tensor/tensor.h"

namespace qkv {

class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;  // PyTorch's default seed
  explicit Generator(uint64_t seed = kDefaultSeed) { manual_seed(seed); }

  // Reseeds the engine and forgets any cached normal sample, as torch's manual_seed does.
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }

  uint32_t random() { return static_cast<uint32_t>(engine_()); }  // one 32-bit draw
  uint64_t random64();                                            // two draws: hi, then lo
  float uniform_float();    // low 24 bits of one draw, times 2^-24: [0, 1) on a float grid
  double uniform_double();  // low 53 bits of random64(), times 2^-53
  double normal_double();   // Box-Muller on two doubles; the second result is cached

  // The full state (engine and cached normal) as text, for checkpoints; set_state restores it.
  std::string state() const;
  void set_state(const std::string& state);

 private:
  std::mt19937 engine_;
  uint64_t seed_ = kDefaultSeed;
  std::optional<double> next_normal_;
};

// The generator that rand/randn/randint and the initialisers use unless given another. It is
// not synchronised: draw from one thread, as a training loop does.
Generator& default_generator();
void manual_seed(uint64_t seed);

// Fresh float32 tensors.
Tensor rand(const Shape& shape, Generator* gen = nullptr);   // uniform on [0, 1)
Tensor randn(const Shape& shape, Generator* gen = nullptr);  // standard normal
// randint: int64 values uniform on [low, high).
Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen = nullptr);
Tensor randint(int64_t high, const Shape& shape, Generator* gen = nullptr);

// In place, one draw per element in row-major order, as torch's Tensor.uniform_/normal_.
void uniform_(const Tensor& t, double from = 0.0, double to = 1.0, Generator* gen = nullptr);
void normal_(const Tensor& t, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);

namespace detail {
// a * b + c rounded once, as an FMA instruction computes it, from double arithmetic alone
// (random.cpp says why and how). Declared here so the tests can hold it to long double.
float fma_from_doubles(float a, float b, float c);
}  // namespace detail

// 1 where the target has a fused multiply-add instruction, so that std::fma on floats is that
// one instruction: GCC says so with __FP_FAST_FMAF; Clang, Apple's included, defines none of
// the __FP_FAST_FMA macros, only the instruction set's own: __FMA__ (x86-64 with FMA) and
// __ARM_FEATURE_FMA (every aarch64).
#if defined(__FP_FAST_FMAF) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define QKV_HAS_FMA_INSTRUCTION 1
#else
#define QKV_HAS_FMA_INSTRUCTION 0
#endif

}  // namespace qkv
