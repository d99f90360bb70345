// node.h: the graph. Every op that runs on a tensor that requires grad leaves behind a Node:
// a record of how its output was made, holding exactly what its backward needs.
//
//   x (leaf) ──┐
//              ├─ MulBackward0 ── y ── SumBackward0 ── loss
//   w (leaf) ──┘
//
// Ownership flows backwards only: a tensor owns its grad_fn Node, a Node owns the Nodes (or
// leaf records) of its inputs. A Node never owns its output (it keeps a weak_ptr to it, for
// hooks and retain_grad), and tensors it saves are saved without their history, so no
// shared_ptr cycle can form and the whole graph is freed when the last tensor goes away.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace qkv {

struct Node;
using Hook = std::function<Tensor(const Tensor&)>;  // returns the gradient to use (or undefined
                                                    // to keep the one it was given)

// The history of one tensor (TensorImpl::autograd). A leaf is a tensor the user made with
// requires_grad: it has no grad_fn and accumulates .grad. A non-leaf was made by an op.
struct AutogradMeta {
  bool requires_grad = false;
  bool retains_grad = false;  // a non-leaf that keeps its .grad (retain_grad())
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  std::vector<Hook> hooks;
};

// Where one input's gradient goes: into the Node that made it, or into a leaf's .grad.
struct Edge {
  std::shared_ptr<Node> node;
  std::shared_ptr<AutogradMeta> leaf;
  bool defined() const { return node || leaf; }
};

using Grads = std::vector<Tensor>;  // one per input; undefined means "no gradient"

struct Node {
  ~Node();                 // iterative, so that freeing a very long chain cannot overflow the stack
  std::string name;        // PyTorch's: "MulBackward0"
  std::vector<Edge> next;  // one per input of the forward op
  std::vector<Shape> input_shapes;  // the engine sums broadcast gradients back to these
  std::weak_ptr<AutogradMeta> output;
  Shape output_shape;
  // dout -> one gradient per input. Set to nullptr once the graph is freed.
  std::function<Grads(const Tensor& dout)> backward;
};

// A tensor kept for backward, and the storage's version when it was kept, so get() can refuse
// a tensor that was changed in place since. Ops save their inputs (whose history leads away
// from this Node) or their raw output (which has no history: record() gives the history to a
// new handle), so a saved tensor never leads back to the Node that saved it.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);
  const Tensor& get() const;

 private:
  Tensor data_;
  uint64_t version_ = 0;
};

// The one place an op attaches history to its output. If grad mode is on and any input
// requires grad, makes a Node named `name` with `backward`, points the output at it and
// returns the output; otherwise returns the output untouched. In anomaly mode it also checks
// the output for NaN and Inf.
Tensor record(const char* name, const Tensor& out, const std::vector<Tensor>& inputs,
              std::function<Grads(const Tensor& dout)> backward);

// Makes printing show history ("grad_fn=<MulBackward0>", "requires_grad=True"); called by
// record and requires_grad_, the two ways a tensor gets history.
void install_print_hook();

// Whether t takes part in autograd (a leaf with requires_grad, or the output of such an op).
bool requires_grad(const Tensor& t);

// Throws, naming `op` and the input shapes, if t holds a NaN or an Inf (anomaly mode).
void check_finite(const Tensor& t, const std::string& op, const std::vector<Shape>& input_shapes,
                  const char* phase);

}  // namespace qkv
