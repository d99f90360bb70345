// print.h: printing a tensor the way PyTorch prints it, character for character.
//
//   std::cout << qkv::randn({2, 3});
//   tensor([[ 0.3367,  0.1288,  0.2345],
//           [ 0.2303, -1.1229, -0.1863]])
//
// The rules are torch/_tensor_str.py's: one format for the whole tensor (fixed with 4 decimals,
// integers as "1.", or scientific when the magnitudes span more than a factor of 1000, exceed 1e8
// or go below 1e-4), every element padded to one width, rows wrapped at 80 columns, and tensors of
// more than 1000 elements summarised with "..." keeping 3 items at each edge.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace qkv {

struct PrintOptions {
  int precision = 4;
  int64_t threshold = 1000;  // more elements than this: summarise
  int64_t edgeitems = 3;
  int64_t linewidth = 80;
  std::optional<bool> sci_mode;  // force (true/false) or let the values decide (nullopt)
};
// The options every print uses, like torch.set_printoptions. Reset with `= PrintOptions{}`.
PrintOptions& print_options();

// "tensor([...])" with optional suffixes ("requires_grad=True", "grad_fn=<MulBackward0>"),
// placed and wrapped the way PyTorch places them.
std::string format_tensor(const Tensor& t, std::vector<std::string> suffixes = {},
                          const std::string& prefix = "tensor(");
std::string to_string(const Tensor& t);  // format_tensor plus the suffixes of the hook below

// Higher floors may describe a tensor's history in its printed form (autograd adds
// "requires_grad=True" or "grad_fn=<...>"). This floor cannot see that history, so it asks
// the function registered here, if any.
using PrintSuffixHook = std::function<std::vector<std::string>(const Tensor&)>;
void set_print_suffix_hook(PrintSuffixHook hook);

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace qkv
