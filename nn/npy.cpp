// npy.cpp: one tensor in NumPy's .npy format (npy.h). The header is a Python dict literal,
// read by a small parser of its own, as strict as the safetensors reader.
#include "nn/npy.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "nn/bytes.h"
#include "tensor/view.h"

namespace qkv::nn {

// ---- .npy -----------------------------------------------------------------------------------
//
// "\x93NUMPY", version (1, 0), a uint16 little-endian header length, then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n' so the data starts 64-byte aligned, then the data.

namespace {

const char* npy_descr(Dtype d) {
  switch (d) {
    case Dtype::float32:
      return "<f4";
    case Dtype::int64:
      return "<i8";
    case Dtype::boolean:
      return "|b1";
  }
  return "?";
}

// A tiny reader for the header dict: single-quoted keys and strings, True/False, and tuples of
// integers, which is all numpy writes there.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

NpyHeader parse_npy_header(const std::string& h) {
  const char* op = "load_npy";
  size_t pos = 0;
  auto skip = [&] {
    while (pos < h.size() && (h[pos] == ' ' || h[pos] == '\n' || h[pos] == '\t')) ++pos;
  };
  auto fail = [&](const std::string& what) -> void {
    throw Error(std::string(op) + ": bad header: expected " + what + " at byte " +
                std::to_string(pos) + " of \"" + h.substr(0, 200) + "\"");
  };
  auto expect = [&](char c) {
    skip();
    if (pos >= h.size() || h[pos] != c) fail(std::string("'") + c + "'");
    ++pos;
  };
  auto quoted = [&] {
    skip();
    if (pos >= h.size() || (h[pos] != '\'' && h[pos] != '"')) fail("a quoted string");
    const char q = h[pos++];
    const size_t end = h.find(q, pos);
    if (end == std::string::npos) fail("a closing quote");
    std::string s = h.substr(pos, end - pos);
    pos = end + 1;
    return s;
  };
  NpyHeader out;
  bool has_descr = false, has_order = false, has_shape = false;
  expect('{');
  while (true) {
    skip();
    if (pos < h.size() && h[pos] == '}') break;
    const std::string key = quoted();
    expect(':');
    skip();
    if (key == "descr") {
      out.descr = quoted();
      has_descr = true;
    } else if (key == "fortran_order") {
      if (h.compare(pos, 4, "True") == 0)
        out.fortran_order = true, pos += 4;
      else if (h.compare(pos, 5, "False") == 0)
        pos += 5;
      else
        fail("True or False");
      has_order = true;
    } else if (key == "shape") {
      expect('(');
      while (true) {
        skip();
        if (pos < h.size() && h[pos] == ')') break;
        const size_t start = pos;
        while (pos < h.size() && h[pos] >= '0' && h[pos] <= '9') ++pos;
        if (pos == start || pos - start > 18) fail("a dimension below 10^18");
        out.shape.push_back(std::stoll(h.substr(start, pos - start)));
        if (out.shape.size() > 64) fail("at most 64 dims");
        skip();
        if (pos < h.size() && h[pos] == ',')
          ++pos;
        else if (pos >= h.size() || h[pos] != ')')
          fail("',' or ')' after a dimension of the shape");
      }
      ++pos;
      has_shape = true;
    } else {
      fail("only the keys descr, fortran_order and shape, got '" + key + "'");
    }
    skip();
    if (pos < h.size() && h[pos] == ',') ++pos;
  }
  if (!(has_descr && has_order && has_shape)) fail("descr, fortran_order and shape");
  return out;
}

}  // namespace

std::string npy_bytes(const Tensor& t) {
  check(t.defined(), "save_npy", "a defined tensor, got an undefined one");
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i) {
    if (i > 0) shape += ", ";
    shape += std::to_string(t.shape()[i]);
  }
  shape += t.shape().size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + npy_descr(t.dtype()) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  while ((10 + header.size() + 1) % 64 != 0) header.push_back(' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  append_le(out, header.size(), 2);
  return out + header + tensor_bytes(t);
}

Tensor parse_npy(const std::string& bytes) {
  const char* op = "load_npy";
  check(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0, op,
        "the magic string \\x93NUMPY at the start, got a file of ", bytes.size(),
        " bytes without it (not a .npy file?)");
  const int major = static_cast<unsigned char>(bytes[6]);
  check(major >= 1 && major <= 3, op, "format version 1, 2 or 3, got ", major);
  const size_t len_width = major == 1 ? 2 : 4;
  check(bytes.size() >= 8 + len_width, op, "a header length, got a truncated file");
  const uint64_t header_len = read_le(bytes, 8, len_width);
  const size_t data_start = 8 + len_width + header_len;
  check(header_len <= bytes.size() - 8 - len_width, op, "a header length within the file, got bad ",
        "header length ", header_len, " in a file of ", bytes.size(), " bytes");
  const NpyHeader h = parse_npy_header(bytes.substr(8 + len_width, header_len));
  Dtype dtype;
  if (h.descr == "<f4")
    dtype = Dtype::float32;
  else if (h.descr == "<i8")
    dtype = Dtype::int64;
  else if (h.descr == "|b1")
    dtype = Dtype::boolean;
  else
    throw Error(std::string(op) + ": dtype <f4, <i8 or |b1, got '" + h.descr +
                "' (save it with .astype(numpy.float32) first)");
  // Fortran order stores the reversed shape row-major; read it that way, then transpose back.
  Shape stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  const uint64_t nbytes = checked_nbytes(stored, dtype, op, "the header's shape");
  check(nbytes == bytes.size() - data_start, op, "shape ", h.shape, " to hold ", nbytes,
        " data bytes, got ", bytes.size() - data_start, " (truncated file?)");
  Tensor t = tensor_from_bytes(bytes.substr(data_start), stored, dtype, op, "the data");
  if (!h.fortran_order || t.dim() < 2) return t;
  std::vector<int64_t> reversed(static_cast<size_t>(t.dim()));
  for (int64_t i = 0; i < t.dim(); ++i) reversed[static_cast<size_t>(i)] = t.dim() - 1 - i;
  return raw::contiguous(raw::permute(t, reversed));
}

void save_npy(const std::string& path, const Tensor& t) {
  write_file_atomic(path, npy_bytes(t));
}

Tensor load_npy(const std::string& path) {
  return parse_npy(read_file(path, "load_npy"));
}

}  // namespace qkv::nn
