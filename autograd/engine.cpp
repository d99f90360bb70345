// engine.cpp: reverse-mode differentiation over the recorded graph.
//
// backward(loss) visits every Node that loss depends on, each once, in an order where a Node
// runs only after every Node that feeds it gradient has run (a topological order, found with
// an explicit stack, never recursion, so a chain of 100,000 ops is fine). Gradients that meet
// at a Node or a leaf are added there: this is the one place where accumulation and the
// reduction of broadcast gradients happen, so each op's backward only states its local
// derivative.
#include "autograd/engine.h"

#include <unordered_map>
#include <unordered_set>

#include "autograd/grad_mode.h"
#include "tensor/elementwise.h"
#include "tensor/factory.h"
#include "tensor/reduce.h"
#include "tensor/view.h"

namespace qkv {
namespace {

AutogradMeta& meta_of(const Tensor& t) {
  auto& slot = t.impl().autograd;
  if (!slot) slot = std::make_shared<AutogradMeta>();
  return *slot;
}

Tensor add_grads(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return raw::add(a, b);
}

Tensor run_hooks(const std::vector<Hook>& hooks, Tensor g) {
  for (const Hook& h : hooks) {
    Tensor replaced = h(g);
    if (replaced.defined()) {
      check(replaced.shape() == g.shape(), "register_hook",
            "a hook to return a gradient of the same shape ", g.shape(), ", got ",
            replaced.shape());
      g = replaced;
    }
  }
  return g;
}

// What to do with gradients that reach leaves or captured tensors.
struct Sink {
  // autograd::grad: capture gradients of these tensors' histories, touch no .grad.
  std::unordered_map<const AutogradMeta*, Tensor>* capture = nullptr;
};

void deliver_to_leaf(AutogradMeta& leaf, Tensor g, Sink& sink) {
  g = run_hooks(leaf.hooks, g);
  if (sink.capture) {
    auto it = sink.capture->find(&leaf);
    if (it != sink.capture->end()) it->second = add_grads(it->second, g);
    return;
  }
  // .grad is a tensor of its own (not a stride-0 view of a broadcast gradient), so an
  // optimizer can read and update it like any other.
  leaf.grad = leaf.grad.defined() ? raw::add(leaf.grad, g) : raw::contiguous(g);
}

void run_engine(const std::vector<Tensor>& roots, const std::vector<Tensor>& root_grads,
                bool retain_graph, Sink sink) {
  NoGradGuard no_grad;  // backward formulas are plain tensor math: record nothing
  // 1. Seed: each root's gradient goes to its Node, or straight to it if it is a leaf.
  std::unordered_map<Node*, Tensor> pending;
  std::vector<Node*> starts;
  for (size_t i = 0; i < roots.size(); ++i) {
    AutogradMeta& m = *roots[i].impl().autograd;
    if (m.grad_fn) {
      pending[m.grad_fn.get()] = add_grads(pending[m.grad_fn.get()], root_grads[i]);
      starts.push_back(m.grad_fn.get());
    } else {
      deliver_to_leaf(m, root_grads[i], sink);
    }
  }
  // 2. Count, for every reachable Node, how many edges bring it gradient.
  std::unordered_map<Node*, int> deps;
  std::unordered_set<Node*> seen(starts.begin(), starts.end());
  std::vector<Node*> stack(starts.begin(), starts.end());
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next) {
      if (!e.node) continue;
      ++deps[e.node.get()];
      if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
    }
  }
  // 3. Run each Node once all of its gradient has arrived.
  std::vector<Node*> ready;
  for (Node* n : seen)
    if (deps[n] == 0) ready.push_back(n);
  while (!ready.empty()) {
    Node* n = ready.back();
    ready.pop_back();
    Tensor dout = std::move(pending[n]);
    pending.erase(n);
    Grads grads;
    if (dout.defined()) {
      if (auto out = n->output.lock()) {  // the output tensor is still alive: its hooks
        dout = run_hooks(out->hooks, dout);
        if (out->retains_grad && !sink.capture)
          out->grad = out->grad.defined() ? raw::add(out->grad, dout) : raw::contiguous(dout);
        if (sink.capture) {
          auto it = sink.capture->find(out.get());
          if (it != sink.capture->end()) it->second = add_grads(it->second, dout);
        }
      }
      check(n->backward != nullptr, "backward",
            "a graph that is still there, got one freed by an earlier backward (at ", n->name,
            "); pass retain_graph=true to the first backward to run backward through it twice");
      grads = n->backward(dout);
      if (!retain_graph) n->backward = nullptr;  // frees what the Node saved
      if (is_anomaly_enabled())
        for (const Tensor& g : grads) check_finite(g, n->name, n->input_shapes, "backward");
    }
    for (size_t i = 0; i < n->next.size(); ++i) {
      const Edge& e = n->next[i];
      Tensor g = i < grads.size() ? grads[i] : Tensor();
      if (g.defined() && e.defined()) {
        // Broadcasting in the forward means summing in the backward, done here for every op.
        g = raw::sum_to_shape(g, n->input_shapes[i]);
        if (e.node)
          pending[e.node.get()] = add_grads(pending[e.node.get()], g);
        else
          deliver_to_leaf(*e.leaf, g, sink);
      }
      if (e.node && --deps[e.node.get()] == 0) ready.push_back(e.node.get());
    }
  }
}

