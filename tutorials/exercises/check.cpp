// check.cpp: the checks of check.h: the grading of one case (grade), then each exercise's cases
// against qkv's own implementation, with the mistakes each case is there to catch.
#include "tutorials/exercises/check.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tutorials/exercises/wrong/wrong.h"

namespace qkv::exercises {

[[noreturn]] void not_implemented(const char* id, const char* name, const char* what) {
  std::string file = std::string(id) + "_" + name + ".cpp";  // 12.1 -> 12_1_<name>.cpp
  file[2] = '_';
  throw Error(std::string("exercise ") + id + " (" + name + "): not implemented yet; to do: " +
              what + " (tutorials/exercises/learner/" + file + ")");
}

const std::vector<ExerciseInfo>& exercise_list() {
  static const std::vector<ExerciseInfo> list = {{"01.1", "broadcast_add"},
                                                 {"02.1", "sum_to_shape"},
                                                 {"02.2", "matmul_backward"},
                                                 {"05.1", "cross_entropy_backward"},
                                                 {"07.1", "softmax_rows"},
                                                 {"08.1", "attention"},
                                                 {"10.1", "split_heads"},
                                                 {"10.2", "merge_heads"},
                                                 {"11.1", "cross_attention"},
                                                 {"12.1", "causal_attention"},
                                                 {"12.2", "causal_attention_renormalised"},
                                                 {"13.1", "softmax_backward"},
                                                 {"15.1", "block_forward"},
                                                 {"16.1", "adamw_step"},
                                                 {"18.1", "layer_norm_backward"},
                                                 {"18.2", "gelu_backward"},
                                                 {"19.1", "kv_append"},
                                                 {"19.2", "decode_step"},
                                                 {"19.3", "repeat_kv"},
                                                 {"21.1", "online_softmax_attention"},
                                                 {"22.1", "rope_rotate"},
                                                 {"23.1", "rms_norm_backward"},
                                                 {"24.1", "gemm_packed_kernel"},
                                                 {"25.1", "bpe_merge"}};
  return list;
}

namespace {

using Tensors = std::vector<Tensor>;

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

// A tensor's values in row-major order as doubles (float32 or int64).
std::vector<double> values(const Tensor& t) {
  std::vector<double> out;
  if (t.dtype() == Dtype::int64) {
    for (int64_t v : contiguous(t).to_vector<int64_t>()) out.push_back(static_cast<double>(v));
  } else {
    for (float v : contiguous(to(t, Dtype::float32)).to_vector<float>()) out.push_back(v);
  }
  return out;
}

// Whether x is within atol + rtol |y| of y (NaN is never).
bool close(double x, double y, double atol, double rtol) {
  return x == y || std::fabs(x - y) <= atol + rtol * std::fabs(y);
}

// Where got differs from expected by more than atol + rtol |expected| (NaN always differs):
// "" when it does not.
std::string difference(const Tensor& got, const Tensor& expected, double atol, double rtol) {
  if (!got.defined()) return "returned an undefined tensor";
  if (got.shape() != expected.shape()) {
    std::string text =
        "expected shape " + shape_str(expected.shape()) + ", got " + shape_str(got.shape());
    if (got.numel() <= 16 && expected.numel() <= 16 && got.dtype() == expected.dtype()) {
      auto listed = [](const Tensor& t) {  // a few values: [8, 5, 7]
        std::string out;
        for (double v : values(t)) out += (out.empty() ? "" : ", ") + number(v);
        return "[" + out + "]";
      };
      text += ": got " + listed(got) + ", expected " + listed(expected);
    }
    return text;
  }
  if (got.dtype() != expected.dtype())
    return std::string("expected a ") + dtype_name(expected.dtype()) + " tensor, got " +
           dtype_name(got.dtype());
  const std::vector<double> g = values(got), e = values(expected);
  int64_t first = -1;
  double worst = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool bad = !close(g[i], e[i], atol, rtol);
    if (bad && first < 0) first = static_cast<int64_t>(i);
    const double diff = std::fabs(g[i] - e[i]);
    if (bad) worst = std::isnan(diff) || std::isnan(worst) ? NAN : std::max(worst, diff);
  }
  if (first < 0) return "";
  return "at index " + index_str(expected.shape(), first) + " got " +
         number(g[static_cast<size_t>(first)]) + ", expected " +
         number(e[static_cast<size_t>(first)]) + "; max difference " + number(worst);
}

// Whether a and b are the same within the tolerance, where NaN matches NaN (a mistake that
// overflows gives NaN where the learner's overflowing code does too).
bool alike(const Tensor& a, const Tensor& b, double atol, double rtol) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const std::vector<double> x = values(a), y = values(b);
  for (size_t i = 0; i < x.size(); ++i)
    if (!(std::isnan(x[i]) && std::isnan(y[i])) && !close(x[i], y[i], atol, rtol)) return false;
  return true;
}

bool all_alike(const Tensors& a, const Tensors& b, double atol, double rtol) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!alike(a[i], b[i], atol, rtol)) return false;
  return true;
}

// Whether a still holds exactly what b holds (bit for bit: a changed input).
bool unchanged(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = contiguous(a), y = contiguous(b);
  if (a.dtype() == Dtype::int64) return x.to_vector<int64_t>() == y.to_vector<int64_t>();
  const std::vector<float> u = x.to_vector<float>(), v = y.to_vector<float>();
  return u.empty() || std::memcmp(u.data(), v.data(), u.size() * sizeof(float)) == 0;
}

// ---- The inputs ------------------------------------------------------------------------------

// How a tensor argument is laid out in memory: the values are the same either way, so only a
// function that reads memory as if it were contiguous can tell.
enum class Layout { contiguous, transposed, sliced, expanded };

// t with the same values, laid out as a transposed view (its last two dims swapped back) or a
// sliced one (every other element of a tensor twice as wide, zeros between).
Tensor relaid(const Tensor& t, Layout layout) {
  if (layout == Layout::contiguous) return t;
  if (layout == Layout::transposed) return transpose(contiguous(transpose(t, -2, -1)), -2, -1);
  Shape wide = t.shape();
  wide.back() *= 2;
  const Tensor base = zeros(wide, t.dtype());
  copy_(slice(base, -1, 0, wide.back(), 2), t);
  return slice(base, -1, 0, wide.back(), 2);
}

// A float32 tensor of `shape` with values scale * N(0, 1) + shift from g, laid out as asked
// (relaid), or expanded: dim 0 read from one row, stride 0 (its rows then all the same).
Tensor make(const Shape& shape, Generator& g, Layout layout = Layout::contiguous,
            float scale = 1.0f, float shift = 0.0f) {
  if (layout != Layout::expanded) return relaid(randn(shape, &g) * scale + shift, layout);
  Shape row = shape;
  row[0] = 1;
  return expand(randn(row, &g) * scale + shift, shape);
}

const char* layout_word(Layout layout) {
  switch (layout) {
    case Layout::transposed:
      return " transposed";
    case Layout::sliced:
      return " sliced";
    case Layout::expanded:
      return " expanded";
    default:
      return "";
  }
}

// One case: how to make its tensor arguments (fresh at every call, with the same values and
// the same layout, so the reference, the graded function and each known mistake get their
// own), their names, any other argument, and the mistakes (wrong/) it is there to catch.
struct Input {
  std::string what;                // "a (3, 1, 5) + b (4, 1)"
  std::vector<std::string> names;  // the tensor arguments', in order
  std::function<Tensors()> tensors;
  std::vector<int64_t> ints = {};  // heads, step, tile, offset, ...
  std::vector<double> reals = {};  // 16.1's learning rate and weight decay
  Shape shape = {};                // 02.1's target shape
  std::vector<std::string> catches = {};
  std::vector<std::string> only = {};  // of those, the ones no other case catches
};

// An exercise's cases and how to grade them.
template <class F>
struct Exercise {
  std::vector<Input> inputs;
  // The graded function (or a known mistake) on one case's tensors, and qkv's own answer.
  std::function<Tensors(F, const Tensors&, const Input&)> call;
  std::function<Tensors(const Tensors&, const Input&)> reference;
  const Catalogue<F>& mistakes;
  std::vector<std::string> outputs = {""};  // the outputs' names, for messages ("dA", "dB")
  double atol = 1e-4, rtol = 1e-3;
  // A model trains through it: backward through the function, every argument's gradient
  // compared with the reference's (the first output's, against a random upstream gradient).
  bool gradients = false;
};

Outcome failure(int64_t c, const std::string& message) {
  Outcome o{Outcome::failed, message, "", {}, c};
  return o;
}

// Runs fn; "" if it returned, else what it threw. A stub's "not implemented yet" is reported as
// such through `stub`.
std::string run_caught(const std::function<void()>& fn, bool* stub) {
  try {
    fn();
    return "";
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.find("not implemented yet") != std::string::npos) *stub = true;
    return *stub ? what : "threw qkv::Error: " + what;
  } catch (const std::exception& e) {
    return std::string("threw ") + e.what();
  } catch (...) {
    return "threw something that is not an exception";
  }
}

// What a function did on one case: its outputs, or the error it threw.
struct Behaviour {
  Tensors out;
  std::string error;  // "" when it returned
  bool stub = false;  // it threw the stub's "not implemented yet"
};

