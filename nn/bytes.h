// bytes.h: tensors as little-endian bytes, and files written whole or not at all. What the
// file formats share (safetensors.h, checkpoint.h, npy.h).
#pragma once

#include <cstdint>
#include <string>

#include "tensor/tensor.h"

namespace qkv::nn {

// Tensors are stored little-endian in every format; on a big-endian host each element is
// byte-swapped on the way in and out.
void to_or_from_little_endian(std::string& bytes, size_t element_size);
uint64_t read_le(const std::string& bytes, size_t at, size_t width);
void append_le(std::string& out, uint64_t v, size_t width);

// The tensor's elements, row-major, as little-endian bytes.
std::string tensor_bytes(const Tensor& t);
// A new tensor of `shape` and `dtype` filled from little-endian bytes (their count checked by
// the caller). Booleans must be 0 or 1: any other byte would be an invalid C++ bool.
Tensor tensor_from_bytes(std::string bytes, const Shape& shape, Dtype dtype, const char* op,
                         const std::string& what);
// numel * element size, or an error if the shape is negative or the product overflows.
uint64_t checked_nbytes(const Shape& shape, Dtype dtype, const char* op, const std::string& what);

// Writes `bytes` to `path` atomically: a temporary file in the same folder, then a rename, so
// an interrupted save never leaves a half-written file.
void write_file_atomic(const std::string& path, const std::string& bytes);

// Whether `path` can be written, found before a long run rather than after it: a file that does
// not exist yet is created beside it and removed (nothing that exists is touched). Throws a
// qkv::Error "<op>: ..." naming the path if not.
void check_writable(const std::string& path, const char* op);
// The whole file at path, checked first: a missing file, a folder, a FIFO, a device, or a file
// of more than max_bytes (0: max_tensor_bytes(), the most one tensor may take) is a qkv::Error
// from op that names the path and says which.
std::string read_file(const std::string& path, const char* op, uint64_t max_bytes = 0);

}  // namespace qkv::nn
