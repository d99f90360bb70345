// check.cpp: the checks of check.h, one per exercise, each against qkv's own implementation.
#include "tutorials/exercises/check.h"

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

namespace qkv::exercises {

[[noreturn]] void not_implemented(const char* id, const char* name, const char* what) {
  std::string file = std::string(id) + "_" + name + ".cpp";  // 12.1 -> 12_1_<name>.cpp
  file[2] = '_';
  throw Error(std::string("exercise ") + id + " (" + name + "): not implemented yet; to do: " +
              what + " (tutorials/exercises/learner/" + file + ")");
}

const std::vector<ExerciseInfo>& exercise_list() {
  static const std::vector<ExerciseInfo> list = {
      {"01.1", "broadcast_add"},       {"02.1", "sum_to_shape"},
      {"02.2", "matmul_backward"},     {"07.1", "softmax_rows"},
      {"08.1", "attention"},           {"10.1", "split_heads"},
      {"10.2", "merge_heads"},         {"11.1", "cross_attention"},
      {"12.1", "causal_attention"},    {"12.2", "causal_attention_renormalised"},
      {"13.1", "softmax_backward"},    {"16.1", "adamw_step"},
      {"18.1", "layer_norm_backward"}, {"19.1", "kv_append"},
      {"19.2", "decode_step"},         {"21.1", "online_softmax_attention"},
      {"22.1", "rope_rotate"},         {"24.1", "gemm_packed_kernel"}};
  return list;
}

namespace {

// A known mistake: what a function that makes it returns, and what to do about it.
struct Hint {
  Tensor result;
  const char* text;
};

std::string index_str(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const int64_t s = shape[static_cast<size_t>(d)];
    idx[static_cast<size_t>(d)] = s > 0 ? flat % s : 0;
    flat = s > 0 ? flat / s : 0;
  }
  std::string out = "(";
  for (size_t i = 0; i < idx.size(); ++i) out += (i ? ", " : "") + std::to_string(idx[i]);
  return out + (idx.size() == 1 ? ",)" : ")");
}

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// Where got differs from expected by more than atol + rtol |expected| (NaN always differs):
// "" when it does not.
std::string difference(const Tensor& got, const Tensor& expected, double atol, double rtol) {
  if (!got.defined()) return "returned an undefined tensor";
  if (got.shape() != expected.shape())
    return "expected shape " + shape_str(expected.shape()) + ", got " + shape_str(got.shape());
  if (got.dtype() != Dtype::float32) return "expected a float32 tensor";
  const std::vector<float> g = contiguous(got).to_vector<float>();
  const std::vector<float> e = contiguous(expected).to_vector<float>();
  int64_t first = -1;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(g[i]) - static_cast<double>(e[i]));
    const bool bad = !(diff <= atol + rtol * std::fabs(static_cast<double>(e[i])));
    if (bad && first < 0) first = static_cast<int64_t>(i);
    worst = std::isnan(diff) || std::isnan(worst) ? NAN : std::max(worst, diff);
  }
  if (first < 0) return "";
  return "at index " + index_str(expected.shape(), first) + " got " +
         number(g[static_cast<size_t>(first)]) + ", expected " +
         number(e[static_cast<size_t>(first)]) + "; max difference " + number(worst);
}