template <class F>
Behaviour behave(const Exercise<F>& ex, F f, const Input& in, const Tensors& args) {
  Behaviour b;
  // Grad mode stays on (a backward may be written with autograd); the inputs require no grad, so
  // nothing is recorded unless the function asks for it.
  b.error = run_caught([&] { b.out = ex.call(f, args, in); }, &b.stub);
  return b;
}

// Whether two functions did the same thing: the same error, or outputs alike.
template <class F>
bool same_behaviour(const Exercise<F>& ex, const Behaviour& a, const Behaviour& b) {
  if (!a.error.empty() || !b.error.empty()) return a.error == b.error;
  return all_alike(a.out, b.out, ex.atol, ex.rtol);
}

// The known mistakes that did on case c what the graded function did (`got`: a wrong output or
// an error), where that is not the right answer (`expected`), and that also did what f did on
// every other case (a NaN that matches a NaN is weak evidence; a whole exercise's behaviour is
// not), as hint lines; their names go to o.diagnosed.
template <class F>
std::string diagnose(const Exercise<F>& ex, F f, size_t c, const Behaviour& got,
                     const Tensors& expected, Outcome& o) {
  const Input& in = ex.inputs[c];
  const Behaviour right{expected, "", false};
  std::vector<const Mistake<F>*> matches;
  for (const Mistake<F>& m : ex.mistakes) {
    if (m.caught_as) continue;  // its outputs are right: the checker's own words name it
    const Behaviour theirs = behave(ex, m.fn, in, in.tensors());
    if (same_behaviour(ex, got, theirs) && !same_behaviour(ex, theirs, right))
      matches.push_back(&m);
  }
  std::vector<Behaviour> yours;  // f on every case, for the matches to be held to
  if (!matches.empty())
    for (const Input& oin : ex.inputs) yours.push_back(behave(ex, f, oin, oin.tensors()));
  std::vector<const Mistake<F>*> everywhere;
  for (const Mistake<F>* m : matches) {
    bool all = true;
    for (size_t other = 0; all && other < ex.inputs.size(); ++other) {
      const Input& oin = ex.inputs[other];
      all = other == c || same_behaviour(ex, yours[other], behave(ex, m->fn, oin, oin.tensors()));
    }
    if (all) everywhere.push_back(m);
  }
  matches = everywhere;
  std::string lines;
  for (const Mistake<F>* m : matches) {
    o.diagnosed.push_back(m->name);
    lines += std::string("\n    ") + (got.error.empty() ? "your output" : "the same error") +
             " is that of a known mistake (" + m->name + "): " + m->hint +
             "\n    the line it breaks: " + m->math;
  }
  return lines;
}

template <class F>
std::string named(const Exercise<F>& ex, size_t k) {
  return ex.outputs.size() > 1 ? ", " + ex.outputs[k] : "";
}

// Backward through f on one case: every argument's gradient against the reference's.
template <class F>
Outcome gradients(const Exercise<F>& ex, F f, const Input& in, int64_t c) {
  Generator g(9000 + static_cast<uint64_t>(c));
  const Tensors made = in.tensors();
  Tensors mine, ref;
  for (const Tensor& t : made) {
    const bool floating = t.defined() && t.dtype() == Dtype::float32;
    mine.push_back(floating ? requires_grad_(clone(t)) : t);
    ref.push_back(floating ? requires_grad_(clone(t)) : t);
  }
  const std::string on = "on " + in.what + " (backward): ";
  Tensors out;
  bool stub = false;
  const std::string threw = run_caught([&] { out = ex.call(f, mine, in); }, &stub);
  if (!threw.empty()) return failure(c, on + threw);
  if (out.empty() || !out[0].defined() || !requires_grad(out[0]))
    return failure(c, on + "no gradient flows through your function: its output has no "
                           "history, so a model cannot train through it (write it with qkv's "
                           "ops, not loops over to_vector(), and without detach or NoGradGuard)");
  const Tensors expected = ex.reference(ref, in);
  const Tensor dy = randn(expected[0].shape(), &g);
  const std::string threw2 = run_caught([&] { backward(out[0], dy); }, &stub);
  if (!threw2.empty()) return failure(c, on + "backward " + threw2);
  backward(expected[0], dy);
  for (size_t j = 0; j < made.size(); ++j) {
    if (!requires_grad(ref[j])) continue;
    const Tensor want = grad(ref[j]), have = grad(mine[j]);
    if (!want.defined()) continue;
    if (!have.defined())
      return failure(c, on + "no gradient reaches '" + in.names[j] +
                            "': its path to the output is broken (detach, a copy through "
                            "to_vector, or a NoGradGuard)");
    // Sums in another order: a gradient is held to ten times the values' tolerance (and at
    // least to float32's rounding, for the exercises whose values must be exact).
    const std::string diff =
        difference(have, want, std::max(ex.atol * 10, 1e-5), std::max(ex.rtol * 10, 1e-4));
    if (!diff.empty())
      return failure(c, on + "the gradient of '" + in.names[j] + "' differs from qkv's: " + diff);
  }
  return {};
}

// Grades f on every case of ex (see check.h for the order of the steps).
template <class F>
Outcome grade(const Exercise<F>& ex, F f, const CheckOptions& options) {
  for (size_t ci = 0; ci < ex.inputs.size(); ++ci) {
    const int64_t c = static_cast<int64_t>(ci);
    if (options.only_case >= 0 && options.only_case != c) continue;
    const Input& in = ex.inputs[ci];
    if (options.on_case) options.on_case(c, in.what);
    const std::string on = "on " + in.what;
    const Tensors expected = ex.reference(in.tensors(), in);  // first, on copies of its own
    const Tensors args = in.tensors();
    Tensors before;
    for (const Tensor& t : args) before.push_back(t.defined() ? clone(t) : t);
    const Behaviour got = behave(ex, f, in, args);
    if (got.stub) return {Outcome::not_implemented, got.error, "", {}, c};
    if (!got.error.empty()) {
      Outcome o = failure(c, on + ": " + got.error);
      o.message += diagnose(ex, f, ci, got, expected, o);
      return o;
    }
    for (size_t j = 0; j < args.size(); ++j)
      if (!unchanged(args[j], before[j]))
        return failure(c, on + ": modified its input '" + in.names[j] +
                              "': leave every input as it was and return new tensors");
    for (size_t k = 0; k < expected.size(); ++k) {
      const std::string diff =
          difference(k < got.out.size() ? got.out[k] : Tensor(), expected[k], ex.atol, ex.rtol);
      if (diff.empty()) continue;
      Outcome o = failure(c, on + named(ex, k) + ": " + diff);
      o.message += diagnose(ex, f, ci, got, expected, o);
      return o;
    }
    if (options.diagnose_passes) {
      Outcome o;
      const std::string lines = diagnose(ex, f, ci, got, expected, o);
      if (!lines.empty())
        return failure(c, on + ": a correct output was named as a known mistake:" + lines);
    }
  }
  if (ex.gradients && !options.values_only)
    for (size_t ci = 0; ci < ex.inputs.size(); ++ci) {
      const int64_t c = static_cast<int64_t>(ci);
      if (options.only_case >= 0 && options.only_case != c) continue;
      if (options.on_case) options.on_case(c, ex.inputs[ci].what + " (backward)");
      const Outcome o = gradients(ex, f, ex.inputs[ci], c);
      if (o.kind != Outcome::passed) return o;
    }
  return {};
}

// d<dy, f(x)>/dx by qkv's autograd.
Tensor autograd_grad(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                     const Tensor& dy) {
  const Tensor leaf = requires_grad_(clone(x));
  backward(f(leaf), dy);
  return grad(leaf);
}

// One tensor argument of a case: its name, shape, layout and values (scale * N(0, 1) + shift).
struct Arg {
  std::string name;
  Shape shape;
  Layout layout = Layout::contiguous;
  float scale = 1.0f, shift = 0.0f;
};

// A case whose tensors are drawn from a generator seeded `seed`, described by its arguments
// (and `note`), there to catch the mistakes named in `catches` (`only`: no other case does).
Input drawn(uint64_t seed, const std::vector<Arg>& args, const std::string& note,
            std::vector<std::string> catches, std::vector<std::string> only = {}) {
  Input in;
  for (const Arg& a : args) {
    in.names.push_back(a.name);
    in.what +=
        (in.what.empty() ? "" : ", ") + a.name + " " + shape_str(a.shape) + layout_word(a.layout);
  }
  if (!note.empty()) in.what += " (" + note + ")";
  in.tensors = [seed, args] {
    Generator g(seed);
    Tensors out;
    for (const Arg& a : args) out.push_back(make(a.shape, g, a.layout, a.scale, a.shift));
    return out;
  };
  in.catches = std::move(catches);
  in.only = std::move(only);
  return in;
}

Input with_ints(Input in, std::vector<int64_t> ints, const std::string& note) {
  in.ints = std::move(ints);
  in.what += " " + note;
  return in;
}

// The case `in` with its tensor argument j laid out as `layout` (the same values), there to
// catch, alone, the mistakes `only`.
Input laid_out(Input in, size_t j, Layout layout, const std::vector<std::string>& only) {
  const auto draw = in.tensors;
  in.tensors = [draw, j, layout] {
    Tensors t = draw();
    t[j] = relaid(t[j], layout);
    return t;
  };
  in.what += " (" + in.names[j] + " is a" + layout_word(layout) + " view)";
  in.only.insert(in.only.end(), only.begin(), only.end());
  return in;
}

