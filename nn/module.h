// module.h: Module, the base of every layer: named parameters and named submodules.
//
// A module registers its parameters and submodules in construction order, under the names
// PyTorch gives them, so named_parameters() yields "blocks.0.q.weight", exactly the keys of
// PyTorch's state_dict, and a checkpoint moves between the two by name. Construction order is
// also draw order: a model built in the same order as its PyTorch twin, after the same seed,
// holds bit-identical initial weights.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/all.h"

namespace qkv::nn {

// torch.nn.Parameter(t): a leaf tensor that requires grad (the same storage as t).
Tensor Parameter(const Tensor& t);

class Module {
 public:
  virtual ~Module() = default;

  // Every parameter of this module and its submodules, depth first in registration order.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const {
    return children_;
  }
  int64_t num_parameters() const;  // total elements, like sum(p.numel() for p in parameters())
  void zero_grad();

  // Mode switches for layers that behave differently in training (Dropout). Recursive.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

 protected:
  // Registers `t` as parameter `name` (made a Parameter if it is not one) and returns it.
  Tensor register_parameter(const std::string& name, const Tensor& t);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> m) {
    check_name(name);
    children_.emplace_back(name, m);
    return m;
  }

 private:
  void check_name(const std::string& name) const;
  std::vector<std::pair<std::string, Tensor>> params_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// A module with one input and one output: what Sequential chains.
class UnaryModule : public Module {
 public:
  virtual Tensor forward(const Tensor& x) = 0;
  Tensor operator()(const Tensor& x) { return forward(x); }
};

}  // namespace qkv::nn