// Collects the first failure of one exercise's cases.
class Grader {
 public:
  // Runs fn (the graded function's call); false if it threw, recording why.
  bool run(const std::string& input, const std::function<void()>& fn) {
    if (failed()) return false;
    try {
      NoGradGuard no_grad;  // the learner's ops record no history here (12.1 trains elsewhere)
      fn();
      return true;
    } catch (const Error& e) {
      const std::string what = e.what();
      if (what.find("not implemented yet") != std::string::npos)
        outcome_ = {Outcome::not_implemented, what, ""};
      else
        outcome_ = {Outcome::failed, "on " + input + ": threw qkv::Error: " + what, ""};
    } catch (const std::exception& e) {
      outcome_ = {Outcome::failed, "on " + input + ": threw " + e.what(), ""};
    } catch (...) {
      outcome_ = {Outcome::failed, "on " + input + ": threw something that is not an exception",
                  ""};
    }
    return false;
  }
  // Compares one result; on a mismatch, the first hint whose mistake it matches is added.
  bool same(const std::string& input, const Tensor& got, const Tensor& expected,
            const std::vector<Hint>& hints = {}, double atol = 1e-4, double rtol = 1e-3) {
    if (failed()) return false;
    const std::string diff = difference(got, expected, atol, rtol);
    if (diff.empty()) return true;
    std::string message = "on " + input + ": " + diff;
    for (const Hint& h : hints)
      if (got.defined() && h.result.defined() && difference(got, h.result, atol, rtol).empty()) {
        message += "\n    hint: " + std::string(h.text);
        break;
      }
    outcome_ = {Outcome::failed, message, ""};
    return false;
  }
  // The outcome, with `text` added as a hint to a failure whose message contains `when` (any
  // failure when `when` is empty).
  Outcome with_hint(const std::string& text, const char* when = "") {
    if (outcome_.kind == Outcome::failed && outcome_.message.find(when) != std::string::npos)
      outcome_.message += "\n    hint: " + text;
    return outcome_;
  }
  bool failed() const { return outcome_.kind != Outcome::passed; }
  Outcome outcome() const { return outcome_; }
  void note(const std::string& text) { outcome_.note = text; }

 private:
  Outcome outcome_;
};

std::string describe(const char* name, const Tensor& t) {
  return std::string(name) + " " + shape_str(t.shape());
}

// d<dy, f(x)>/dx by central differences, summed in double (autograd/gradcheck.h's recipe).
Tensor numeric_grad(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                    const Tensor& dy) {
  NoGradGuard no_grad;
  const double eps = 1e-2;
  std::vector<float> xv = contiguous(x).to_vector<float>(), out(xv.size());
  const std::vector<float> g = contiguous(dy).to_vector<float>();
  auto dot = [&](const std::vector<float>& v) {
    const std::vector<float> y = contiguous(f(from_vector(v, x.shape()))).to_vector<float>();
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += static_cast<double>(y[i]) * g[i];
    return s;
  };
  for (size_t i = 0; i < xv.size(); ++i) {
    const float keep = xv[i];
    xv[i] = static_cast<float>(keep + eps);
    const double up = dot(xv);
    xv[i] = static_cast<float>(keep - eps);
    const double down = dot(xv);
    xv[i] = keep;
    out[i] = static_cast<float>((up - down) / (2 * eps));
  }
  return from_vector(out, x.shape());
}

// d<dy, f(x)>/dx by qkv's autograd.
Tensor autograd_grad(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                     const Tensor& dy) {
  const Tensor leaf = requires_grad_(clone(x));
  backward(f(leaf), dy);
  return grad(leaf);
}

float scale_of(const Tensor& q) {
  return static_cast<float>(std::sqrt(static_cast<double>(q.size(-1))));
}

}  // namespace

// ---- 01.1 ---------------------------------------------------------------------------------

Outcome check_broadcast_add(decltype(&broadcast_add) f) {
  Grader gr;
  Generator g(101);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{3, 1, 5}, {4, 1}}, {{7}, {1}}, {{1}, {2, 33}}, {{2, 3}, {2, 3}}, {{4, 1, 1}, {1, 7, 2}}};
  for (const auto& c : cases) {
    const Shape &sa = c.first, &sb = c.second;
    const Tensor a = randn(sa, &g), b = randn(sb, &g);
    const std::string input = describe("a", a) + " + " + describe("b", b);
    Tensor got;
    if (!gr.run(input, [&] { got = f(a, b); })) break;
    gr.same(input, got, a + b);
  }
  return gr.outcome();
}

// ---- 02.1 ---------------------------------------------------------------------------------

Outcome check_sum_to_shape(decltype(&sum_to_shape) f) {
  Grader gr;
  Generator g(102);
  const std::vector<std::pair<Shape, Shape>> cases = {{{3, 1}, {4, 3, 5}},
                                                      {{7}, {2, 7}},
                                                      {{1, 33}, {5, 33}},
                                                      {{2, 1, 4}, {3, 2, 6, 4}},
                                                      {{6}, {6}}};
  for (const auto& c : cases) {
    const Shape &shape = c.first, &grad_shape = c.second;
    const Tensor up = randn(grad_shape, &g);
    // qkv's own reduction: the engine's, for x of `shape` broadcast into grad's shape.
    const Tensor x = requires_grad_(zeros(shape));
    backward(x + zeros(grad_shape), up);
    const std::string input = describe("grad", up) + " to shape " + shape_str(shape);
    Tensor got;
    if (!gr.run(input, [&] { got = f(up, shape); })) break;
    gr.same(input, got, grad(x),
            {{up, "sum the gradient over every dim that was broadcast (size 1 or missing in x)"}});
  }
  return gr.outcome();
}

