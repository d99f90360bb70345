// random.cpp: PyTorch's sampling recipes on top of the Mersenne Twister.
#include "tensor/random.h"

#include <cmath>
#include <numbers>
#include <sstream>

#include "tensor/iterate.h"
#include "tensor/view.h"

namespace qkv {

void Generator::manual_seed(uint64_t seed) {
  seed_ = seed;
  // mt19937 keeps the low 32 bits of the seed, exactly as torch's mt19937 does.
  engine_.seed(static_cast<std::mt19937::result_type>(seed & 0xffffffffULL));
  next_normal_.reset();
}

uint64_t Generator::random64() {
  const uint64_t hi = random();
  const uint64_t lo = random();
  return (hi << 32) | lo;
}

float Generator::uniform_float() {
  // float has a 24-bit significand: 2^24 evenly spaced values in [0, 1), all exact.
  return static_cast<float>(random() & 0xFFFFFFu) * (1.0f / 16777216.0f);
}

double Generator::uniform_double() {
  return static_cast<double>(random64() & ((1ULL << 53) - 1)) * (1.0 / 9007199254740992.0);
}

double Generator::normal_double() {
  // Box-Muller makes two independent normals from two uniforms; torch returns the cosine one
  // and keeps the sine one for the next call (until the next manual_seed).
  if (next_normal_) {
    const double v = *next_normal_;
    next_normal_.reset();
    return v;
  }
  const double u1 = uniform_double();
  const double u2 = uniform_double();
  const double r = std::sqrt(-2.0 * std::log1p(-u2));  // log1p(-u2) = log(1 - u2), 1 - u2 in (0, 1]
  const double theta = 2.0 * std::numbers::pi * u1;
  next_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

std::string Generator::state() const {
  std::ostringstream os;
  os << seed_ << ' ' << (next_normal_ ? 1 : 0) << ' ';
  os.precision(17);
  os << next_normal_.value_or(0.0) << ' ' << engine_;
  return os.str();
}

void Generator::set_state(const std::string& state) {
  std::istringstream is(state);
  uint64_t seed = 0;
  int has_normal = 0;
  double normal = 0;
  std::mt19937 engine;
  is >> seed >> has_normal >> normal >> engine;
  check(!is.fail() && (has_normal == 0 || has_normal == 1), "Generator::set_state",
        "a state written by Generator::state(), got ", state.size(),
        " characters that do not parse");
  seed_ = seed;
  engine_ = engine;
  if (has_normal) {
    next_normal_ = normal;
  } else {
    next_normal_.reset();
  }
}

Generator& default_generator() {
  static Generator gen;
  return gen;
}

void manual_seed(uint64_t seed) {
  default_generator().manual_seed(seed);
}

namespace {
Generator& pick(Generator* gen) {
  return gen ? *gen : default_generator();
}

void check_float(const Tensor& t, std::string_view op) {
  check(t.defined() && t.dtype() == Dtype::float32, op, "a float32 tensor, got ",
        t.defined() ? dtype_name(t.dtype()) : "an undefined one");
}

// torch's normal_fill_16: Box-Muller on pairs (j, j + 8) of a block of 16 uniforms, in float.
void normal_fill_16(float* d, float mean, float std) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];  // [0, 1) -> (0, 1]: log(0) is never taken
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * std::log(u1));
    const float theta = static_cast<float>(2.0f * std::numbers::pi * u2);  // in double, as torch
    d[j] = radius * std::cos(theta) * std + mean;
    d[j + 8] = radius * std::sin(theta) * std + mean;
  }
}
}  // namespace

void uniform_(const Tensor& t, double from, double to, Generator* gen) {
  check_float(t, "uniform_");
  t.impl().storage->bump_version();
  check(from <= to, "uniform_", "from <= to, got from ", from, " and to ", to);
  Generator& g = pick(gen);
  const float lo = static_cast<float>(from), hi = static_cast<float>(to);
  float* p = reinterpret_cast<float*>(t.impl().storage->data());
  for_each_offset_in_memory_order(t, [&](int64_t i) {
    // In float, as torch: x * (to - from) + from.
    const float x = g.uniform_float();
    const volatile float scaled = x * (hi - lo);  // volatile: no fused multiply-add, as torch
    p[i] = scaled + lo;
  });
}

void normal_(const Tensor& t, double mean, double std, Generator* gen) {
  check_float(t, "normal_");
  t.impl().storage->bump_version();
  check(std >= 0.0, "normal_", "std >= 0, got ", std);
  Generator& g = pick(gen);
  const int64_t n = t.numel();
  if (n >= 16 && t.is_contiguous()) {
    // torch's fast path: fill with float uniforms, then transform blocks of 16. When n is not
    // a multiple of 16, the last 16 slots are refilled with fresh uniforms and transformed
    // again (overwriting some finished values): that is what torch does, so we do it too.
    float* d = t.data_ptr();
    for (int64_t i = 0; i < n; ++i) d[i] = g.uniform_float();
    const float m = static_cast<float>(mean), s = static_cast<float>(std);
    for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(d + i, m, s);
    if (n % 16 != 0) {
      float* tail = d + n - 16;
      for (int i = 0; i < 16; ++i) tail[i] = g.uniform_float();
      normal_fill_16(tail, m, s);
    }
    return;
  }
  // Small or strided tensors: one double normal per element, cast to float at the end.
  float* p = reinterpret_cast<float*>(t.impl().storage->data());
  for_each_offset_in_memory_order(
      t, [&](int64_t i) { p[i] = static_cast<float>(g.normal_double() * std + mean); });
}

Tensor rand(const Shape& shape, Generator* gen) {
  Tensor t = Tensor::empty(shape);
  uniform_(t, 0.0, 1.0, gen);
  return t;
}

Tensor randn(const Shape& shape, Generator* gen) {
  Tensor t = Tensor::empty(shape);
  normal_(t, 0.0, 1.0, gen);
  return t;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, Generator* gen) {
  check(low < high, "randint", "low < high, got low ", low, " and high ", high);
  Generator& g = pick(gen);
  Tensor t = Tensor::empty(shape, Dtype::int64);
  int64_t* p = t.data_ptr<int64_t>();
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  for (int64_t i = 0; i < t.numel(); ++i) {
    // torch: one 32-bit draw modulo the range when the range fits in 32 bits, else random64.
    const uint64_t r = range < (1ULL << 32) ? g.random() : g.random64();
    p[i] = low + static_cast<int64_t>(r % range);
  }
  return t;
}

Tensor randint(int64_t high, const Shape& shape, Generator* gen) {
  return randint(0, high, shape, gen);
}

}  // namespace qkv
