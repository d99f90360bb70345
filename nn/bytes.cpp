// bytes.cpp: the byte helpers and atomic file writes of bytes.h.
#include "nn/bytes.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

#include "tensor/allocator.h"
#include "tensor/view.h"

namespace qkv::nn {

void to_or_from_little_endian(std::string& bytes, size_t element_size) {
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i + element_size <= bytes.size(); i += element_size)
      std::reverse(bytes.begin() + i, bytes.begin() + i + element_size);
  } else {
    (void)bytes, (void)element_size;
  }
}

uint64_t read_le(const std::string& bytes, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

void append_le(std::string& out, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

std::string tensor_bytes(const Tensor& t) {
  const Tensor c = raw::contiguous(t);
  const size_t n = static_cast<size_t>(c.numel()) * element_size(c.dtype());
  std::string out(n, '\0');
  if (n > 0)
    std::memcpy(out.data(), c.impl().storage->data() + c.storage_offset() * element_size(c.dtype()),
                n);
  to_or_from_little_endian(out, element_size(c.dtype()));
  return out;
}

Tensor tensor_from_bytes(std::string bytes, const Shape& shape, Dtype dtype, const char* op,
                         const std::string& what) {
  Tensor t = Tensor::empty(shape, dtype);
  if (dtype == Dtype::boolean)
    for (char c : bytes)
      check(c == 0 || c == 1, op, "bool bytes of 0 or 1 in ", what, ", got ",
            static_cast<int>(static_cast<unsigned char>(c)));
  to_or_from_little_endian(bytes, element_size(dtype));
  if (!bytes.empty()) std::memcpy(t.impl().storage->data(), bytes.data(), bytes.size());
  return t;
}

uint64_t checked_nbytes(const Shape& shape, Dtype dtype, const char* op, const std::string& what) {
  uint64_t n = element_size(dtype);
  for (int64_t d : shape) {
    check(d >= 0, op, "non-negative sizes in ", what, ", got shape ", shape);
    const auto ud = static_cast<uint64_t>(d);
    check(ud == 0 || n <= std::numeric_limits<uint64_t>::max() / ud, op,
          "a shape whose size fits in ", "64 bits in ", what, ", got ", shape);
    n *= ud;
  }
  return n;
}

// A name beside `path` that no file has and no other writer in this process uses:
// "<path>.<tag>.<thread>.<n>".
static std::string unused_sibling(const std::string& path, const char* tag) {
  static std::atomic<uint64_t> counter{0};
  const std::string thread = std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  for (;;) {
    std::string name = path + "." + tag + "." + thread + "." + std::to_string(counter++);
    std::error_code ec;
    if (!std::filesystem::exists(name, ec)) return name;
  }
}

void check_writable(const std::string& path, const char* op) {
  namespace fs = std::filesystem;
  std::error_code ec;
  check(!fs::is_directory(path, ec), op, "a file to write, got \"", path, "\": a folder");
  const std::string probe = unused_sibling(path, "probe");
  std::ofstream out(probe, std::ios::binary);
  check(out.is_open(), op, "a writable path, got \"", path, "\": cannot create a file there");
  out.close();
  fs::remove(probe, ec);
}

void write_file_atomic(const std::string& path, const std::string& bytes) {
  namespace fs = std::filesystem;
  // A temporary name in the target's folder (a rename is only atomic within one filesystem).
  const std::string tmp = unused_sibling(path, "tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    check(out.is_open(), "save", "a writable path, could not create \"", tmp, "\"");
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw Error("save: writing \"" + tmp + "\" failed (disk full?); \"" + path +
                  "\" is unchanged");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw Error("save: could not rename \"" + tmp + "\" to \"" + path + "\": " + ec.message());
  }
}

std::string read_file(const std::string& path, const char* op, uint64_t max_bytes) {
  namespace fs = std::filesystem;
  // What the path is, before opening it: a folder opens on some systems and reads as 0 bytes,
  // and a FIFO or a device may never end.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  check(fs::exists(status), op, "a file, got \"", path, "\": no such file");
  check(!fs::is_directory(status), op, "a file, got \"", path, "\": a folder");
  check(fs::is_regular_file(status), op, "a regular file, got \"", path, "\": ",
        fs::is_fifo(status)                                                      ? "a FIFO"
        : fs::is_character_file(status) || fs::is_block_file(status)             ? "a device"
        : fs::is_socket(status)                                                  ? "a socket"
                                                                                 : "not a file");
  const uintmax_t size = fs::file_size(path, ec);
  check(!ec, op, "a readable file, could not read the size of \"", path, "\"");
  const uint64_t limit = max_bytes == 0 ? max_tensor_bytes() : max_bytes;
  check(size <= limit, op, "a file of at most ", limit, " bytes, got \"", path, "\" of ", size,
        " bytes");
  std::ifstream in(path, std::ios::binary);
  check(in.is_open(), op, "a readable file, could not open \"", path, "\"");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  check(!in.bad() && static_cast<uintmax_t>(in.gcount()) == size, op,
        "a readable file, reading \"", path, "\" failed (", in.gcount(), " of ", size, " bytes)");
  return bytes;
}

}  // namespace qkv::nn