Tensors one(const Tensor& t) {
  return {t};
}

// Scaled dot-product attention as qkv computes it (the attention core), optionally causal.
Tensor sdpa(const Tensor& q, const Tensor& k, const Tensor& v, bool causal = false) {
  return attention::scaled_dot_product_attention(q, k, v, {.causal = causal}).output;
}

const Layout kT = Layout::transposed, kS = Layout::sliced;

// ---- 01.1 ---------------------------------------------------------------------------------

Exercise<signature::broadcast_add> ex_broadcast_add() {
  return {.inputs = {drawn(2011, {{"a", {3, 1, 5}}, {"b", {4, 1}}}, "",
                           {"broadcast_add_aligned_left", "broadcast_add_shape_of_a",
                            "broadcast_add_flat_modulo"}),
                     drawn(2012, {{"a", {7}}, {"b", {1}}}, "", {}),
                     drawn(2013, {{"a", {1}}, {"b", {2, 33}}}, "", {"broadcast_add_shape_of_a"}),
                     drawn(2014, {{"a", {2, 3}}, {"b", {2, 3}}}, "", {}),
                     drawn(2015, {{"a", {4, 1, 1}}, {"b", {1, 7, 2}}}, "",
                           {"broadcast_add_flat_modulo"}),
                     drawn(2016, {{"a", {5, 3}, kT}, {"b", {3}}}, "a is a transposed view", {},
                           {"broadcast_add_reads_memory"}),
                     drawn(2017, {{"a", {0, 3}}, {"b", {3}}}, "an empty batch", {},
                           {"broadcast_add_max_of_sizes"}),
                     drawn(2018, {{"a", {2, 3}}, {"b", {2, 3}, Layout::expanded}},
                           "b is an expanded view", {}, {"broadcast_add_reads_b_memory"})},
          .call = [](signature::broadcast_add f, const Tensors& t,
                     const Input&) { return one(f(t[0], t[1])); },
          .reference = [](const Tensors& t, const Input&) { return one(t[0] + t[1]); },
          .mistakes = wrong::broadcast_add_mistakes()};
}

// ---- 02.1 ---------------------------------------------------------------------------------

Input to_shape(uint64_t seed, const Shape& grad_shape, const Shape& shape,
               std::vector<std::string> catches, std::vector<std::string> only = {}) {
  Input in = drawn(seed, {{"grad", grad_shape}}, "", std::move(catches), std::move(only));
  in.what += " to shape " + shape_str(shape);
  in.shape = shape;
  return in;
}

Exercise<signature::sum_to_shape> ex_sum_to_shape() {
  return {
      .inputs = {to_shape(2021, {4, 3, 5}, {3, 1},
                          {"sum_to_shape_not_reduced", "sum_to_shape_leading_only",
                           "sum_to_shape_drops_dims", "sum_to_shape_mean"}),
                 to_shape(2022, {2, 7}, {7}, {"sum_to_shape_not_reduced"}),
                 to_shape(2023, {5, 33}, {1, 33}, {"sum_to_shape_leading_only"}),
                 to_shape(2024, {3, 2, 6, 4}, {2, 1, 4}, {"sum_to_shape_drops_dims"}),
                 to_shape(2025, {6}, {6}, {}),
                 to_shape(2026, {4, 3, 5}, {1, 3, 1}, {}, {"sum_to_shape_first_stretched_only"}),
                 to_shape(2027, {2, 3, 4}, {4}, {}, {"sum_to_shape_one_leading_dim"}),
                 laid_out(to_shape(2028, {5, 3}, {1, 3}, {}), 0, kT, {"sum_to_shape_reads_memory"}),
                 to_shape(2029, {0, 3}, {3}, {}, {"sum_to_shape_sum_from_index_0"})},
      .call = [](signature::sum_to_shape f, const Tensors& t,
                 const Input& in) { return one(f(t[0], in.shape)); },
      .reference =
          [](const Tensors& t, const Input& in) {
            // qkv's own reduction: the engine's, for x of `shape` broadcast into grad's.
            const Tensor x = requires_grad_(zeros(in.shape));
            backward(x + zeros(t[0].shape()), t[0]);
            return one(grad(x));
          },
      .mistakes = wrong::sum_to_shape_mistakes()};
}

// ---- 02.2 ---------------------------------------------------------------------------------

Input mkn(uint64_t seed, int64_t M, int64_t K, int64_t N, std::vector<std::string> catches,
          Layout la = Layout::contiguous, Layout lb = Layout::contiguous,
          std::vector<std::string> only = {}) {
  return drawn(seed, {{"a", {M, K}, la}, {"b", {K, N}, lb}, {"dc", {M, N}}}, "", std::move(catches),
               std::move(only));
}

Exercise<signature::matmul_backward> ex_matmul_backward() {
  return {.inputs = {mkn(2031, 3, 7, 5,
                         {"matmul_backward_no_transpose", "matmul_backward_swapped",
                          "matmul_backward_db_transposed", "matmul_backward_mean_over_rows"}),
                     mkn(2032, 1, 33, 2, {"matmul_backward_swapped"}),
                     mkn(2033, 6, 4, 9, {"matmul_backward_db_transposed"}),
                     mkn(2034, 5, 3, 4, {}, kT, kS, {"matmul_backward_reads_memory"}),
                     mkn(2035, 0, 4, 3, {}, Layout::contiguous, Layout::contiguous,
                         {"matmul_backward_sum_from_row_0"})},
          .call =
              [](signature::matmul_backward f, const Tensors& t, const Input&) {
                const MatmulGrads g = f(t[0], t[1], t[2]);
                return Tensors{g.da, g.db};
              },
          .reference =
              [](const Tensors& t, const Input&) {
                const Tensor a = requires_grad_(clone(t[0])), b = requires_grad_(clone(t[1]));
                backward(matmul(a, b), t[2]);
                return Tensors{grad(a), grad(b)};
              },
          .mistakes = wrong::matmul_backward_mistakes(),
          .outputs = {"dA", "dB"}};
}

// ---- 07.1 ---------------------------------------------------------------------------------

Exercise<signature::softmax_rows> ex_softmax_rows() {
  const std::vector<std::string> overflow = {"softmax_rows_no_max"};
  return {
      .inputs = {drawn(2071, {{"x", {1}, {}, 3}}, "", {}), drawn(2072, {{"x", {7}, {}, 3}}, "", {}),
                 drawn(2073, {{"x", {3, 33}, {}, 3}}, "",
                       {"softmax_rows_wrong_axis", "softmax_rows_global_sum"}),
                 drawn(2074, {{"x", {2, 5, 7}, {}, 3}}, "", {"softmax_rows_global_sum"}),
                 drawn(2075, {{"x", {7}, {}, 300}}, "scores in the hundreds", overflow),
                 drawn(2076, {{"x", {3, 33}, {}, 300}}, "scores in the hundreds",
                       {"softmax_rows_no_max", "softmax_rows_global_max"}),
                 drawn(2077, {{"x", {2, 5, 7}, {}, 300}}, "scores in the hundreds", overflow),
                 drawn(2078, {{"x", {4, 6}, kT, 3}}, "x is a transposed view", {},
                       {"softmax_rows_reads_memory"}),
                 drawn(2079, {{"x", {0, 5}}}, "an empty batch", {"softmax_rows_global_max"},
                       {"softmax_rows_per_row"})},
      .call = [](signature::softmax_rows f, const Tensors& t,
                 const Input&) { return one(f(t[0])); },
      .reference = [](const Tensors& t, const Input&) { return one(softmax(t[0], -1)); },
      .mistakes = wrong::softmax_rows_mistakes(),
      .gradients = true};
}

// ---- 08.1 ---------------------------------------------------------------------------------

Input qkv_case(uint64_t seed, const Shape& q, const Shape& k, const Shape& v,
               const std::string& note, std::vector<std::string> catches,
               std::vector<std::string> only = {}, Layout lk = Layout::contiguous,
               Layout lv = Layout::contiguous) {
  return drawn(seed, {{"q", q, {}, 2}, {"k", k, lk, 2}, {"v", v, lv}}, note, std::move(catches),
               std::move(only));
}

Exercise<signature::attention> ex_attention() {
  return {.inputs = {qkv_case(2081, {5, 4}, {7, 4}, {7, 3}, "",
                              {"attention_no_scale", "attention_softmax_over_queries",
                               "attention_scale_by_d", "attention_scale_by_value_width"}),
                     qkv_case(2082, {2, 1, 8}, {2, 33, 8}, {2, 33, 5}, "one query",
                              {"attention_softmax_over_queries"}),
                     qkv_case(2083, {2, 3, 6, 4}, {2, 3, 6, 4}, {2, 3, 6, 4}, "", {}),
                     qkv_case(2084, {6, 4}, {2, 9, 4}, {2, 9, 2}, "q broadcast over the batch", {}),
                     qkv_case(2085, {5, 4}, {7, 4}, {7, 6}, "k transposed, v sliced", {},
                              {"attention_reads_memory"}, kT, kS),
                     qkv_case(2086, {0, 5, 4}, {0, 7, 4}, {0, 7, 3}, "an empty batch",
                              {"attention_global_max"}, {"attention_per_batch"}),
                     drawn(2087, {{"q", {3, 4}, {}, 15}, {"k", {6, 4}, {}, 15}, {"v", {6, 3}}},
                           "scores in the hundreds", {}, {"attention_softmax_without_max"})},
          .call = [](signature::attention f, const Tensors& t,
                     const Input&) { return one(f(t[0], t[1], t[2])); },
          .reference = [](const Tensors& t, const Input&) { return one(sdpa(t[0], t[1], t[2])); },
          .mistakes = wrong::attention_mistakes(),
          .gradients = true};
}

