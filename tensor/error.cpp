// error.cpp: formatting shapes and throwing qkv::Error (see error.h).
#include "tensor/error.h"

namespace qkv {

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";  // Python's one-element tuple: (6,)
  return s + ")";
}

void throw_error(std::string_view op, const std::string& message) {
  throw Error(std::string(op) + ": " + message);
}

}  // namespace qkv
