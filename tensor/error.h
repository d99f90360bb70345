// error.h: qkv::Error and the one helper that throws it.
//
// Every public function of every layer validates its arguments at the boundary and reports a
// problem as `<op>: <what was expected>, got <what was seen>`, with shapes written the way
// Python writes a tuple: (2, 3), (6,) or ().  Kernels behind the boundary trust their inputs.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace qkv {

// The one exception type of the library. It is a std::runtime_error, so `catch (const
// std::exception& e)` in a program prints the message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

using Shape = std::vector<int64_t>;

// "(2, 3)", "(6,)", "()": a shape as Python prints tuple(t.shape).
std::string shape_str(const Shape& shape);

namespace detail {
inline void append_part(std::ostringstream& os, const Shape& s) {
  os << shape_str(s);
}
template <class T>
void append_part(std::ostringstream& os, const T& v) {
  os << v;
}
}  // namespace detail

// Throws qkv::Error("<op>: <parts...>"). Kept out of line and [[noreturn]] so that the checks
// below cost one predictable branch when the input is fine.
[[noreturn]] void throw_error(std::string_view op, const std::string& message);

// check(ok, "matmul", "inner dimensions must match, got a ", a.shape(), " and b ", b.shape())
// The message parts are only formatted when the check fails.
template <class... Parts>
inline void check(bool ok, std::string_view op, const Parts&... parts) {
  if (ok) [[likely]]
    return;
  std::ostringstream os;
  (detail::append_part(os, parts), ...);
  throw_error(op, os.str());
}

}  // namespace qkv