// ---- 10.1 and 10.2 ------------------------------------------------------------------------

Input heads_case(uint64_t seed, const Shape& x, int64_t heads, Layout layout,
                 std::vector<std::string> catches, std::vector<std::string> only = {}) {
  const std::string note = layout == Layout::sliced ? "x is a sliced view" : "";
  return with_ints(drawn(seed, {{"x", x, layout}}, note, std::move(catches), std::move(only)),
                   {heads}, "into " + std::to_string(heads) + " heads");
}

Exercise<signature::split_heads> ex_split_heads() {
  const Layout c = Layout::contiguous;
  return {
      .inputs = {heads_case(2101, {2, 7, 12}, 3, c,
                            {"split_heads_no_transpose", "split_heads_interleaved",
                             "split_heads_transposes_batch", "split_heads_d_and_heads_swapped"}),
                 heads_case(2102, {1, 1, 5}, 1, c, {}),
                 heads_case(2103, {3, 5, 8}, 4, c, {"split_heads_transposes_batch"}),
                 heads_case(2104, {2, 3, 8}, 2, kS, {}, {"split_heads_reads_memory"}),
                 heads_case(2105, {0, 4, 6}, 2, c, {}, {"split_heads_per_batch"})},
      .call = [](signature::split_heads f, const Tensors& t,
                 const Input& in) { return one(f(t[0], in.ints[0])); },
      .reference = [](const Tensors& t,
                      const Input& in) { return one(attention::split_heads(t[0], in.ints[0])); },
      .mistakes = wrong::split_heads_mistakes(),
      .atol = 0,
      .rtol = 0,
      .gradients = true};
}

Exercise<signature::merge_heads> ex_merge_heads() {
  return {
      .inputs = {drawn(2111, {{"x", {2, 3, 7, 4}}}, "",
                       {"merge_heads_no_transpose", "merge_heads_interleaved",
                        "merge_heads_wrong_transpose", "merge_heads_sums_heads"}),
                 drawn(2112, {{"x", {1, 1, 1, 5}}}, "", {}),
                 drawn(2113, {{"x", {3, 4, 5, 2}}}, "", {"merge_heads_interleaved"}),
                 drawn(2114, {{"x", {2, 3, 5, 4}, kT}}, "x is a transposed view", {},
                       {"merge_heads_reads_memory"}),
                 drawn(2115, {{"x", {0, 2, 3, 4}}}, "an empty batch", {},
                       {"merge_heads_per_batch"})},
      .call = [](signature::merge_heads f, const Tensors& t, const Input&) { return one(f(t[0])); },
      .reference = [](const Tensors& t, const Input&) { return one(attention::merge_heads(t[0])); },
      .mistakes = wrong::merge_heads_mistakes(),
      .atol = 0,
      .rtol = 0,
      .gradients = true};
}

// ---- 11.1 ---------------------------------------------------------------------------------

Input cross_case(uint64_t seed, int64_t B, int64_t T_q, int64_t T_k, int64_t C, int64_t D,
                 int64_t D_v, std::vector<std::string> catches,
                 std::vector<std::string> only = {}) {
  return drawn(seed,
               {{"x", {B, T_q, C}},
                {"memory", {B, T_k, C}},
                {"w_q", {C, D}, {}, 0.5f},
                {"w_k", {C, D}, {}, 0.5f},
                {"w_v", {C, D_v}}},
               D_v == D ? "" : "values " + std::to_string(D_v) + " wide, keys " + std::to_string(D),
               std::move(catches), std::move(only));
}

Exercise<signature::cross_attention> ex_cross_attention() {
  return {
      .inputs = {cross_case(2121, 2, 3, 7, 8, 4, 4,
                            {"cross_attention_values_from_x", "cross_attention_keys_from_x",
                             "cross_attention_no_scale", "cross_attention_queries_from_memory",
                             "cross_attention_keys_and_values_from_x"}),
                 cross_case(2122, 1, 1, 33, 6, 5, 5, {"cross_attention_no_scale"}),
                 cross_case(2123, 2, 5, 2, 4, 4, 4, {"cross_attention_keys_from_x"}),
                 cross_case(2124, 2, 3, 5, 8, 4, 6, {}, {"cross_attention_scale_by_value_width"}),
                 laid_out(cross_case(2125, 2, 3, 5, 8, 4, 4, {}), 0, kT,
                          {"cross_attention_reads_memory"}),
                 cross_case(2126, 0, 3, 5, 8, 4, 4, {}, {"cross_attention_per_batch"}),
                 drawn(2127,
                       {{"x", {2, 3, 8}},
                        {"memory", {2, 5, 8}},
                        {"w_q", {8, 4}, {}, 6},
                        {"w_k", {8, 4}, {}, 6},
                        {"w_v", {8, 4}}},
                       "scores in the hundreds", {}, {"cross_attention_softmax_without_max"})},
      .call = [](signature::cross_attention f, const Tensors& t,
                 const Input&) { return one(f(t[0], t[1], t[2], t[3], t[4])); },
      .reference =
          [](const Tensors& t, const Input&) {
            return one(sdpa(matmul(t[0], t[2]), matmul(t[1], t[3]), matmul(t[1], t[4])));
          },
      .mistakes = wrong::cross_attention_mistakes(),
      .gradients = true};
}

// ---- 12.1 and 12.2 ------------------------------------------------------------------------

// 12.1 and 12.2 share their cases but one: scores in the hundreds (`hundreds`, the mistakes that
// case is there for; empty: no such case). 12.2's way, the softmax over every key and then the
// lower triangle renormalised, is the same function as the -inf mask only while no hidden score
// is so far above the visible ones that their weights underflow to 0: at scores in the hundreds
// it gives 0 / 0, so 12.2 is not held to them.
template <class F>
Exercise<F> ex_causal(uint64_t seed, const Catalogue<F>& mistakes, const std::string& prefix,
                      std::vector<std::string> one_position, std::vector<std::string> seven,
                      const std::vector<std::string>& hundreds) {
  auto n = [&](const char* what) { return prefix + what; };
  const Shape s1{1, 4}, s2{7, 4}, s3{2, 3, 33, 8}, s4{2, 5, 6};
  seven.insert(seven.end(), {n("_off_by_one"), n("_no_scale")});
  std::vector<Input> inputs = {
      qkv_case(seed + 1, s1, s1, s1, "one position", one_position),
      qkv_case(seed + 2, s2, s2, s2, "", seven),
      qkv_case(seed + 3, s3, s3, s3, "", {n("_off_by_one")}),
      qkv_case(seed + 4, s4, s4, s4, "", {}),
      qkv_case(seed + 5, {2, 6, 4}, {2, 6, 4}, {2, 6, 7}, "values 7 wide, keys 4", {},
               {n("_scale_by_value_width")}),
      laid_out(qkv_case(seed + 6, {2, 5, 4}, {2, 5, 4}, {2, 5, 4}, "", {}), 2, kS,
               {n("_reads_memory")}),
      qkv_case(seed + 8, {0, 5, 4}, {0, 5, 4}, {0, 5, 4}, "an empty batch", {}, {n("_per_batch")})};
  if (!hundreds.empty())
    inputs.push_back(drawn(seed + 7,
                           {{"q", {2, 6, 4}, {}, 15}, {"k", {2, 6, 4}, {}, 15}, {"v", {2, 6, 4}}},
                           "scores in the hundreds", {}, hundreds));
  return {
      .inputs = inputs,
      .call = [](F f, const Tensors& t, const Input&) { return one(f(t[0], t[1], t[2])); },
      .reference = [](const Tensors& t, const Input&) { return one(sdpa(t[0], t[1], t[2], true)); },
      .mistakes = mistakes,
      .gradients = true};
}

// ---- 13.1 ---------------------------------------------------------------------------------

// y = softmax(x) of a drawn x (so y is a real softmax output), and dy.
Input softmax_grad_case(uint64_t seed, const Shape& s, Layout ldy, const std::string& note,
                        std::vector<std::string> catches, std::vector<std::string> only = {}) {
  Input in = drawn(seed, {{"y", s}, {"dy", s, ldy}}, note, std::move(catches), std::move(only));
  const auto draw = in.tensors;
  in.tensors = [draw] {
    Tensors t = draw();
    t[0] = softmax(t[0] * 2.0f, -1);
    return t;
  };
  return in;
}

