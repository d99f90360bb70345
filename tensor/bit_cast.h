// bit_cast.h: qkv::bit_cast<To>(x), the bits of x read as a To (a float's bits as a uint32_t,
// and back), which C++20 names std::bit_cast. Some standard libraries that otherwise have C++20
// lack it (Emscripten 3.1's libc++); every compiler qkv builds with has the builtin it is made of.
#pragma once

#include <bit>

namespace qkv {

template <class To, class From>
constexpr To bit_cast(const From& x) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast: the two types must have the same size");
#if defined(__cpp_lib_bit_cast)
  return std::bit_cast<To>(x);
#else
  return __builtin_bit_cast(To, x);
#endif
}

}  // namespace qkv