// ---- 02.2 ---------------------------------------------------------------------------------

Outcome check_matmul_backward(decltype(&matmul_backward) f) {
  Grader gr;
  Generator g(103);
  for (const std::array<int64_t, 3>& dims :
       {std::array<int64_t, 3>{3, 7, 5}, {1, 33, 2}, {6, 4, 9}}) {
    const int64_t M = dims[0], K = dims[1], N = dims[2];
    const Tensor a = randn({M, K}, &g), b = randn({K, N}, &g), dc = randn({M, N}, &g);
    const std::string input = describe("a", a) + ", " + describe("b", b);
    MatmulGrads got;
    if (!gr.run(input, [&] { got = f(a, b, dc); })) break;
    auto fa = [&](const Tensor& x) { return matmul(x, b); };
    auto fb = [&](const Tensor& x) { return matmul(a, x); };
    gr.same(input + ", dA", got.da, autograd_grad(fa, a, dc));
    gr.same(input + ", dB", got.db, autograd_grad(fb, b, dc),
            {{matmul(transpose(dc, 0, 1), a), "dB = A^T dC, (K, N): you computed dC^T A"}});
    // and against finite differences of the forward
    gr.same(input + ", dA (finite differences)", got.da, numeric_grad(fa, a, dc), {}, 1e-3, 1e-2);
  }
  return gr.outcome();
}

// ---- 07.1 ---------------------------------------------------------------------------------

Outcome check_softmax_rows(decltype(&softmax_rows) f) {
  Grader gr;
  Generator g(107);
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{3, 33}, Shape{2, 5, 7}}) {
    for (float spread : {3.0f, 300.0f}) {  // 300: e^x overflows without the max
      const Tensor x = randn(s, &g) * spread;
      const std::string input =
          describe("x", x) + (spread > 100 ? " (scores in the hundreds)" : "");
      Tensor got;
      if (!gr.run(input, [&] { got = f(x); })) return gr.outcome();
      const std::vector<Hint> hints = {
          {softmax(x, 0), "normalise over the last dim (dim -1), not the first"},
          {exp(x - max(x, -1, true).values) / sum(exp(x - max(x, -1, true).values)),
           "divide each row by its own sum (sum over dim -1, keepdim)"}};
      if (!gr.same(input, got, softmax(x, -1), hints))
        return spread > 100 ? gr.with_hint(
                                  "subtract each row's max before exp: e^x overflows "
                                  "for x > 88",
                                  "nan")
                            : gr.outcome();
    }
  }
  return gr.outcome();
}

// ---- 08.1 ---------------------------------------------------------------------------------

Outcome check_attention(decltype(&attention) f) {
  Grader gr;
  Generator g(108);
  struct Case {
    Shape q, k, v;
  };
  for (const Case& c : {Case{{5, 4}, {7, 4}, {7, 3}}, Case{{2, 1, 8}, {2, 33, 8}, {2, 33, 5}},
                        Case{{2, 3, 6, 4}, {2, 3, 6, 4}, {2, 3, 6, 4}},
                        Case{{6, 4}, {2, 9, 4}, {2, 9, 2}}}) {  // the last: q broadcast
    const Tensor q = randn(c.q, &g) * 2.0f, k = randn(c.k, &g) * 2.0f, v = randn(c.v, &g);
    const std::string input = describe("q", q) + ", " + describe("k", k) + ", " + describe("v", v);
    Tensor got;
    if (!gr.run(input, [&] { got = f(q, k, v); })) break;
    const Tensor scores = matmul(q, transpose(k, -2, -1));
    gr.same(input, got, attention::scaled_dot_product_attention(q, k, v).output,
            {{matmul(softmax(scores, -1), v), "divide the scores by sqrt(D) before the softmax"},
             {matmul(softmax(scores / scale_of(q), -2), v),
              "take the softmax over the keys (the last dim), not the queries"},
             {matmul(softmax(scores / static_cast<float>(q.size(-1)), -1), v),
              "the scale is 1 / sqrt(D), not 1 / D"}});
  }
  return gr.outcome();
}