Exercise<signature::softmax_backward> ex_softmax_backward() {
  const Layout c = Layout::contiguous;
  return {
      .inputs = {softmax_grad_case(2131, {1}, c, "", {}),
                 softmax_grad_case(2132, {7}, c, "",
                                   {"softmax_backward_no_sum", "softmax_backward_missing_y",
                                    "softmax_backward_minus_sum_dy"}),
                 softmax_grad_case(2133, {3, 33}, c, "",
                                   {"softmax_backward_wrong_axis", "softmax_backward_global_sum"}),
                 softmax_grad_case(2134, {2, 4, 5}, c, "", {"softmax_backward_global_sum"}),
                 softmax_grad_case(2135, {5, 6}, kT, "dy is a transposed view", {},
                                   {"softmax_backward_reads_memory"}),
                 softmax_grad_case(2136, {0, 5}, c, "an empty batch", {},
                                   {"softmax_backward_per_row"})},
      .call = [](signature::softmax_backward f, const Tensors& t,
                 const Input&) { return one(f(t[0], t[1])); },
      .reference =
          [](const Tensors& t, const Input&) {
            // The engine's softmax backward at x = log(y) (softmax(log y) = y).
            return one(
                autograd_grad([](const Tensor& x) { return softmax(x, -1); }, log(t[0]), t[1]));
          },
      .mistakes = wrong::softmax_backward_mistakes()};
}

// ---- 16.1 ---------------------------------------------------------------------------------

const AdamWHyper kHyper{.lr = 0.01, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1};

AdamWHyper hyper_of(const Input& in) {
  AdamWHyper h = kHyper;
  h.lr = in.reals[0];
  h.weight_decay = in.reals[1];
  return h;
}

// param (7, 5), its gradient of order `scale`, and the moments m and v of the steps before
// `step` (zeros at step 1; v >= 0, as only squares reach it).
Input adamw_case(uint64_t seed, int64_t step, float scale, const std::string& note,
                 std::vector<std::string> catches, std::vector<std::string> only = {},
                 double lr = kHyper.lr, double weight_decay = kHyper.weight_decay) {
  Input in;
  in.names = {"param", "grad", "m", "v"};
  in.ints = {step};
  in.reals = {lr, weight_decay};
  in.what = "param (7, 5), step " + std::to_string(step) + ", gradients of order " + number(scale) +
            (note.empty() ? "" : " (" + note + ")");
  in.tensors = [seed, step, scale] {
    Generator g(seed);
    const Tensor param = randn({7, 5}, &g), grad = randn({7, 5}, &g) * scale;
    const Tensor m = step == 1 ? zeros({7, 5}) : randn({7, 5}, &g) * scale * 0.5f;
    const Tensor r = randn({7, 5}, &g) * scale;
    const Tensor v = step == 1 ? zeros({7, 5}) : r * r;
    return Tensors{param, grad, m, v};
  };
  in.catches = std::move(catches);
  in.only = std::move(only);
  return in;
}

Exercise<signature::adamw_step> ex_adamw_step() {
  return {.inputs = {adamw_case(2161, 1, 1, "the first step",
                                {"adamw_step_decay_in_gradient", "adamw_step_no_bias_correction",
                                 "adamw_step_bias_step_off_by_one", "adamw_step_writes_in_place"}),
                     adamw_case(2162, 2, 1, "lr 0.1, weight decay 0.5", {},
                                {"adamw_step_decay_after_update"}, 0.1, 0.5),
                     adamw_case(2163, 3, 100, "", {}),
                     adamw_case(2164, 5, 1e-4f, "eps as large as sqrt(v)",
                                {"adamw_step_eps_inside_sqrt"}),
                     laid_out(adamw_case(2165, 2, 1, "", {}), 1, kT, {"adamw_step_reads_memory"})},
          .call =
              [](signature::adamw_step f, const Tensors& t, const Input& in) {
                const AdamWState s = f(t[0], t[1], t[2], t[3], in.ints[0], hyper_of(in));
                return Tensors{s.param, s.m, s.v};
              },
          .reference =
              [](const Tensors& t, const Input& in) {
                // qkv's own AdamW, its state set to m, v and step - 1 steps taken.
                const Tensor p = requires_grad_(clone(t[0]));
                const AdamWHyper h = hyper_of(in);
                nn::AdamW opt({p}, h.lr, h.beta1, h.beta2, h.eps, h.weight_decay);
                opt.load_state({{"exp_avg.0", clone(t[2])}, {"exp_avg_sq.0", clone(t[3])}},
                               in.ints[0] - 1);
                backward(sum(p * t[1]));
                opt.step();
                const auto state = opt.state();
                Tensor m, v;
                for (const auto& [name, value] : state) (name == "exp_avg.0" ? m : v) = value;
                return Tensors{clone(detach(p)), clone(m), clone(v)};
              },
          .mistakes = wrong::adamw_step_mistakes(),
          .outputs = {"param", "m", "v"},
          .atol = 1e-5,
          .rtol = 1e-4};
}

// ---- 18.1 ---------------------------------------------------------------------------------

Input ln_case(uint64_t seed, int64_t N, int64_t C, float scale, float shift,
              const std::string& note, std::vector<std::string> catches,
              std::vector<std::string> only = {}) {
  return drawn(seed, {{"x", {N, C}, {}, scale, shift}, {"w", {C}}, {"dy", {N, C}}}, note,
               std::move(catches), std::move(only));
}

Exercise<signature::layer_norm_backward> ex_layer_norm_backward() {
  return {
      .inputs = {ln_case(2181, 1, 7, 2, 1, "one row",
                         {"layer_norm_backward_no_mean_terms", "layer_norm_backward_unbiased_var"}),
                 ln_case(2182, 5, 33, 2, 1, "",
                         {"layer_norm_backward_dw_not_reduced", "layer_norm_backward_forgets_w"}),
                 ln_case(2183, 7, 4, 2, 1, "", {"layer_norm_backward_unbiased_var"}),
                 ln_case(2184, 4, 16, 1e-3f, 0, "rows whose variance is below eps", {},
                         {"layer_norm_backward_eps_outside_sqrt"}),
                 ln_case(2185, 4, 16, 1, 1000, "rows whose mean is 1000 times their spread", {},
                         {"layer_norm_backward_var_from_moments"}),
                 laid_out(ln_case(2186, 6, 5, 2, 1, "", {}), 0, kT,
                          {"layer_norm_backward_reads_memory"}),
                 ln_case(2187, 0, 5, 2, 1, "an empty batch", {},
                         {"layer_norm_backward_sum_from_row_0"})},
      .call =
          [](signature::layer_norm_backward f, const Tensors& t, const Input&) {
            const LayerNormGrads g = f(t[0], t[1], t[2]);
            return Tensors{g.dx, g.dw, g.db};
          },
      .reference =
          [](const Tensors& t, const Input&) {
            // qkv's own: the fused layer_norm's backward, through autograd.
            const Tensor x = requires_grad_(clone(t[0])), w = requires_grad_(clone(t[1])),
                         b = requires_grad_(zeros({t[1].size(0)}));
            backward(layer_norm(x, w, b), t[2]);
            return Tensors{grad(x), grad(w), grad(b)};
          },
      .mistakes = wrong::layer_norm_backward_mistakes(),
      .outputs = {"dx", "dw", "db"}};
}

// ---- 19.1 and 19.2 ------------------------------------------------------------------------

// The cache (undefined for none: the first call) and the fresh positions.
Input append_case(uint64_t seed, int64_t cached, int64_t fresh, std::vector<std::string> catches,
                  std::vector<std::string> only = {}, int64_t B = 2) {
  Input in;
  in.names = {"cache", "fresh"};
  const std::string b = shape_str({B, 3}).substr(0, shape_str({B, 3}).size() - 1) + ", ";
  in.what = "fresh " + b + std::to_string(fresh) + ", 4) after " +
            (cached < 0 ? "an empty cache (the first call)"
                        : "a cache " + b + std::to_string(cached) + ", 4)") +
            (B == 0 ? " (an empty batch)" : "");
  in.tensors = [seed, cached, fresh, B] {
    Generator g(seed);
    const Tensor c = cached < 0 ? Tensor() : randn({B, 3, cached, 4}, &g);
    return Tensors{c, randn({B, 3, fresh, 4}, &g)};
  };
  in.catches = std::move(catches);
  in.only = std::move(only);
  return in;
}

Exercise<signature::kv_append> ex_kv_append() {
  return {.inputs = {append_case(2191, -1, 3, {}, {"kv_append_first_call_undefined"}),
                     append_case(2192, 3, 1,
                                 {"kv_append_wrong_dim", "kv_append_prepends", "kv_append_forgets",
                                  "kv_append_last_dim"}),
                     append_case(2193, 4, 5, {"kv_append_prepends"}),
                     laid_out(append_case(2194, 3, 2, {}), 1, kT, {"kv_append_reads_memory"}),
                     append_case(2190, 3, 1, {}, {"kv_append_per_batch"}, 0)},
          .call = [](signature::kv_append f, const Tensors& t,
                     const Input&) { return one(f(t[0], t[1])); },
          .reference =
              [](const Tensors& t, const Input&) {
                attention::KVCache cache;  // qkv's own
                if (t[0].defined()) cache.append(t[0], t[0]);
                cache.append(t[1], t[1]);
                return one(cache.k);
              },
          .mistakes = wrong::kv_append_mistakes(),
          .atol = 0,
          .rtol = 0};
}

Input decode_case(uint64_t seed, int64_t B, int64_t H, int64_t T, int64_t D, int64_t D_v,
                  std::vector<std::string> catches, std::vector<std::string> only = {}) {
  return drawn(
      seed,
      {{"q", {B, H, 1, D}, {}, 2}, {"k_cache", {B, H, T, D}, {}, 2}, {"v_cache", {B, H, T, D_v}}},
      D_v == D ? "" : "values " + std::to_string(D_v) + " wide, keys " + std::to_string(D),
      std::move(catches), std::move(only));
}