Tensor default_root_grad(const Tensor& root, const Tensor& gradient, const char* op) {
  if (gradient.defined()) {
    check(gradient.shape() == root.shape(), op, "a gradient of the output's shape ", root.shape(),
          ", got ", gradient.shape());
    return gradient;
  }
  check(root.numel() == 1, op, "a scalar output, or an explicit gradient, got an output of shape ",
        root.shape());
  return ones(root.shape());
}

}  // namespace

Tensor requires_grad_(const Tensor& t, bool enabled) {
  check(t.defined(), "requires_grad_", "a defined tensor, got an undefined one");
  check(!enabled || t.dtype() == Dtype::float32, "requires_grad_",
        "a float32 tensor (only floats have gradients), got ", dtype_name(t.dtype()));
  AutogradMeta& m = meta_of(t);
  check(!m.grad_fn, "requires_grad_", "a leaf tensor, got the output of ",
        m.grad_fn ? m.grad_fn->name : "", " (use detach() first to make a new leaf)");
  m.requires_grad = enabled;
  if (enabled) install_print_hook();
  return t;
}

bool is_leaf(const Tensor& t) {
  return !t.impl().autograd || !t.impl().autograd->grad_fn;
}

Tensor grad(const Tensor& t) {
  return t.impl().autograd ? t.impl().autograd->grad : Tensor();
}

void zero_grad(const Tensor& t) {
  if (t.impl().autograd) t.impl().autograd->grad = Tensor();
}

void retain_grad(const Tensor& t) {
  check(requires_grad(t), "retain_grad", "a tensor that requires grad, got one that does not");
  meta_of(t).retains_grad = true;
}

void register_hook(const Tensor& t, Hook hook) {
  check(requires_grad(t), "register_hook", "a tensor that requires grad, got one that does not");
  meta_of(t).hooks.push_back(std::move(hook));
}

Tensor detach(const Tensor& t) {
  return Tensor::make_view(t, t.shape(), t.strides(), t.storage_offset());
}

std::string grad_fn_name(const Tensor& t) {
  const auto& m = t.impl().autograd;
  return m && m->grad_fn ? m->grad_fn->name : "";
}

void backward(const Tensor& root, const Tensor& gradient, bool retain_graph) {
  check(requires_grad(root), "backward",
        "a tensor that requires grad, got one without history (did an input call "
        "requires_grad_, and was grad mode on?)");
  run_engine({root}, {default_root_grad(root, gradient, "backward")}, retain_graph, Sink{});
}

namespace autograd {
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph) {
  check(grad_outputs.empty() || grad_outputs.size() == outputs.size(), "autograd::grad",
        "one grad_output per output, got ", grad_outputs.size(), " for ", outputs.size());
  std::unordered_map<const AutogradMeta*, Tensor> captured;
  for (const Tensor& in : inputs) {
    check(requires_grad(in), "autograd::grad", "inputs that require grad, got one of shape ",
          in.shape(), " that does not");
    captured[in.impl().autograd.get()] = Tensor();
  }
  std::vector<Tensor> roots, seeds;
  for (size_t i = 0; i < outputs.size(); ++i) {
    check(requires_grad(outputs[i]), "autograd::grad",
          "outputs that require grad, got one of shape ", outputs[i].shape(), " that does not");
    roots.push_back(outputs[i]);
    seeds.push_back(default_root_grad(outputs[i], grad_outputs.empty() ? Tensor() : grad_outputs[i],
                                      "autograd::grad"));
  }
  run_engine(roots, seeds, retain_graph, Sink{&captured});
  std::vector<Tensor> result;
  for (const Tensor& in : inputs) {
    Tensor g = captured[in.impl().autograd.get()];
    result.push_back(g.defined() ? g : zeros(in.shape()));
  }
  return result;
}
}  // namespace autograd

}  // namespace qkv
