// container.cpp: Sequential and ModuleList (see container.h).
#include "nn/container.h"

#include <string>

namespace qkv::nn {

Sequential::Sequential(std::vector<std::shared_ptr<UnaryModule>> modules) {
  for (auto& m : modules) push_back(std::move(m));
}

void Sequential::push_back(std::shared_ptr<UnaryModule> m) {
  check(m != nullptr, "Sequential", "a module, got nullptr");
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

Tensor Sequential::forward(const Tensor& x) {
  Tensor y = x;
  for (auto& m : modules_) y = m->forward(y);
  return y;
}

void ModuleList::push_back(std::shared_ptr<Module> m) {
  check(m != nullptr, "ModuleList", "a module, got nullptr");
  register_module(std::to_string(modules_.size()), m);
  modules_.push_back(std::move(m));
}

}  // namespace qkv::nn
