// engine.h: running the graph backwards, and the per-tensor autograd API.
//
// PyTorch's tensor methods become free functions here (the Tensor class lives on the floor
// below, which knows nothing of history):
//   x.requires_grad_()   -> requires_grad_(x)        x.grad          -> grad(x)
//   loss.backward()      -> backward(loss)           x.grad = None   -> zero_grad(x)
//   y.retain_grad()      -> retain_grad(y)           y.register_hook -> register_hook(y, fn)
//   x.detach()           -> detach(x)                torch.autograd.grad -> autograd::grad
#pragma once

#include <vector>

#include "autograd/node.h"

namespace qkv {

// Marks a tensor as a leaf that accumulates a gradient (returns it, for chaining).
Tensor requires_grad_(const Tensor& t, bool enabled = true);
bool is_leaf(const Tensor& t);
Tensor grad(const Tensor& t);     // the accumulated .grad (undefined before any backward)
void zero_grad(const Tensor& t);  // forgets .grad, like `t.grad = None`
// Keeps .grad on a non-leaf tensor too (leaves always keep theirs).
void retain_grad(const Tensor& t);
// hook(g) runs when t's gradient g is computed; it may return a replacement (or an undefined
// tensor to keep g). On a leaf it runs before g is added to .grad.
void register_hook(const Tensor& t, Hook hook);
// The same data, cut off from history: the result never requires grad.
Tensor detach(const Tensor& t);
std::string grad_fn_name(const Tensor& t);  // "" for leaves and history-free tensors

// Runs backward from `root`. For a scalar root the starting gradient is 1; otherwise pass
// `gradient` of root's shape. The graph is freed afterwards unless retain_graph is true; a
// second backward through a freed graph throws.
void backward(const Tensor& root, const Tensor& gradient = {}, bool retain_graph = false);

namespace autograd {
// The gradients of sum_i <outputs[i], grad_outputs[i]> with respect to each input, returned
// instead of accumulated: no .grad anywhere is touched. Inputs that do not influence the
// outputs get zeros.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, bool retain_graph = false);
}  // namespace autograd

}  // namespace qkv