Exercise<signature::decode_step> ex_decode_step() {
  return {
      .inputs = {decode_case(2196, 1, 2, 1, 4, 4, {}),
                 decode_case(2197, 2, 3, 7, 8, 8,
                             {"decode_step_left_aligned_mask", "decode_step_no_scale",
                              "decode_step_last_key_only", "decode_step_softmax_over_queries"}),
                 decode_case(2198, 1, 1, 33, 5, 5, {"decode_step_left_aligned_mask"}),
                 decode_case(2199, 1, 2, 6, 4, 7, {}, {"decode_step_scale_by_value_width"}),
                 laid_out(decode_case(2200, 1, 2, 5, 4, 4, {}), 1, kT,
                          {"decode_step_reads_memory"}),
                 decode_case(2201, 0, 2, 5, 4, 4, {}, {"decode_step_per_batch"}),
                 drawn(2202,
                       {{"q", {1, 2, 1, 4}, {}, 15},
                        {"k_cache", {1, 2, 6, 4}, {}, 15},
                        {"v_cache", {1, 2, 6, 4}}},
                       "scores in the hundreds", {}, {"decode_step_softmax_without_max"})},
      .call = [](signature::decode_step f, const Tensors& t,
                 const Input&) { return one(f(t[0], t[1], t[2])); },
      .reference = [](const Tensors& t, const Input&) { return one(sdpa(t[0], t[1], t[2], true)); },
      .mistakes = wrong::decode_step_mistakes(),
      .gradients = true};
}

// ---- 21.1 ---------------------------------------------------------------------------------

// Scores rising along the keys (the max moves in every tile: a forgotten rescale shows).
Input online_case(uint64_t seed, int64_t T, int64_t D, int64_t tile, float spread,
                  std::vector<std::string> catches, std::vector<std::string> only = {}) {
  Input in;
  in.names = {"scores", "v"};
  in.ints = {tile};
  in.what = "scores (" + std::to_string(T) + ",), tile " + std::to_string(tile) +
            (T % tile ? " (the last tile partial)" : "") +
            (spread > 100 ? " (scores in the hundreds)" : "");
  in.tensors = [seed, T, D, spread] {
    Generator g(seed);
    const Tensor scores =
        randn({T}, &g) * spread + to(arange(int64_t{0}, T), Dtype::float32) * 3.0f;
    return Tensors{scores, randn({T, D}, &g)};
  };
  in.catches = std::move(catches);
  in.only = std::move(only);
  return in;
}

Exercise<signature::online_softmax_attention> ex_online_softmax() {
  return {.inputs = {online_case(2211, 1, 3, 4, 2, {"online_softmax_drops_partial_tile"}),
                     online_case(2212, 7, 5, 2, 2,
                                 {"online_softmax_no_rescale", "online_softmax_rescales_l_only",
                                  "online_softmax_drops_partial_tile"}),
                     online_case(2213, 33, 4, 8, 2, {"online_softmax_drops_partial_tile"}),
                     online_case(2214, 1, 3, 4, 200, {}),
                     online_case(2215, 7, 5, 2, 200,
                                 {"online_softmax_no_max", "online_softmax_tile_max_only"}),
                     online_case(2216, 33, 4, 8, 200, {"online_softmax_no_max"}),
                     laid_out(online_case(2217, 8, 5, 4, 2, {}), 1, kT,
                              {"online_softmax_reads_memory"})},
          .call = [](signature::online_softmax_attention f, const Tensors& t,
                     const Input& in) { return one(f(t[0], t[1], in.ints[0])); },
          .reference = [](const Tensors& t,
                          const Input&) { return one(matmul(softmax(t[0], 0), t[1])); },
          .mistakes = wrong::online_softmax_mistakes()};
}

// ---- 22.1 ---------------------------------------------------------------------------------

Exercise<signature::rope_rotate> ex_rope_rotate() {
  auto rc = [](uint64_t seed, const Shape& s, int64_t offset, std::vector<std::string> catches) {
    return with_ints(drawn(seed, {{"x", s}}, "", std::move(catches)), {offset},
                     "at offset " + std::to_string(offset));
  };
  return {.inputs = {rc(2221, {2, 1, 2}, 0, {}),
                     rc(2222, {2, 7, 8}, 5,
                        {"rope_rotate_ignores_offset", "rope_rotate_neighbours",
                         "rope_rotate_backwards", "rope_rotate_theta_exponent",
                         "rope_rotate_positions_from_one"}),
                     rc(2223, {2, 33, 6}, 100, {"rope_rotate_ignores_offset"}),
                     laid_out(rc(2224, {2, 5, 8}, 3, {}), 0, kT, {"rope_rotate_reads_memory"})},
          .call = [](signature::rope_rotate f, const Tensors& t,
                     const Input& in) { return one(f(t[0], in.ints[0])); },
          .reference = [](const Tensors& t,
                          const Input& in) { return one(attention::rope(t[0], in.ints[0])); },
          .mistakes = wrong::rope_rotate_mistakes(),
          .gradients = true};
}

// ---- 24.1 ---------------------------------------------------------------------------------

Exercise<signature::gemm_packed_kernel> ex_gemm_packed_kernel() {
  auto gc = [](uint64_t seed, int64_t M, int64_t K, int64_t N, std::vector<std::string> catches,
               std::vector<std::string> only = {}) {
    Input in = drawn(seed, {{"A", {M, K}}, {"B", {K, N}}}, "", std::move(catches), std::move(only));
    in.what += K == 0 ? " (K = 0: C is all zeros)" : "";
    return in;
  };
  return {
      .inputs = {gc(2241, 1, 1, 1, {"gemm_packed_kernel_drops_edges"}),
                 gc(2242, 7, 33, 5,
                    {"gemm_packed_kernel_accumulates", "gemm_packed_kernel_drops_edges",
                     "gemm_packed_kernel_reads_b_transposed", "gemm_packed_kernel_k_off_by_one"}),
                 gc(2243, 33, 7, 129, {}), gc(2244, 129, 64, 33, {}),
                 gc(2245, 3, 0, 5, {}, {"gemm_packed_kernel_stores_in_k_loop"})},
      .call =
          [](signature::gemm_packed_kernel f, const Tensors& t, const Input&) {
            const int64_t M = t[0].size(0), K = t[0].size(1), N = t[1].size(1);
            // Vectors of exactly their size (a read past an edge is AddressSanitizer's),
            // C holding other numbers: overwrite them. A written input is copied back, so
            // that the side-effect check sees it.
            std::vector<float> a = t[0].to_vector<float>(), b = t[1].to_vector<float>();
            std::vector<float> c(static_cast<size_t>(M * N), 7.0f);
            f(M, N, K, a.data(), b.data(), c.data());
            if (a != t[0].to_vector<float>()) copy_(t[0], from_vector(a, t[0].shape()));
            if (b != t[1].to_vector<float>()) copy_(t[1], from_vector(b, t[1].shape()));
            return one(from_vector(c, {M, N}));
          },
      .reference = [](const Tensors& t, const Input&) { return one(matmul(t[0], t[1])); },
      .mistakes = wrong::gemm_packed_kernel_mistakes()};
}

// ---- 05.1 ---------------------------------------------------------------------------------

// logits (N, V) of the given scale and layout, and targets (N,) drawn from 0 .. V - 1.
Input logits_case(uint64_t seed, int64_t N, int64_t V, float scale, Layout layout,
                  const std::string& note, std::vector<std::string> catches,
                  std::vector<std::string> only = {}) {
  Input in =
      drawn(seed, {{"logits", {N, V}, layout, scale}}, note, std::move(catches), std::move(only));
  in.names.push_back("targets");
  in.what = "logits " + shape_str({N, V}) + layout_word(layout) + ", targets (" +
            std::to_string(N) + ",)" + (note.empty() ? "" : " (" + note + ")");
  const auto draw = in.tensors;
  in.tensors = [draw, seed, N, V] {
    Tensors t = draw();
    Generator g(seed + 1);
    t.push_back(randint(0, V, {N}, &g));
    return t;
  };
  return in;
}

Exercise<signature::cross_entropy_backward> ex_cross_entropy_backward() {
  const Layout c = Layout::contiguous;
  return {
      .inputs = {logits_case(
                     2051, 4, 7, 2, c, "",
                     {"cross_entropy_backward_no_mean",
                      "cross_entropy_backward_one_hot_minus_softmax",
                      "cross_entropy_backward_divides_by_v", "cross_entropy_backward_target_only"}),
                 logits_case(2052, 1, 5, 2, c, "one row",
                             {"cross_entropy_backward_one_hot_minus_softmax"}),
                 logits_case(2053, 3, 33, 300, c, "logits in the hundreds", {},
                             {"cross_entropy_backward_no_max"}),
                 logits_case(2054, 5, 6, 2, kT, "logits is a transposed view", {},
                             {"cross_entropy_backward_reads_memory"})},
      .call = [](signature::cross_entropy_backward f, const Tensors& t,
                 const Input&) { return one(f(t[0], t[1])); },
      .reference =
          [](const Tensors& t, const Input&) {
            return one(autograd_grad(
                [&](const Tensor& logits) { return cross_entropy(logits, t[1]); }, t[0], ones({})));
          },
      .mistakes = wrong::cross_entropy_backward_mistakes()};
}

