// node.cpp: attaching history to an op's output, saved tensors, and tearing graphs down.
#include "autograd/node.h"

#include <cmath>

#include "autograd/grad_mode.h"
#include "tensor/print.h"

namespace qkv {

// Printing shows history the way PyTorch does ("grad_fn=<MulBackward0>",
// "requires_grad=True"). The tensor floor asks this hook, installed once any tensor has
// history.
void install_print_hook() {
  static const bool installed = [] {
    set_print_suffix_hook([](const Tensor& t) {
      std::vector<std::string> suffixes;
      const auto& meta = t.impl().autograd;
      if (!meta) return suffixes;
      if (meta->grad_fn)
        suffixes.push_back("grad_fn=<" + meta->grad_fn->name + ">");
      else if (meta->requires_grad)
        suffixes.push_back("requires_grad=True");
      return suffixes;
    });
    return true;
  }();
  (void)installed;
}

Node::~Node() {
  // Freeing a long chain (x -> 100,000 ops -> loss) by plain destructors would recurse once per
  // node and overflow the stack. Instead, take over every input Node that only we own and
  // free them one by one from a local stack.
  std::vector<std::shared_ptr<Node>> stack;
  for (Edge& e : next)
    if (e.node) stack.push_back(std::move(e.node));
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (n.use_count() == 1)
      for (Edge& e : n->next)
        if (e.node) stack.push_back(std::move(e.node));
  }
}

SavedTensor::SavedTensor(const Tensor& t) : data_(t) {
  if (t.defined()) version_ = t.impl().storage->version();
}

const Tensor& SavedTensor::get() const {
  check(!data_.defined() || data_.impl().storage->version() == version_, "backward",
        "a tensor saved for backward to be unchanged, got one of shape ", data_.shape(),
        " modified in place after it was saved (", version_, " writes then, ",
        data_.impl().storage->version(), " now)");
  return data_;
}

bool requires_grad(const Tensor& t) {
  return t.defined() && t.impl().autograd && t.impl().autograd->requires_grad;
}

void check_finite(const Tensor& t, const std::string& op, const std::vector<Shape>& input_shapes,
                  const char* phase) {
  if (!t.defined() || t.dtype() != Dtype::float32) return;
  for (float v : t.to_vector<float>()) {
    if (std::isfinite(v)) continue;
    std::string shapes;
    for (const Shape& s : input_shapes) shapes += (shapes.empty() ? "" : ", ") + shape_str(s);
    throw_error("anomaly", op + " produced " + (std::isnan(v) ? "NaN" : "Inf") + " in its " +
                               phase + ", with inputs of shape " + shapes);
  }
}

Tensor record(const char* name, const Tensor& out, const std::vector<Tensor>& inputs,
              std::function<Grads(const Tensor& dout)> backward) {
  std::vector<Shape> shapes;
  if (is_anomaly_enabled()) {
    for (const Tensor& in : inputs) shapes.push_back(in.defined() ? in.shape() : Shape{});
    check_finite(out, name, shapes, "forward");
  }
  if (!is_grad_enabled()) return out;
  bool any = false;
  for (const Tensor& in : inputs) any = any || requires_grad(in);
  if (!any) return out;

  install_print_hook();
  auto node = std::make_shared<Node>();
  node->name = name;
  node->backward = std::move(backward);
  node->output_shape = out.shape();
  for (const Tensor& in : inputs) {
    node->input_shapes.push_back(in.defined() ? in.shape() : Shape{});
    Edge e;
    if (requires_grad(in)) {
      const auto& meta = in.impl().autograd;
      if (meta->grad_fn)
        e.node = meta->grad_fn;
      else
        e.leaf = meta;
    }
    node->next.push_back(std::move(e));
  }
  // The result is a new handle on the raw output, and only it carries the history. An op may
  // have saved the raw output itself (exp saves its result): that handle stays history-free,
  // so the Node never owns, through it, the tensor that owns the Node.
  Tensor result = Tensor::make_view(out, out.shape(), out.strides(), out.storage_offset());
  auto meta = std::make_shared<AutogradMeta>();
  meta->requires_grad = true;
  meta->grad_fn = node;
  node->output = meta;
  result.impl().autograd = std::move(meta);
  return result;
}

}  // namespace qkv
