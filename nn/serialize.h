// serialize.h: saving and loading tensors, modules and whole training runs.
//
// Three formats, all readable outside qkv:
//   safetensors  named tensors: 8-byte little-endian header length N, N bytes of JSON
//                {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ...,
//                 "__metadata__": {"key": "value"}}, then the raw little-endian bytes.
//                PyTorch and Hugging Face load it (safetensors.torch.load_file).
//   checkpoint   a safetensors file holding a model ("model.<name>"), its optimizer's state
//                ("optim.<name>"), and in __metadata__ the step, learning rate and generator state,
//                so training resumes exactly where it stopped.
//   .npy         one tensor, NumPy's format (numpy.load reads it).
// Every write goes to a temporary file beside the target and is renamed over it only once
// complete, so an interrupted save never leaves a half-written file. Every read checks every
// length and offset against the file's size before it touches the bytes, and names what is
// wrong in a qkv::Error: a bad header length, bad JSON, a missing or extra key, a shape or
// dtype mismatch.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "nn/optim.h"

namespace qkv::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// ---- safetensors ----------------------------------------------------------------------------
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

void save(const Module& module, const std::string& path);  // safetensors
void load(Module& module, const std::string& path);

// ---- training checkpoints -------------------------------------------------------------------
void save_checkpoint(const std::string& path, const Module& model, const Optimizer& optimizer,
                     const Generator& generator);
// Restores model, optimizer (state, step count and learning rate) and generator; returns the
// step count.
int64_t load_checkpoint(const std::string& path, Module& model, Optimizer& optimizer,
                        Generator& generator);

// ---- .npy -----------------------------------------------------------------------------------
void save_npy(const std::string& path, const Tensor& t);
Tensor load_npy(const std::string& path);
std::string npy_bytes(const Tensor& t);
Tensor parse_npy(const std::string& bytes);

// ---- files ----------------------------------------------------------------------------------
// Writes `bytes` to `path` atomically: a temporary file in the same folder, then a rename.
void write_file_atomic(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path, const char* op);

}  // namespace qkv::nn
