// safetensors.h: named tensors in a safetensors file, and modules saved and loaded by their
// parameters' names.
//
//   8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...,
//    "__metadata__": {"key": "value"}}, then the raw little-endian bytes.
// PyTorch and Hugging Face load it (safetensors.torch.load_file). A write goes to a temporary
// file beside the target and is renamed over it only once complete (bytes.h), so an
// interrupted save never leaves a half-written file. A read checks every length and offset
// against the file's size before it touches the bytes, and names what is wrong in a
// qkv::Error: a bad header length, bad JSON, a missing or extra key, a shape or dtype mismatch.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace qkv::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct SafetensorsFile {
  NamedTensors tensors;                         // in the order of their data in the file
  std::map<std::string, std::string> metadata;  // the "__metadata__" entry (strings only)
};

void save_safetensors(const std::string& path, const NamedTensors& tensors,
                      const std::map<std::string, std::string>& metadata = {});
SafetensorsFile load_safetensors(const std::string& path);

// The same, to and from bytes in memory (what the file functions and the fuzzer use).
std::string safetensors_bytes(const NamedTensors& tensors,
                              const std::map<std::string, std::string>& metadata = {});
SafetensorsFile parse_safetensors(const std::string& bytes);

// ---- modules --------------------------------------------------------------------------------
// state_dict: the module's parameters by name, as torch's module.state_dict() (the tensors
// themselves, not copies).
NamedTensors state_dict(const Module& module);

// Copies the tensors into the module's parameters. Every parameter must be present with its
// shape and dtype, and no other key may appear; otherwise a qkv::Error lists the missing and
// unexpected keys or names the mismatched one, and the module is left unchanged.
void load_state_dict(Module& module, const NamedTensors& tensors);

// load_state_dict in two halves, for a loader that must check everything (a checkpoint's
// optimizer state too) before it changes anything. match_state_dict pairs every parameter with
// its tensor from `tensors`, or throws naming every missing and unexpected key, or the first
// shape, dtype or non-finite value; it changes nothing. copy_into_parameters copies them.
std::vector<std::pair<Tensor, Tensor>> match_state_dict(const Module& module,
                                                        const NamedTensors& tensors,
                                                        const char* op);
void copy_into_parameters(const std::vector<std::pair<Tensor, Tensor>>& pairs);

void save(const Module& module, const std::string& path);  // safetensors
void load(Module& module, const std::string& path);

}  // namespace qkv::nn
