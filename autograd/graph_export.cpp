// graph_export.cpp: walks the graph with an explicit stack (a long chain must not overflow).
#include "autograd/graph_export.h"

#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "autograd/node.h"

namespace qkv {
namespace {

// One thing in the graph: an op's Node, or a leaf that accumulates .grad.
struct Item {
  const Node* node = nullptr;
  const AutogradMeta* leaf = nullptr;
  Shape shape;
  const void* id() const { return node ? static_cast<const void*>(node) : leaf; }
};

Item root_item(const Tensor& t) {
  const auto& m = t.impl().autograd;
  if (m && m->grad_fn) return {m->grad_fn.get(), nullptr, t.shape()};
  return {nullptr, m.get(), t.shape()};
}

std::vector<Item> inputs_of(const Item& it) {
  std::vector<Item> out;
  if (!it.node) return out;
  for (size_t i = 0; i < it.node->next.size(); ++i) {
    const Edge& e = it.node->next[i];
    if (e.node)
      out.push_back({e.node.get(), nullptr, it.node->input_shapes[i]});
    else if (e.leaf)
      out.push_back({nullptr, e.leaf.get(), it.node->input_shapes[i]});
  }
  return out;
}

// An op's name and shape, or a leaf's: its name from `names` if it has one, else "leaf".
std::string label(const Item& it, const LeafNames& names) {
  if (it.node) return it.node->name + " " + shape_str(it.shape);
  std::string name = "leaf";
  for (const auto& [t, n] : names)
    if (it.leaf && t.impl().autograd.get() == it.leaf) name = n;
  const bool rg = it.leaf && it.leaf->requires_grad;
  return name + " " + shape_str(it.shape) + (rg ? " requires_grad" : "");
}

}  // namespace

std::string graph_text(const Tensor& t, const LeafNames& names) {
  std::ostringstream os;
  std::set<const void*> shown;
  std::vector<std::pair<Item, int>> stack{{root_item(t), 0}};
  while (!stack.empty()) {
    auto [it, depth] = stack.back();
    stack.pop_back();
    os << std::string(2 * depth, ' ') << label(it, names);
    if (it.node && !shown.insert(it.id()).second) {
      os << " (shown above)\n";
      continue;
    }
    os << "\n";
    const std::vector<Item> ins = inputs_of(it);
    for (auto i = ins.rbegin(); i != ins.rend(); ++i) stack.push_back({*i, depth + 1});
  }
  return os.str();
}

std::string graph_dot(const Tensor& t, const LeafNames& names) {
  std::ostringstream os;
  os << "digraph qkv {\n  rankdir=BT;\n  node [fontname=\"Helvetica\"];\n";
  std::map<const void*, int> ids;
  std::vector<Item> stack{root_item(t)};
  auto id_of = [&](const Item& it, bool& fresh) {
    auto [pos, inserted] = ids.emplace(it.id(), static_cast<int>(ids.size()));
    fresh = inserted;
    return pos->second;
  };
  bool fresh = false;
  const int root = id_of(stack.back(), fresh);
  (void)root;
  os << "  n0 [label=\"" << label(stack.back(), names) << "\", style=bold];\n";
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const int me = ids[it.id()];
    for (const Item& in : inputs_of(it)) {
      const int other = id_of(in, fresh);
      if (fresh) {
        os << "  n" << other << " [label=\"" << label(in, names) << "\""
           << (in.leaf ? ", shape=box, style=filled, fillcolor=lightblue" : "") << "];\n";
        stack.push_back(in);
      }
      os << "  n" << other << " -> n" << me << ";\n";  // data flows from input to op
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace qkv
