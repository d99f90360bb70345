// Lesson 02: autograd from scratch: a scalar engine of 72 lines, then the same with qkv.
//
// What you will learn:
//   - reverse-mode automatic differentiation, as Andrej Karpathy's micrograd builds it: every
//     number remembers the numbers it was made from and how to pass a gradient back to them;
//     backward() visits them in reverse topological order and applies the chain rule;
//   - that qkv's engine is the same idea on tensors: the same computation gives the same
//     gradients (micrograd's README example: g = 24.7041, dg/da = 138.8338, dg/db = 645.5773);
//   - the graph that backward walks, printed as text and written as Graphviz DOT.
// What comes before: lesson 01 (tensors).
// Run it: ./build/release/tutorials/02_autograd_from_scratch [--dot FILE]
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "nn/serialize.h"
#include "tutorials/common/lesson.h"

namespace micro {

// ---- the scalar engine: a Value is a number, its gradient, and how it was made ---------------
struct Node {
  double data = 0, grad = 0;
  std::vector<std::shared_ptr<Node>> children;  // the values this one was computed from
  std::function<void()> backward = [] {};       // adds this node's grad into its children's
  const char* op = "";
};

class Value {
 public:
  Value(double data) : n_(std::make_shared<Node>()) { n_->data = data; }  // NOLINT: like Python
  double data() const { return n_->data; }
  double grad() const { return n_->grad; }

  friend Value operator+(const Value& a, const Value& b) {
    Value out(a.data() + b.data(), {a, b}, "+");
    out.n_->backward = [o = out.n_.get(), a = a.n_, b = b.n_] {
      a->grad += o->grad;  // d(a + b)/da = 1
      b->grad += o->grad;
    };
    return out;
  }
  friend Value operator*(const Value& a, const Value& b) {
    Value out(a.data() * b.data(), {a, b}, "*");
    out.n_->backward = [o = out.n_.get(), a = a.n_, b = b.n_] {
      a->grad += b->data * o->grad;  // d(a b)/da = b
      b->grad += a->data * o->grad;
    };
    return out;
  }
  Value pow(double k) const {
    Value out(std::pow(data(), k), {*this}, "**");
    out.n_->backward = [o = out.n_.get(), a = n_, k] {
      a->grad += k * std::pow(a->data, k - 1) * o->grad;  // d(a^k)/da = k a^(k-1)
    };
    return out;
  }
  Value relu() const {
    Value out(data() > 0 ? data() : 0, {*this}, "relu");
    out.n_->backward = [o = out.n_.get(), a = n_] { a->grad += (o->data > 0 ? 1 : 0) * o->grad; };
    return out;
  }
  friend Value operator-(const Value& a) { return a * -1.0; }
  friend Value operator-(const Value& a, const Value& b) { return a + (-b); }
  friend Value operator/(const Value& a, const Value& b) { return a * b.pow(-1); }

  // Reverse-mode: order the graph so every node comes after the nodes it was made from, then
  // walk it backwards from the output, whose gradient with respect to itself is 1.
  void backward() {
    std::vector<Node*> order;
    std::set<Node*> seen;
    std::function<void(Node*)> visit = [&](Node* v) {
      if (!seen.insert(v).second) return;
      for (const auto& c : v->children) visit(c.get());
      order.push_back(v);
    };
    visit(n_.get());
    n_->grad = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it) (*it)->backward();
  }

 private:
  Value(double data, std::vector<Value> children, const char* op) : Value(data) {
    for (const Value& c : children) n_->children.push_back(c.n_);
    n_->op = op;
  }
  std::shared_ptr<Node> n_;
};

}  // namespace micro

