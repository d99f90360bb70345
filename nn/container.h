// container.h: Sequential (chains unary modules) and ModuleList (holds modules by index).
// Children are named "0", "1", ... so their parameters are "0.weight", "blocks.1.q.bias", as
// in PyTorch.
#pragma once

#include <memory>
#include <vector>

#include "nn/module.h"

namespace qkv::nn {

class Sequential : public UnaryModule {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<UnaryModule>> modules);
  void push_back(std::shared_ptr<UnaryModule> m);
  Tensor forward(const Tensor& x) override;
  size_t size() const { return modules_.size(); }

 private:
  std::vector<std::shared_ptr<UnaryModule>> modules_;
};

class ModuleList : public Module {
 public:
  void push_back(std::shared_ptr<Module> m);
  size_t size() const { return modules_.size(); }
  // The i-th module as its own type: list.at<Block>(0)->forward(x).
  template <class M>
  std::shared_ptr<M> at(size_t i) const {
    check(i < modules_.size(), "ModuleList", "an index below ", modules_.size(), ", got ", i);
    auto m = std::dynamic_pointer_cast<M>(modules_[i]);
    check(m != nullptr, "ModuleList", "module ", i, " of the requested type, got another type");
    return m;
  }

 private:
  std::vector<std::shared_ptr<Module>> modules_;
};

}  // namespace qkv::nn
