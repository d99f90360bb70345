// random.cpp: PyTorch's sampling recipes on top of the Mersenne Twister.
#include "tensor/random.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "tensor/bit_cast.h"
#include "tensor/iterate.h"
#include "tensor/view.h"

// Clang fuses a * b + c within one expression by default; the statements above are split so
// nothing can fuse, and this makes sure of it.
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

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
  // Checked word by word before anything changes: a seed, 0 or 1 (a normal kept for the next
  // call), that normal (finite), then the engine's words as std::mt19937 writes them (as many,
  // each below 2^32; in libstdc++'s form the last is the position, at most 624).
  std::istringstream words(state);
  std::vector<std::string> w;
  for (std::string word; words >> word;) w.push_back(word);
  static const size_t engine_words = [] {
    std::ostringstream os;
    os << std::mt19937();
    std::istringstream is(os.str());
    size_t n = 0;
    for (std::string word; is >> word;) ++n;
    return n;
  }();
  const auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 20 && t.find_first_not_of("0123456789") == std::string::npos;
  };
  bool ok = w.size() == 3 + engine_words && digits(w[0]) && (w[1] == "0" || w[1] == "1");
  errno = 0;
  ok = ok && (std::strtoull(w[0].c_str(), nullptr, 10), errno != ERANGE);
  double normal = 0;
  if (ok) {
    char* end = nullptr;
    normal = std::strtod(w[2].c_str(), &end);
    ok = *end == '\0' && std::isfinite(normal) && w[2].find_first_of("xXnNiI") == std::string::npos;
  }
  for (size_t i = 3; ok && i < w.size(); ++i)
    ok = digits(w[i]) && std::strtoull(w[i].c_str(), nullptr, 10) <= 0xFFFFFFFFull &&
         (engine_words != 625 || i + 1 < w.size() || std::strtoull(w[i].c_str(), nullptr, 10) <= 624);
  check(ok, "Generator::set_state", "a state written by Generator::state() (", 3 + engine_words,
        " whole numbers but the third; engine words below 2^32), got ", state.size(),
        " characters that are not one");
  std::istringstream is(state);
  uint64_t seed = 0;
  int has_normal = 0;
  std::mt19937 engine;
  is >> seed >> has_normal >> normal >> engine;
  check(!is.fail(), "Generator::set_state", "a state written by Generator::state(), got one that "
        "does not parse");
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

// ---- torch's normal_fill_16 -------------------------------------------------------------
// On x86-64 CPUs with AVX2 (every recent one), torch draws randn of 16 or more elements with
// normal_fill_16_AVX2, which takes log, sin and cos not from the C library but from
// avx_mathfun.h: Cephes polynomials evaluated in float, eight lanes at a time. The three
// functions below are that code, one lane at a time, operation for operation, so the same seed
// gives bit-identical normals. torch's build (GCC, -mfma) fuses some of the original's
// multiply-then-add intrinsic pairs into FMA instructions: each multiply whose only use is an
// add, taken in program order. Those fusions are written out here as fused() (one rounding, on
// every platform), and this file is compiled without any other fusing (-ffp-contract=off), so
// every compiler computes the same.

// a * b + c with one rounding: what torch's FMA instructions compute. Where the target has an
// FMA instruction (QKV_HAS_FMA_INSTRUCTION, random.h: x86-64 with FMA, every aarch64), std::fma
// is that instruction. Elsewhere std::fma is a library call, and not every library gets it
// right: MinGW-w64's rounds twice, and a quarter of random triples then differ in the last bit.
// So it is computed from doubles instead (detail::fma_from_doubles, below).
float fused(float a, float b, float c) {
#if QKV_HAS_FMA_INSTRUCTION
  return std::fma(a, b, c);
#else
  return detail::fma_from_doubles(a, b, c);
#endif
}

// Reinterpreting bits, as the _mm256_cast* intrinsics do.
uint32_t float_bits(float x) {
  return qkv::bit_cast<uint32_t>(x);
}
float bits_float(uint32_t b) {
  return qkv::bit_cast<float>(b);
}