// ---- 10.1 and 10.2 ------------------------------------------------------------------------

Outcome check_split_heads(decltype(&split_heads) f) {
  Grader gr;
  Generator g(110);
  for (const std::array<int64_t, 4>& dims :
       {std::array<int64_t, 4>{2, 7, 3, 4}, {1, 1, 1, 5}, {3, 5, 4, 2}}) {
    const int64_t B = dims[0], T = dims[1], H = dims[2], D = dims[3];
    const Tensor x = randn({B, T, H * D}, &g);
    const std::string input = describe("x", x) + " into " + std::to_string(H) + " heads";
    Tensor got;
    if (!gr.run(input, [&] { got = f(x, H); })) break;
    gr.same(input, got, attention::split_heads(x, H),
            {{view(x, {B, H, T, D}), "view as (B, T, H, D) first, then transpose dims 1 and 2"}}, 0,
            0);
  }
  return gr.outcome();
}

Outcome check_merge_heads(decltype(&merge_heads) f) {
  Grader gr;
  Generator g(111);
  for (const std::array<int64_t, 4>& dims :
       {std::array<int64_t, 4>{2, 3, 7, 4}, {1, 1, 1, 5}, {3, 4, 5, 2}}) {
    const int64_t B = dims[0], H = dims[1], T = dims[2], D = dims[3];
    const Tensor x = randn({B, H, T, D}, &g);
    const std::string input = describe("x", x);
    Tensor got;
    if (!gr.run(input, [&] { got = f(x); })) break;
    gr.same(input, got, attention::merge_heads(x),
            {{reshape(x, {B, T, H * D}),
              "transpose dims 1 and 2 before the reshape: the heads merged in the wrong order"}},
            0, 0);
  }
  return gr.outcome();
}

// ---- 11.1 ---------------------------------------------------------------------------------

Outcome check_cross_attention(decltype(&cross_attention) f) {
  Grader gr;
  Generator g(112);
  for (const std::array<int64_t, 5>& dims :
       {std::array<int64_t, 5>{2, 3, 7, 8, 4}, {1, 1, 33, 6, 5}, {2, 5, 2, 4, 4}}) {
    const int64_t B = dims[0], T_q = dims[1], T_k = dims[2], C = dims[3], D = dims[4];
    const Tensor x = randn({B, T_q, C}, &g), memory = randn({B, T_k, C}, &g);
    const Tensor w_q = randn({C, D}, &g), w_k = randn({C, D}, &g), w_v = randn({C, D}, &g);
    const std::string input = describe("x", x) + ", " + describe("memory", memory);
    Tensor got;
    if (!gr.run(input, [&] { got = f(x, memory, w_q, w_k, w_v); })) break;
    const Tensor q = matmul(x, w_q), k = matmul(memory, w_k), v = matmul(memory, w_v);
    gr.same(input, got, attention::scaled_dot_product_attention(q, k, v).output,
            {{matmul(softmax(matmul(q, transpose(k, -2, -1)), -1), v),
              "divide the scores by sqrt(D) before the softmax"}});
  }
  return gr.outcome();
}

// ---- 12.1 and 12.2 ------------------------------------------------------------------------

namespace {
Outcome check_causal(const std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>& f,
                     uint64_t seed) {
  Grader gr;
  Generator g(seed);
  for (const Shape& s : {Shape{1, 4}, Shape{7, 4}, Shape{2, 3, 33, 8}, Shape{2, 5, 6}}) {
    const Tensor q = randn(s, &g) * 2.0f, k = randn(s, &g) * 2.0f, v = randn(s, &g);
    const std::string input = "q, k, v " + shape_str(s);
    Tensor got;
    if (!gr.run(input, [&] { got = f(q, k, v); })) break;
    const int64_t T = s[s.size() - 2];
    const Tensor scores = matmul(q, transpose(k, -2, -1)) / scale_of(q);
    const bool ok = gr.same(
        input, got, attention::scaled_dot_product_attention(q, k, v, {.causal = true}).output,
        {{matmul(softmax(scores, -1) * tril(ones({T, T})), v),
          "after the softmax, renormalise each row (or mask with -inf before it)"},
         {matmul(softmax(masked_fill(scores, triu(ones({T, T}, Dtype::boolean), 2), -INFINITY), -1),
                 v),
          "query i may see keys j <= i: hide j > i (triu with diagonal 1), not j > i + 1"}});
    if (!ok)
      return gr.with_hint(
          "a token sees itself: hide j > i, not j >= i (row 0 had no key left, and softmax of "
          "all -inf is NaN)",
          "nan");
  }
  return gr.outcome();
}
}  // namespace

