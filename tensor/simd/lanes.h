// lanes.h: sums of a row in 8 interleaved lanes, as one vector register of 8 where the compiler
// has GCC/Clang vector extensions, as 8 floats or doubles elsewhere: the same order of additions
// either way (internal to the sums of reduce.cpp, softmax.cpp and LayerNorm's backward).
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/vector_math.h"

namespace qkv::detail {

// Row sums in 8 interleaved lanes. One running sum is a chain of dependent additions that waits
// on the adder's latency at every element (and the compiler may not reorder float additions to
// break it); eight independent ones fill a vector register. Element j always goes to lane
// j % 8, the lanes are combined pairwise, then the tail (the last n % 8 elements) is added in
// order: the order depends on n alone, so the result never depends on threads, and is the same
// order with or without the vector types below (the compiler may still fuse a multiply and an
// add into one FMA in one form and not the other: a difference in the last bit).
//
// lane_sum<T>(n, term) sums term(at) for j in [0, n), where at(p) reads p[j]: the caller
// writes the summand once, as `[&](auto at) { return at(dy) * at(w); }`. On GCC and Clang,
// `at` hands over 8 elements at once as one vector (Lanes8<float>), so the same expression is
// computed 8 lanes at a time: GCC 12 turns the scalar form into 8 scalar loads and shuffles
// per step. Elsewhere at(p) is one float. widen(v) turns
// floats into doubles, for sums kept in double.
#if !defined(QKV_LANE_VECTORS) && (defined(__GNUC__) || defined(__clang__))
#define QKV_LANE_VECTORS 1
#endif
#if QKV_LANE_VECTORS
template <class T>
struct LanesOf;
template <>
struct LanesOf<float> {
  typedef float type __attribute__((vector_size(32)));
};
#if defined(__AVX512F__)
// Eight doubles fill one AVX-512 register.
template <>
struct LanesOf<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <class T>
using Lanes8 = typename LanesOf<T>::type;
QKV_ALWAYS_INLINE inline Lanes8<double> widen(Lanes8<float> v) {
  return __builtin_convertvector(v, Lanes8<double>);
}
#else
// Elsewhere (AVX2, SSE, NEON) eight doubles are two halves of four, each lane's arithmetic
// unchanged: GCC 12 splits a 64-byte vector of doubles through the stack on AVX2, a store and a
// reload for every sum of LayerNorm's forward, which sums in double.
struct Doubles8 {
  typedef double Half __attribute__((vector_size(32)));
  Half lo, hi;  // lanes 0-3 and 4-7
  QKV_ALWAYS_INLINE double operator[](int i) const { return i < 4 ? lo[i] : hi[i - 4]; }
  QKV_ALWAYS_INLINE Doubles8& operator+=(const Doubles8& o) {
    lo += o.lo;
    hi += o.hi;
    return *this;
  }
  QKV_ALWAYS_INLINE friend Doubles8 operator*(const Doubles8& a, const Doubles8& b) {
    return {a.lo * b.lo, a.hi * b.hi};
  }
};
template <>
struct LanesOf<double> {
  typedef Doubles8 type;
};
template <class T>
using Lanes8 = typename LanesOf<T>::type;
QKV_ALWAYS_INLINE inline Lanes8<double> widen(Lanes8<float> v) {
  typedef float Floats4 __attribute__((vector_size(16)));
  Floats4 lo, hi;
  std::memcpy(&lo, &v, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&v) + sizeof lo, sizeof hi);
  return {__builtin_convertvector(lo, Doubles8::Half), __builtin_convertvector(hi, Doubles8::Half)};
}
#endif
#endif
QKV_ALWAYS_INLINE inline double widen(float x) {
  return static_cast<double>(x);
}

template <class T, class Term>
QKV_ALWAYS_INLINE inline T lane_sum(int64_t n, Term term) {
  int64_t j = 0;
#if QKV_LANE_VECTORS
  Lanes8<T> lane = {};
  for (; j + 8 <= n; j += 8)
    lane += term([j](const float* p) QKV_INLINE_LAMBDA {
      Lanes8<float> v;
      std::memcpy(&v, p + j, sizeof v);
      return v;
    });
#else
  T lane[8] = {};
  for (; j + 8 <= n; j += 8)
    for (int64_t l = 0; l < 8; ++l)
      lane[l] += term([i = j + l](const float* p) QKV_INLINE_LAMBDA { return p[i]; });
#endif
  T acc = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
  for (; j < n; ++j) acc += term([j](const float* p) QKV_INLINE_LAMBDA { return p[j]; });
  return acc;
}

}  // namespace qkv::detail