// log256_ps: ln(x) = e * ln 2 + ln(m), with x = m * 2^e, m in [sqrt(1/2), sqrt(2)), and ln(m)
// from a degree-9 polynomial; ln 2 is split in two (q2 + q1) for precision.
float mathfun_log(float x) {
  const bool invalid = x <= 0.0f;
  // x = max(x, the smallest normal float): no denormals. Taken on the bits as signed integers,
  // which order as the floats do for x >= 0; a negative x, a negative integer, becomes the
  // minimum as well. (On the floats, GCC turned the comparison into a branch around the rest of
  // the function, and normal_fill_16's loop could not be vectorised.)
  x = bits_float(static_cast<uint32_t>(
      std::max(static_cast<int32_t>(float_bits(x)), static_cast<int32_t>(0x00800000))));
  int32_t exponent = static_cast<int32_t>(float_bits(x) >> 23);
  x = bits_float((float_bits(x) & ~0x7f800000u) | float_bits(0.5f));  // mantissa in [0.5, 1)
  exponent -= 0x7f;
  float e = static_cast<float>(exponent);
  e = e + 1.0f;
  // if x < sqrt(1/2): e -= 1, x = x + x - 1; else x = x - 1
  const bool small = x < 0.707106781186547524f;
  const float tmp = small ? x : 0.0f;
  x = x - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = 7.0376836292e-2f;
  y = fused(y, x, -1.1514610310e-1f);
  y = fused(y, x, 1.1676998740e-1f);
  y = fused(y, x, -1.2420140846e-1f);
  y = fused(y, x, 1.4249322787e-1f);
  y = fused(y, x, -1.6668057665e-1f);
  y = fused(y, x, 2.0000714765e-1f);
  y = fused(y, x, -2.4999993993e-1f);
  y = fused(y, x, 3.3333331174e-1f);
  const float yx = y * x;
  y = fused(yx, z, e * -2.12194440e-4f);  // y x z + e q1
  y = fused(-z, 0.5f, y);                 // - z / 2
  x = x + y;
  x = fused(e, 0.693359375f, x);                              // + e q2
  return invalid ? bits_float(float_bits(x) | 0xffffffffu) : x;  // log of x <= 0: NaN
}

// sincos256_ps: reduce x to [-pi/4, pi/4] by a multiple j of pi/4 (pi/4 split in three parts,
// Cody-Waite), evaluate the sine and cosine polynomials there, and pick and sign them by j.
void mathfun_sincos(float x, float* sin_out, float* cos_out) {
  uint32_t sign_bit_sin = float_bits(x) & 0x80000000u;
  x = bits_float(float_bits(x) & 0x7fffffffu);  // |x|
  float y = x * 1.27323954473516f;              // x * 4 / pi
  int32_t j = static_cast<int32_t>(y);          // truncation, as cvttps
  j = (j + 1) & ~1;                             // round up to even
  y = static_cast<float>(j);
  const uint32_t swap_sign_bit_sin = static_cast<uint32_t>(j & 4) << 29;
  const bool poly_mask = (j & 2) == 0;  // true: sine from the sine polynomial
  x = fused(y, -0.78515625f, x);
  x = fused(y, -2.4187564849853515625e-4f, x);
  x = fused(y, -3.77489497744594108e-8f, x);
  const uint32_t sign_bit_cos = static_cast<uint32_t>(~(j - 2) & 4) << 29;
  sign_bit_sin ^= swap_sign_bit_sin;
  const float z = x * x;
  // cos(x) ~ 1 - z/2 + z^2 (c0 z^2 + c1 z + c2)
  float yc = fused(2.443315711809948e-5f, z, -1.388731625493765e-3f);
  yc = fused(yc, z, 4.166664568298827e-2f);
  yc = yc * z;
  yc = fused(yc, z, -(z * 0.5f));  // ... z^2 - z / 2
  yc = yc + 1.0f;
  // sin(x) ~ x + x z (s0 z^2 + s1 z + s2)
  float ys = fused(-1.9515295891e-4f, z, 8.3321608736e-3f);
  ys = fused(ys, z, -1.6666654611e-1f);
  ys = ys * z;
  ys = fused(ys, x, x);  // x + x z (...)
  // The original selects with masks and adds: each sum is one value plus +0.0.
  const float ysin2 = poly_mask ? ys : 0.0f, ysin1 = poly_mask ? 0.0f : yc;
  ys = ys - ysin2;
  yc = yc - ysin1;
  const float s = ysin1 + ysin2, c = yc + ys;
  *sin_out = bits_float(float_bits(s) ^ sign_bit_sin);
  *cos_out = bits_float(float_bits(c) ^ sign_bit_cos);
}