Outcome check_causal_attention(decltype(&causal_attention) f) {
  return check_causal(f, 121);
}

Outcome check_causal_attention_renormalised(decltype(&causal_attention_renormalised) f) {
  return check_causal(f, 122);
}

// ---- 13.1 ---------------------------------------------------------------------------------

Outcome check_softmax_backward(decltype(&softmax_backward) f) {
  Grader gr;
  Generator g(113);
  for (const Shape& s : {Shape{1}, Shape{7}, Shape{3, 33}, Shape{2, 4, 5}}) {
    const Tensor x = randn(s, &g) * 2.0f, dy = randn(s, &g);
    const Tensor y = softmax(x, -1);
    const std::string input = describe("y", y);
    Tensor got;
    if (!gr.run(input, [&] { got = f(y, dy); })) break;
    auto fwd = [](const Tensor& t) { return softmax(t, -1); };
    gr.same(input, got, autograd_grad(fwd, x, dy),
            {{y * dy, "dx = y * (dy - sum(dy * y)): the sum over the row is missing"},
             {dy - sum(dy * y, -1, true), "multiply by y: dx = y * (dy - sum(dy * y))"}});
    gr.same(input + " (finite differences)", got, numeric_grad(fwd, x, dy), {}, 1e-3, 1e-2);
  }
  return gr.outcome();
}

// ---- 16.1 ---------------------------------------------------------------------------------

Outcome check_adamw_step(decltype(&adamw_step) f) {
  Grader gr;
  Generator g(115);
  const AdamWHyper h{.lr = 0.01, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1};
  // Two runs of 5 steps: gradients of order 1 (100 at step 3), and tiny ones, where eps is as
  // large as sqrt(v).
  for (const float scale : {1.0f, 1e-4f}) {
    const Tensor start = randn({7, 5}, &g);
    // qkv's own AdamW on a parameter whose gradient is set to grad_t at each step.
    const Tensor p = requires_grad_(clone(start));
    nn::AdamW opt({p}, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay);
    Tensor mine = clone(start), m = zeros({7, 5}), v = zeros({7, 5});
    for (int64_t step = 1; step <= 5; ++step) {
      const Tensor grad_t = randn({7, 5}, &g) * (scale * (step == 3 ? 100.0f : 1.0f));
      opt.zero_grad();
      backward(sum(p * grad_t));
      opt.step();
      const std::string input =
          "param (7, 5), gradients of order " + number(scale) + ", step " + std::to_string(step);
      AdamWState got;
      if (!gr.run(input, [&] { got = f(mine, grad_t, m, v, step, h); })) return gr.outcome();
      if (!gr.same(input, got.param, detach(p), {}, 1e-5, 1e-4))
        return gr.with_hint(
            "decay the weights (not the gradient), correct both moments' bias, and add eps "
            "after the square root");
      mine = got.param, m = got.m, v = got.v;
    }
  }
  return gr.outcome();
}

// ---- 18.1 ---------------------------------------------------------------------------------

