// npy.h: one tensor in NumPy's .npy format (numpy.load reads it):
//   "\x93NUMPY", version (1, 0), a uint16 little-endian header length, then a Python dict
//   literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded so the data
//   starts 64-byte aligned, then the data. Written atomically and read as strictly as
//   safetensors (safetensors.h).
#pragma once

#include <string>

#include "tensor/tensor.h"

namespace qkv::nn {

void save_npy(const std::string& path, const Tensor& t);
Tensor load_npy(const std::string& path);
std::string npy_bytes(const Tensor& t);
Tensor parse_npy(const std::string& bytes);

}  // namespace qkv::nn