// Box-Muller on pairs (j, j + 8) of a block of 16 uniforms, in float. The 8 pairs are
// independent and the code above has no branches the compiler cannot turn into selects, so GCC
// computes all 8 at once in vector registers, each lane with the same operations in the same
// order (no other fusing: -ffp-contract=off), so the same bits as one pair at a time.
void normal_fill_16(float* d, float mean, float std) {
  const float two_pi = static_cast<float>(2.0f * std::numbers::pi);
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];  // [0, 1) -> (0, 1]: log(0) is never taken
    const float u2 = d[j + 8];
    const float minus_two_log = -2.0f * mathfun_log(u1);
    const float radius = std::sqrt(minus_two_log);
    const float theta = two_pi * u2;
    float sin_theta, cos_theta;
    mathfun_sincos(theta, &sin_theta, &cos_theta);
    const float n1 = radius * cos_theta, n2 = radius * sin_theta;
    d[j] = fused(n1, std, mean);  // _mm256_fmadd_ps: one rounding
    d[j + 8] = fused(n2, std, mean);
  }
}
}  // namespace

namespace detail {
// The product of two floats is exact in a double (24 + 24 significant bits of 53). The sum is
// rounded to double "to odd": s + err = p + c exactly (Knuth's two-sum), and an inexact s gets
// an odd last bit, moving one step towards the exact value if it had an even one. Rounding that
// to float is then the correctly rounded a * b + c, because a double has at least two more bits
// than a float (Boldo and Melquiond, "When double rounding is odd", 2005).
float fma_from_doubles(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double s = p + static_cast<double>(c);
  const double c_part = s - p;
  const double err = (p - (s - c_part)) + (static_cast<double>(c) - c_part);
  uint64_t bits = qkv::bit_cast<uint64_t>(s);
  if (err != 0.0 && (bits & 1) == 0) bits = (err > 0) == (s > 0) ? bits + 1 : bits - 1;
  return static_cast<float>(qkv::bit_cast<double>(bits));
}
}  // namespace detail

void uniform_(const Tensor& t, double from, double to, Generator* gen) {
  check_float(t, "uniform_");
  t.impl().storage->bump_version();
  check(from <= to, "uniform_", "from <= to, got from ", from, " and to ", to);
  Generator& g = pick(gen);
  const float lo = static_cast<float>(from), hi = static_cast<float>(to);
  float* p = reinterpret_cast<float*>(t.impl().storage->data());
  const float range = hi - lo;  // in float, as torch's (to - from) on float arguments
  for_each_offset_in_memory_order(t, [&](int64_t i) {
    // torch's uniform_real: x * (to - from) + from in double (its CPU "accumulate type" for
    // float), rounded to float once at the end. volatile: no fused multiply-add.
    const double x = g.uniform_float();  // exact: a 24-bit integer times 2^-24
    const volatile double scaled = x * static_cast<double>(range);
    p[i] = static_cast<float>(scaled + static_cast<double>(lo));
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
    // low + (r % range) lies in [low, high): summed as unsigned, so that no step overflows.
    p[i] = static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
  }
  return t;
}

Tensor randint(int64_t high, const Shape& shape, Generator* gen) {
  return randint(0, high, shape, gen);
}

}  // namespace qkv
