// checked.h: sizes, offsets, steps and their sums and products as int64, checked. A sum or a
// product that would not fit is a qkv::Error naming the op and both values, never a number that
// wrapped around and later indexes outside a tensor (narrow(x, 0, 2, INT64_MAX) would otherwise
// pass its bounds check as 2 + INT64_MAX < 0).
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

#include "tensor/error.h"

namespace qkv {

inline int64_t checked_add(int64_t a, int64_t b, std::string_view op) {
  int64_t sum = 0;
#if defined(__GNUC__) || defined(__clang__)
  const bool overflow = __builtin_add_overflow(a, b, &sum);
#else
  const bool overflow = (b > 0 && a > std::numeric_limits<int64_t>::max() - b) ||
                        (b < 0 && a < std::numeric_limits<int64_t>::min() - b);
  if (!overflow) sum = a + b;
#endif
  check(!overflow, op, "sizes whose sum fits in int64, got ", a, " + ", b);
  return sum;
}

inline int64_t checked_mul(int64_t a, int64_t b, std::string_view op) {
  int64_t product = 0;
#if defined(__GNUC__) || defined(__clang__)
  const bool overflow = __builtin_mul_overflow(a, b, &product);
#else
  bool overflow = false;
  if (a != 0 && b != 0) {
    const int64_t max = std::numeric_limits<int64_t>::max(), min = std::numeric_limits<int64_t>::min();
    if (a > 0) overflow = b > 0 ? a > max / b : b < min / a;
    else overflow = b > 0 ? a < min / b : (a == min || b == min || -a > max / -b);
  }
  if (!overflow) product = a * b;
#endif
  check(!overflow, op, "sizes whose product fits in int64, got ", a, " * ", b);
  return product;
}

}  // namespace qkv