int main(int argc, char** argv) {
  std::string dot_path = "autograd_graph.dot";
  lesson::Flags flags(
      "02_autograd_from_scratch",
      "Reverse-mode autodiff: a 72-line scalar engine, then qkv's engine on the same sum.");
  flags.path("--dot", &dot_path, "where the graph goes, in Graphviz DOT (render: dot -Tsvg FILE)");
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. micrograd's example with the 72-line engine above (namespace micro)");
    // >>> a = Value(-4.0); b = Value(2.0)
    // >>> c = a + b; d = a * b + b**3
    // >>> c += c + 1; c += 1 + c + (-a)
    // >>> d += d * 2 + (b + a).relu(); d += 3 * d + (b - a).relu()
    // >>> e = c - d; f = e**2; g = f / 2.0; g += 10.0 / f
    // >>> g.backward()
    using micro::Value;
    Value a = -4.0, b = 2.0;
    Value c = a + b;
    Value d = a * b + b.pow(3);
    c = c + (c + 1.0);
    c = c + (1.0 + c + (-a));
    d = d + (d * 2.0 + (b + a).relu());
    d = d + (3.0 * d + (b - a).relu());
    Value e = c - d;
    Value f = e.pow(2);
    Value g = f / 2.0;
    g = g + 10.0 / f;
    g.backward();
    std::printf("g = %.4f   dg/da = %.4f   dg/db = %.4f\n", g.data(), a.grad(), b.grad());
    lesson::expect(std::fabs(g.data() - 24.7041) < 5e-5 && std::fabs(a.grad() - 138.8338) < 5e-5 &&
                       std::fabs(b.grad() - 645.5773) < 5e-5,
                   "micrograd's README numbers: 24.7041, 138.8338, 645.5773");

    lesson::banner("2. The same computation with qkv's engine");
    // The same lines on 0-d float32 tensors: requires_grad_ marks the leaves, every op records
    // a Node (its grad_fn), backward walks them in reverse topological order.
    using namespace qkv;
    const Tensor ta = requires_grad_(scalar_tensor(-4.0f)),
                 tb = requires_grad_(scalar_tensor(2.0f));
    Tensor tc = ta + tb;
    Tensor td = ta * tb + pow(tb, 3.0f);
    tc = tc + (tc + 1.0f);
    tc = tc + (1.0f + tc + (-ta));
    td = td + (td * 2.0f + relu(tb + ta));
    td = td + (3.0f * td + relu(tb - ta));
    const Tensor te = tc - td;
    const Tensor tf = pow(te, 2.0f);
    Tensor tg = tf / 2.0f;
    tg = tg + 10.0f / tf;
    backward(tg);
    const float ga = grad(ta).item<float>(), gb = grad(tb).item<float>();
    std::printf("g = %.4f   dg/da = %.4f   dg/db = %.4f   (float32)\n", tg.item<float>(), ga, gb);
    lesson::expect(std::fabs(ga - a.grad()) < 1e-3 && std::fabs(gb - b.grad()) < 1e-3,
                   "qkv's gradients equal the scalar engine's (to float32 rounding)");

    lesson::banner("3. The graph backward walks");
    // Each line is a Node: the op that made a tensor, indented under the op that used it.
    // New: the leaves named a and b, as micrograd's picture names them.
    const std::string text = graph_text(tf, {{ta, "a"}, {tb, "b"}});
    std::cout << "f = e**2, as text (the full graph of g repeats these lines):\n" << text;
    nn::write_file_atomic(dot_path, graph_dot(tg, {{ta, "a"}, {tb, "b"}}));
    std::cout << "wrote " << dot_path << " (draw it with: dot -Tsvg " << dot_path
              << " -o graph.svg)\n";
    // Every kind of node in g's graph, by name: what torch names the same lines' grad_fns
    // (PyTorch 1.13 walks g.grad_fn's next_functions to these 8 names and AccumulateGrad).
    std::set<std::string> names;
    std::istringstream lines(graph_text(tg, {{ta, "a"}, {tb, "b"}}));
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string word;
      if (words >> word && word.find("Backward") != std::string::npos) names.insert(word);
    }
    const std::set<std::string> torch_names = {
        "AddBackward0", "DivBackward0",  "MulBackward0",        "NegBackward0",
        "PowBackward0", "ReluBackward0", "ReciprocalBackward0", "SubBackward0"};
    std::string listed;
    for (const std::string& n : names) listed += (listed.empty() ? "" : ", ") + n;
    std::cout << "the nodes of g: " << listed << "\n";
    lesson::expect(names == torch_names,
                   "the graph's nodes carry torch's grad_fn names, the same 8 as PyTorch's graph");
    std::cout << "\nThe difference to micrograd is only the unit: a Node here holds a tensor and\n"
                 "its backward is a whole tensor formula (for matmul: dA = dC B^T), so one node\n"
                 "does the work of millions of scalar Values.\n";
    lesson::exercises({"02.1 sum_to_shape: a broadcast gradient summed back to its shape",
                       "02.2 matmul_backward: dA and dB of C = A @ B"});
    return lesson::finish();
  });
}