// ---- 15.1 ---------------------------------------------------------------------------------

// x (B, T, C), the block's LayerNorm and MLP weights, then the attention sublayer's (q, k, v, o
// as Linears of C -> C): the tensors of a 15.1 case, in that order.
Input block_case(uint64_t seed, int64_t B, int64_t T, int64_t C, int64_t heads,
                 std::vector<std::string> catches, std::vector<std::string> only = {}) {
  const Shape c{C}, cc{C, C};
  std::vector<Arg> args = {{"x", {B, T, C}},
                           {"ln1_w", c, {}, 0.2f, 1},
                           {"ln1_b", c, {}, 0.2f},
                           {"ln2_w", c, {}, 0.2f, 1},
                           {"ln2_b", c, {}, 0.2f},
                           {"fc_w", {4 * C, C}, {}, 0.3f},
                           {"fc_b", {4 * C}, {}, 0.1f},
                           {"proj_w", {C, 4 * C}, {}, 0.2f},
                           {"proj_b", c, {}, 0.1f}};
  for (const char* name : {"q", "k", "v", "o"}) {
    args.push_back({std::string(name) + "_w", cc, {}, 0.3f});
    args.push_back({std::string(name) + "_b", c, {}, 0.1f});
  }
  Input in = drawn(seed, args, "", std::move(catches), std::move(only));
  in.what = "x " + shape_str({B, T, C}) + ", " + std::to_string(heads) + " heads" +
            (B == 0   ? " (an empty batch)"
             : T == 1 ? " (one position)"
                      : "");
  in.ints = {heads};
  return in;
}

// The attention sublayer given to 15.1: causal multi-head attention over the case's q, k, v and
// o weights (attention::Block's attn, written out so that gradients reach the weights).
Sublayer block_attention(const Tensors& t, int64_t heads) {
  auto linear = [](const Tensor& z, const Tensor& w, const Tensor& b) {
    return matmul(z, transpose(w, 0, 1)) + b;
  };
  return [t, heads, linear](const Tensor& z) {
    const Tensor q = attention::split_heads(linear(z, t[9], t[10]), heads),
                 k = attention::split_heads(linear(z, t[11], t[12]), heads),
                 v = attention::split_heads(linear(z, t[13], t[14]), heads);
    return linear(attention::merge_heads(sdpa(q, k, v, true)), t[15], t[16]);
  };
}

Exercise<signature::block_forward> ex_block_forward() {
  return {
      .inputs = {block_case(2151, 2, 5, 8, 2,
                            {"block_forward_post_layer_norm", "block_forward_no_mlp_residual",
                             "block_forward_residual_of_normalised", "block_forward_ln1_for_both",
                             "block_forward_relu", "block_forward_parallel",
                             "block_forward_residuals_of_normalised", "block_forward_tanh_gelu"}),
                 block_case(2152, 1, 1, 8, 2, {"block_forward_no_mlp_residual"}),
                 block_case(2153, 2, 7, 12, 3, {"block_forward_parallel"}),
                 block_case(2154, 0, 4, 8, 2, {}, {"block_forward_per_batch"}),
                 laid_out(block_case(2155, 2, 4, 8, 2, {}), 0, kT, {"block_forward_reads_memory"})},
      .call =
          [](signature::block_forward f, const Tensors& t, const Input& in) {
            const BlockWeights w{t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8]};
            return one(f(t[0], w, block_attention(t, in.ints[0])));
          },
      .reference =
          [](const Tensors& t, const Input& in) {
            // qkv's own layer_norm, gelu and attention, in the order of attention::Block.
            const Tensor h = t[0] + block_attention(t, in.ints[0])(layer_norm(t[0], t[1], t[2]));
            const Tensor z = layer_norm(h, t[3], t[4]);
            const Tensor hidden = gelu(matmul(z, transpose(t[5], 0, 1)) + t[6]);
            return one(h + (matmul(hidden, transpose(t[7], 0, 1)) + t[8]));
          },
      .mistakes = wrong::block_forward_mistakes(),
      .gradients = true};
}

// ---- 18.2 ---------------------------------------------------------------------------------

Exercise<signature::gelu_backward> ex_gelu_backward() {
  auto gc = [](uint64_t seed, const Shape& s, float scale, Layout ldy, const std::string& note,
               std::vector<std::string> catches, std::vector<std::string> only = {}) {
    return drawn(seed, {{"x", s, {}, scale}, {"dy", s, ldy}}, note, std::move(catches),
                 std::move(only));
  };
  const Layout c = Layout::contiguous;
  return {.inputs = {gc(2181, {7}, 2, c, "",
                        {"gelu_backward_one_term", "gelu_backward_no_cubic_slope",
                         "gelu_backward_forgets_dy"}),
                     gc(2182, {3, 33}, 3, c, "",
                        {"gelu_backward_exact_form", "gelu_backward_cubic_slope_without_3"}),
                     gc(2183, {4, 6}, 20, c, "x far into both tails", {}),
                     gc(2184, {5, 6}, 2, kT, "dy is a transposed view", {},
                        {"gelu_backward_reads_memory"}),
                     gc(2185, {0, 3}, 2, c, "an empty batch", {}, {"gelu_backward_per_row"})},
          .call = [](signature::gelu_backward f, const Tensors& t,
                     const Input&) { return one(f(t[0], t[1])); },
          .reference =
              [](const Tensors& t, const Input&) {
                return one(autograd_grad(
                    [](const Tensor& x) { return gelu(x, GeluApproximation::tanh); }, t[0], t[1]));
              },
          .mistakes = wrong::gelu_backward_mistakes(),
          .atol = 1e-5,
          .rtol = 1e-4};
}

// ---- 19.3 ---------------------------------------------------------------------------------

Exercise<signature::repeat_kv> ex_repeat_kv() {
  auto rc = [](uint64_t seed, const Shape& s, int64_t groups, Layout layout,
               std::vector<std::string> catches, std::vector<std::string> only = {}) {
    const std::string note = layout == Layout::transposed ? "kv is a transposed view"
                             : s[0] == 0                  ? "an empty batch"
                                                          : "";
    return with_ints(drawn(seed, {{"kv", s, layout}}, note, std::move(catches), std::move(only)),
                     {groups}, "for groups of " + std::to_string(groups));
  };
  const Layout c = Layout::contiguous;
  return {.inputs = {rc(2191, {2, 2, 5, 4}, 3, c,
                        {"repeat_kv_tiled", "repeat_kv_along_positions", "repeat_kv_not_repeated",
                         "repeat_kv_heads_as_count"}),
                     rc(2192, {1, 1, 3, 2}, 4, c, {"repeat_kv_not_repeated"}),
                     rc(2193, {2, 4, 3, 2}, 1, c, {"repeat_kv_heads_as_count"}),
                     rc(2194, {2, 2, 3, 4}, 2, kT, {}, {"repeat_kv_reads_memory"}),
                     rc(2195, {0, 2, 3, 4}, 2, c, {}, {"repeat_kv_per_batch"})},
          .call = [](signature::repeat_kv f, const Tensors& t,
                     const Input& in) { return one(f(t[0], in.ints[0])); },
          .reference =
              [](const Tensors& t, const Input& in) {
                // Query head h reads kv head h / groups (attention/core.h's grouped heads).
                const int64_t groups = in.ints[0], heads = t[0].size(1) * groups;
                std::vector<Tensor> each;
                for (int64_t h = 0; h < heads; ++h) each.push_back(select(t[0], 1, h / groups));
                if (each.empty()) return one(t[0]);
                return one(stack(each, 1));
              },
          .mistakes = wrong::repeat_kv_mistakes(),
          .atol = 0,
          .rtol = 0,
          .gradients = true};
}

// ---- 23.1 ---------------------------------------------------------------------------------

Exercise<signature::rms_norm_backward> ex_rms_norm_backward() {
  auto rc = [](uint64_t seed, int64_t N, int64_t C, float scale, const std::string& note,
               std::vector<std::string> catches, std::vector<std::string> only = {}) {
    const float shift = scale < 0.01f ? 0.0f : 0.5f;
    return drawn(seed, {{"x", {N, C}, {}, scale, shift}, {"w", {C}}, {"dy", {N, C}}}, note,
                 std::move(catches), std::move(only));
  };
  return {.inputs = {rc(2231, 1, 7, 2, "one row",
                        {"rms_norm_backward_no_rstd_term", "rms_norm_backward_sum_not_mean",
                         "rms_norm_backward_layer_norm_formula"}),
                     rc(2232, 5, 33, 2, "", {"rms_norm_backward_dw_not_reduced"}),
                     rc(2233, 7, 4, 2, "", {"rms_norm_backward_sum_not_mean"}),
                     rc(2234, 4, 16, 1e-4f, "rows whose mean square is below eps", {},
                        {"rms_norm_backward_eps_outside_sqrt"}),
                     laid_out(rc(2235, 6, 5, 2, "", {}), 0, kT, {"rms_norm_backward_reads_memory"}),
                     rc(2236, 0, 5, 2, "an empty batch", {}, {"rms_norm_backward_sum_from_row_0"})},
          .call =
              [](signature::rms_norm_backward f, const Tensors& t, const Input&) {
                const RMSNormGrads g = f(t[0], t[1], t[2]);
                return Tensors{g.dx, g.dw};
              },
          .reference =
              [](const Tensors& t, const Input&) {
                // qkv's own nn::RMSNorm, its weight set to w, through autograd.
                nn::RMSNorm norm(t[0].size(-1), 1e-6);
                {
                  NoGradGuard no_grad;
                  copy_(norm.weight, t[1]);
                }
                const Tensor x = requires_grad_(clone(t[0]));
                backward(norm(x), t[2]);
                return Tensors{grad(x), grad(norm.weight)};
              },
          .mistakes = wrong::rms_norm_backward_mistakes(),
          .outputs = {"dx", "dw"}};
}