Outcome check_layer_norm_backward(decltype(&layer_norm_backward) f) {
  Grader gr;
  Generator g(117);
  for (const std::array<int64_t, 2>& dims : {std::array<int64_t, 2>{1, 7}, {5, 33}, {7, 4}}) {
    const int64_t N = dims[0], C = dims[1];
    const Tensor x = randn({N, C}, &g) * 2.0f + 1.0f, w = randn({C}, &g), dy = randn({N, C}, &g);
    const Tensor b = zeros({C});
    const std::string input = describe("x", x);
    LayerNormGrads got;
    if (!gr.run(input, [&] { got = f(x, w, dy); })) break;
    // qkv's own: the fused layer_norm's backward, through autograd.
    const Tensor xl = requires_grad_(clone(x)), wl = requires_grad_(clone(w)),
                 bl = requires_grad_(clone(b));
    backward(layer_norm(xl, wl, bl), dy);
    const Tensor norm = (x - mean(x, -1, true)) / sqrt(var(x, -1, true, 0) + 1e-5f);
    gr.same(input + ", dx", got.dx, grad(xl),
            {{dy * w / sqrt(var(x, -1, true, 0) + 1e-5f),
              "every x moves the row's mean and variance: subtract mean(dnorm) and "
              "norm * mean(dnorm * norm)"}});
    gr.same(input + ", dw", got.dw, grad(wl),
            {{dy * norm, "sum dw over the rows: w is shared by every row"}});
    gr.same(input + ", db", got.db, grad(bl), {{dy, "sum db over the rows"}});
    auto fwd = [&](const Tensor& t) { return layer_norm(t, w, b); };
    gr.same(input + ", dx (finite differences)", got.dx, numeric_grad(fwd, x, dy), {}, 1e-3, 1e-2);
  }
  return gr.outcome();
}

// ---- 19.1 and 19.2 ------------------------------------------------------------------------

Outcome check_kv_append(decltype(&kv_append) f) {
  Grader gr;
  Generator g(118);
  attention::KVCache reference;  // qkv's own cache
  Tensor mine;
  for (int64_t fresh_len : {3, 1, 1, 5}) {
    const Tensor k = randn({2, 3, fresh_len, 4}, &g);
    reference.append(k, k);
    const std::string input = "fresh " + shape_str(k.shape()) + " after " +
                              (mine.defined() ? shape_str(mine.shape()) : "an empty cache");
    if (!gr.run(input, [&] { mine = f(mine, k); })) break;
    if (!gr.same(input, mine, reference.k, {}, 0, 0))
      return gr.with_hint("join along the positions (dim 2), the new ones after the cached");
  }
  return gr.outcome();
}

Outcome check_decode_step(decltype(&decode_step) f) {
  Grader gr;
  Generator g(119);
  for (const std::array<int64_t, 4>& dims :
       {std::array<int64_t, 4>{1, 2, 1, 4}, {2, 3, 7, 8}, {1, 1, 33, 5}}) {
    const int64_t B = dims[0], H = dims[1], T = dims[2], D = dims[3];
    const Tensor q = randn({B, H, 1, D}, &g) * 2.0f, k = randn({B, H, T, D}, &g) * 2.0f,
                 v = randn({B, H, T, D}, &g);
    const std::string input = describe("q", q) + ", " + describe("k_cache", k);
    Tensor got;
    if (!gr.run(input, [&] { got = f(q, k, v); })) break;
    gr.same(input, got, attention::scaled_dot_product_attention(q, k, v, {.causal = true}).output,
            {{matmul(softmax(matmul(q, transpose(k, -2, -1)), -1), v),
              "divide the scores by sqrt(D) before the softmax"},
             {narrow(v, -2, 0, 1),
              "the newest query sees every cached key: no mask aligned to "
              "the first key"}});
  }
  return gr.outcome();
}

// ---- 21.1 ---------------------------------------------------------------------------------

Outcome check_online_softmax_attention(decltype(&online_softmax_attention) f) {
  Grader gr;
  Generator g(120);
  for (const std::array<int64_t, 3>& dims :
       {std::array<int64_t, 3>{1, 3, 4}, {7, 5, 2}, {33, 4, 8}}) {
    const int64_t T = dims[0], D = dims[1], tile = dims[2];
    for (float spread : {2.0f, 200.0f}) {
      // Increasing scores move the max in every tile: a forgotten rescale shows.
      const Tensor scores =
          randn({T}, &g) * spread + to(arange(int64_t{0}, T), Dtype::float32) * 3.0f;
      const Tensor v = randn({T, D}, &g);
      const std::string input = describe("scores", scores) + ", tile " + std::to_string(tile) +
                                (spread > 100 ? " (scores in the hundreds)" : "");
      Tensor got;
      if (!gr.run(input, [&] { got = f(scores, v, tile); })) return gr.outcome();
      if (!gr.same(input, got, matmul(softmax(scores, 0), v)))
        return gr.with_hint(
            "when a tile raises the max m -> m', multiply both acc and l by e^(m - m') before "
            "adding the tile");
    }
  }
  return gr.outcome();
}

