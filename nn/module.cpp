// module.cpp: walking the module tree for parameters, modes and counts.
#include "nn/module.h"

#include <functional>

namespace qkv::nn {

Tensor Parameter(const Tensor& t) {
  check(t.defined() && t.dtype() == Dtype::float32, "Parameter", "a float32 tensor, got ",
        t.defined() ? dtype_name(t.dtype()) : "an undefined one");
  if (requires_grad(t) && is_leaf(t)) return t;
  return requires_grad_(is_leaf(t) ? t : detach(t));
}

void Module::check_name(const std::string& name) const {
  check(!name.empty() && name.find('.') == std::string::npos, "Module",
        "a name without dots, got \"", name, "\"");
  for (const auto& [n, _] : params_)
    check(n != name, "Module", "a new name, got \"", name, "\" twice");
  for (const auto& [n, _] : children_)
    check(n != name, "Module", "a new name, got \"", name, "\" twice");
}

Tensor Module::register_parameter(const std::string& name, const Tensor& t) {
  check_name(name);
  const Tensor p = Parameter(t);
  params_.emplace_back(name, p);
  return p;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out = params_;
  for (const auto& [name, child] : children_)
    for (const auto& [sub, p] : child->named_parameters()) out.emplace_back(name + "." + sub, p);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (const auto& [_, p] : named_parameters()) out.push_back(p);
  return out;
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

void Module::zero_grad() {
  for (const Tensor& p : parameters()) qkv::zero_grad(p);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, child] : children_) child->train(on);
}

}  // namespace qkv::nn