// ---- 25.1 ---------------------------------------------------------------------------------

Input ids_case(const std::vector<int64_t>& ids, int64_t a, int64_t b, int64_t new_id,
               std::vector<std::string> catches, std::vector<std::string> only = {}) {
  Input in;
  in.names = {"ids"};
  in.ints = {a, b, new_id};
  std::string shown;
  for (int64_t id : ids) shown += (shown.empty() ? "" : ", ") + std::to_string(id);
  in.what = "ids [" + shown + "], pair (" + std::to_string(a) + ", " + std::to_string(b) + ") -> " +
            std::to_string(new_id);
  in.tensors = [ids] { return Tensors{from_vector(ids, {static_cast<int64_t>(ids.size())})}; };
  in.catches = std::move(catches);
  in.only = std::move(only);
  return in;
}

Exercise<signature::bpe_merge> ex_bpe_merge() {
  return {
      .inputs = {ids_case({1, 2, 3, 1, 2}, 1, 2, 9,
                          {"bpe_merge_first_only", "bpe_merge_reversed_pair",
                           "bpe_merge_writes_in_place"}),
                 ids_case(
                     {5, 5, 5, 7}, 5, 5, 8,
                     {"bpe_merge_overlapping", "bpe_merge_right_to_left", "bpe_merge_drops_last"}),
                 ids_case({4}, 4, 4, 6, {"bpe_merge_drops_last"}), ids_case({}, 1, 2, 3, {}),
                 ids_case({3, 1, 2, 2, 1, 2}, 1, 2, 7, {"bpe_merge_first_only"}),
                 laid_out(ids_case({5, 5, 5, 7}, 5, 5, 8, {}), 0, kS, {"bpe_merge_reads_memory"})},
      .call = [](signature::bpe_merge f, const Tensors& t,
                 const Input& in) { return one(f(t[0], in.ints[0], in.ints[1], in.ints[2])); },
      .reference =
          [](const Tensors& t, const Input& in) {
            // The merge's definition (minbpe's merge): left to right, a pair consumed.
            const std::vector<int64_t> ids = t[0].to_vector<int64_t>();
            std::vector<int64_t> out;
            for (size_t i = 0; i < ids.size(); ++i) {
              const bool pair =
                  i + 1 < ids.size() && ids[i] == in.ints[0] && ids[i + 1] == in.ints[1];
              out.push_back(pair ? in.ints[2] : ids[i]);
              i += pair;
            }
            return one(from_vector(out, {static_cast<int64_t>(out.size())}));
          },
      .mistakes = wrong::bpe_merge_mistakes(),
      .atol = 0,
      .rtol = 0};
}

// The speed of a passing 24.1 at 256^3, against one core's FMA peak (tensor/fma_peak.h).
std::string gemm_speed(signature::gemm_packed_kernel f) {
  Generator g(2249);
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
  return number(gflops) + " GFLOP/s at 256^3, " + number(100 * gflops / peak) +
         "% of one core's FMA peak (" + number(peak) + ")";
}

// ---- The exercises, by id ---------------------------------------------------------------------

struct Entry {
  std::string id;
  std::function<Outcome(const Functions&, const CheckOptions&)> check;
  std::function<std::vector<CaseInfo>()> cases;
  std::function<std::vector<KnownMistake>()> mistakes;
};

template <class F>
Entry entry(const std::string& id, std::function<Exercise<F>()> build, F Functions::*member) {
  Entry e;
  e.id = id;
  e.check = [build, member](const Functions& f, const CheckOptions& o) {
    return grade(build(), f.*member, o);
  };
  e.cases = [build] {
    std::vector<CaseInfo> out;
    for (const Input& in : build().inputs) {
      CaseInfo info{in.what, in.catches, in.only};
      for (const std::string& name : in.only)  // what a case alone catches, it catches
        if (std::find(info.catches.begin(), info.catches.end(), name) == info.catches.end())
          info.catches.push_back(name);
      out.push_back(info);
    }
    return out;
  };
  e.mistakes = [id, build, member] {
    std::vector<KnownMistake> out;
    for (const Mistake<F>& m : build().mistakes) {
      const F fn = m.fn;
      out.push_back({id, m.name, m.hint, [member, fn](Functions& f) { f.*member = fn; },
                     m.caught_as ? m.caught_as : ""});
    }
    return out;
  };
  return e;
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> all = {
      entry<signature::broadcast_add>("01.1", ex_broadcast_add, &Functions::broadcast_add),
      entry<signature::sum_to_shape>("02.1", ex_sum_to_shape, &Functions::sum_to_shape),
      entry<signature::matmul_backward>("02.2", ex_matmul_backward, &Functions::matmul_backward),
      entry<signature::softmax_rows>("07.1", ex_softmax_rows, &Functions::softmax_rows),
      entry<signature::attention>("08.1", ex_attention, &Functions::attention),
      entry<signature::split_heads>("10.1", ex_split_heads, &Functions::split_heads),
      entry<signature::merge_heads>("10.2", ex_merge_heads, &Functions::merge_heads),
      entry<signature::cross_attention>("11.1", ex_cross_attention, &Functions::cross_attention),
      entry<signature::causal_attention>(
          "12.1",
          [] {
            return ex_causal<signature::causal_attention>(
                2120, wrong::causal_attention_mistakes(), "causal_attention",
                {"causal_attention_hides_diagonal", "causal_attention_keep_mask",
                 "causal_attention_loops"},
                {"causal_attention_mask_after_softmax", "causal_attention_inverted_mask",
                 "causal_attention_keep_mask"},
                {"causal_attention_softmax_without_max", "causal_attention_mask_minus_100"});
          },
          &Functions::causal_attention),
      entry<signature::causal_attention_renormalised>(
          "12.2",
          [] {
            return ex_causal<signature::causal_attention_renormalised>(
                2125, wrong::causal_attention_renormalised_mistakes(),
                "causal_attention_renormalised", {"causal_attention_renormalised_hides_diagonal"},
                {"causal_attention_renormalised_missing", "causal_attention_renormalised_upper"},
                {});
          },
          &Functions::causal_attention_renormalised),
      entry<signature::softmax_backward>("13.1", ex_softmax_backward, &Functions::softmax_backward),
      entry<signature::adamw_step>("16.1", ex_adamw_step, &Functions::adamw_step),
      entry<signature::layer_norm_backward>("18.1", ex_layer_norm_backward,
                                            &Functions::layer_norm_backward),
      entry<signature::kv_append>("19.1", ex_kv_append, &Functions::kv_append),
      entry<signature::decode_step>("19.2", ex_decode_step, &Functions::decode_step),
      entry<signature::online_softmax_attention>("21.1", ex_online_softmax,
                                                 &Functions::online_softmax_attention),
      entry<signature::rope_rotate>("22.1", ex_rope_rotate, &Functions::rope_rotate),
      entry<signature::gemm_packed_kernel>("24.1", ex_gemm_packed_kernel,
                                           &Functions::gemm_packed_kernel),
      entry<signature::cross_entropy_backward>("05.1", ex_cross_entropy_backward,
                                               &Functions::cross_entropy_backward),
      entry<signature::block_forward>("15.1", ex_block_forward, &Functions::block_forward),
      entry<signature::gelu_backward>("18.2", ex_gelu_backward, &Functions::gelu_backward),
      entry<signature::repeat_kv>("19.3", ex_repeat_kv, &Functions::repeat_kv),
      entry<signature::rms_norm_backward>("23.1", ex_rms_norm_backward,
                                          &Functions::rms_norm_backward),
      entry<signature::bpe_merge>("25.1", ex_bpe_merge, &Functions::bpe_merge)};
  return all;
}

const Entry& find_entry(const std::string& id) {
  for (const Entry& e : entries())
    if (e.id == id) return e;
  throw Error("check_exercises: no exercise \"" + id + "\"");
}

}  // namespace

Outcome check(const std::string& id, const Functions& f, const CheckOptions& options) {
  Outcome o = find_entry(id).check(f, options);
  if (id == "24.1" && o.kind == Outcome::passed && options.only_case < 0)
    o.note = gemm_speed(f.gemm_packed_kernel);
  return o;
}

std::vector<CaseInfo> cases(const std::string& id) {
  return find_entry(id).cases();
}

std::vector<KnownMistake> known_mistakes() {
  std::vector<KnownMistake> out;
  for (const Entry& e : entries())
    for (KnownMistake& m : e.mistakes()) out.push_back(std::move(m));
  return out;
}

}  // namespace qkv::exercises