// ---- 22.1 ---------------------------------------------------------------------------------

Outcome check_rope_rotate(decltype(&rope_rotate) f) {
  Grader gr;
  Generator g(121);
  for (const std::array<int64_t, 3>& dims :
       {std::array<int64_t, 3>{1, 2, 0}, {7, 8, 5}, {33, 6, 100}}) {
    const int64_t T = dims[0], D = dims[1], offset = dims[2];
    const Tensor x = randn({2, T, D}, &g);
    const std::string input = describe("x", x) + ", offset " + std::to_string(offset);
    Tensor got;
    if (!gr.run(input, [&] { got = f(x, offset); })) break;
    gr.same(input, got, attention::rope(x, offset),
            {{attention::rope(x, 0), "row t is at position offset + t"}});
  }
  return gr.outcome();
}

// ---- 24.1 ---------------------------------------------------------------------------------

Outcome check_gemm_packed_kernel(decltype(&gemm_packed_kernel) f) {
  Grader gr;
  Generator g(123);
  for (const std::array<int64_t, 3>& dims :
       {std::array<int64_t, 3>{1, 1, 1}, {7, 33, 5}, {33, 7, 129}, {129, 64, 33}}) {
    const int64_t M = dims[0], K = dims[1], N = dims[2];
    const Tensor a = randn({M, K}, &g), b = randn({K, N}, &g);
    std::vector<float> c(static_cast<size_t>(M * N), 7.0f);  // C's old contents: overwrite them
    const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
    const std::string input = "A " + shape_str(a.shape()) + ", B " + shape_str(b.shape());
    if (!gr.run(input, [&] { f(M, N, K, av.data(), bv.data(), c.data()); })) break;
    const Tensor expected = matmul(a, b);
    gr.same(input, from_vector(c, {M, N}), expected,
            {{expected + 7.0f, "write C, do not add to it: C held other numbers before"}});
  }
  if (gr.failed()) return gr.outcome();
  // The speed at 256^3, against one core's FMA peak (tensor/fma_peak.h).
  const int64_t n = 256;
  const std::vector<float> a = randn({n, n}, &g).to_vector<float>(),
                           b = randn({n, n}, &g).to_vector<float>();
  std::vector<float> c(static_cast<size_t>(n * n));
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f(n, n, n, a.data(), b.data(), c.data());
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double gflops = 2.0 * n * n * n / best / 1e9, peak = fma_peak_gflops(1);
  gr.note(number(gflops) + " GFLOP/s at 256^3, " + number(100 * gflops / peak) +
          "% of one core's FMA peak (" + number(peak) + ")");
  return gr.outcome();
}

Outcome check(const std::string& id, const Functions& f) {
  if (id == "01.1") return check_broadcast_add(f.broadcast_add);
  if (id == "02.1") return check_sum_to_shape(f.sum_to_shape);
  if (id == "02.2") return check_matmul_backward(f.matmul_backward);
  if (id == "07.1") return check_softmax_rows(f.softmax_rows);
  if (id == "08.1") return check_attention(f.attention);
  if (id == "10.1") return check_split_heads(f.split_heads);
  if (id == "10.2") return check_merge_heads(f.merge_heads);
  if (id == "11.1") return check_cross_attention(f.cross_attention);
  if (id == "12.1") return check_causal_attention(f.causal_attention);
  if (id == "12.2") return check_causal_attention_renormalised(f.causal_attention_renormalised);
  if (id == "13.1") return check_softmax_backward(f.softmax_backward);
  if (id == "16.1") return check_adamw_step(f.adamw_step);
  if (id == "18.1") return check_layer_norm_backward(f.layer_norm_backward);
  if (id == "19.1") return check_kv_append(f.kv_append);
  if (id == "19.2") return check_decode_step(f.decode_step);
  if (id == "21.1") return check_online_softmax_attention(f.online_softmax_attention);
  if (id == "22.1") return check_rope_rotate(f.rope_rotate);
  if (id == "24.1") return check_gemm_packed_kernel(f.gemm_packed_kernel);
  throw Error("check_exercises: no exercise \"" + id + "\"");
}

}  // namespace qkv::exercises
