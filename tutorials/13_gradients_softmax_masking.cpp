// Lesson 13: gradients through softmax and masking: what training sees of attention.
//
// What you will learn:
//   - softmax's Jacobian, J = diag(s) - s s^T: a change of one score moves every weight of the
//     row, and the rows of J sum to 0 (the weights always sum to 1);
//   - the gradients of the article's SelfAttention(3, 2, 4) (seed 123, "Life is short, eat
//     dessert first") with respect to W_query, W_key and W_value, with PyTorch's digits, then
//     for its causal version;
//   - retain_grad on the scores: a masked (future) position receives exactly zero gradient,
//     and both masking methods (-inf before softmax; multiply by tril and renormalise) give the
//     same gradients;
//   - why scores are divided by sqrt(d_k): without it, scores of random q, k grow like
//     sqrt(d_k), softmax saturates (one weight near 1), and J, the gradient's way through,
//     collapses toward 0.
// What comes before: lessons 02 (autograd), 09 (SelfAttention), 12 (causal masking).
// Run it: ./build/release/tutorials/13_gradients_softmax_masking [--svg_dir DIR]
//         [--seed 123] [--d_out_kq 2] [--d_out_v 4]   (other values: an experiment)
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "attention/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/plot.h"
#include "tutorials/common/sentence.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a, b))).item<float>();
}

// J = diag(s) - s s^T for a softmax output s (n,).
Tensor softmax_jacobian(const Tensor& s) {
  const int64_t n = s.size(0);
  Tensor j = neg(matmul(view(s, {n, 1}), view(s, {1, n})));
  for (int64_t i = 0; i < n; ++i) j.data_ptr()[i * n + i] += s.at({i});
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  std::string svg_dir = ".";
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4;
  lesson::Flags flags(
      "13_gradients_softmax_masking",
      "Gradients through softmax and masking, and why scores are scaled by 1/sqrt(d_k).");
  flags.output_folder("--svg_dir", &svg_dir, "folder for softmax_saturation.svg");
  lesson::article_flags(flags, &seed, &d_out_kq, &d_out_v);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && d_out_kq == 2 && d_out_v == 4;
    const float root_d = std::sqrt(static_cast<float>(d_out_kq));

    lesson::banner("1. The softmax Jacobian");
    std::cout << "(fixed numbers: this section does not change with the flags)\n";
    const Tensor z = from_vector(std::vector<float>{1.0f, 2.0f, 0.5f}, {3});
    const Tensor s = softmax(z, 0);
    const Tensor J = softmax_jacobian(s);
    lesson::show("s = softmax([1, 2, 0.5])", s);
    lesson::show("J = diag(s) - s s^T", J);
    // Autograd's J, row by row: backward of s_i alone gives row i (J is symmetric).
    double worst = 0;
    for (int64_t i = 0; i < 3; ++i) {
      const Tensor zl = requires_grad_(clone(z));
      backward(select(softmax(zl, 0), 0, i));
      worst = std::max(worst, max_abs_diff(grad(zl), select(J, 0, i)));
    }
    lesson::expect(worst < 1e-7, "autograd's softmax gradient is diag(s) - s s^T, row by row");
    const GradcheckResult gc =
        gradcheck([](const std::vector<Tensor>& in) { return softmax(in[0], 0); }, {z});
    lesson::expect(gc.ok, "and gradcheck (finite differences) agrees");
    lesson::expect(max(abs(sum(J, 1))).item<float>() < 1e-7,
                   "each row of J sums to 0: the weights always sum to 1");

    lesson::banner("2. Gradients of SelfAttention(3, " + std::to_string(d_out_kq) + ", " +
                   std::to_string(d_out_v) + ")");
    // >>> torch.manual_seed(123); sa = SelfAttention(3, 2, 4)
    // >>> sa(embedded_sentence).sum().backward()
    const Tensor x = lesson::embedded_sentence();
    manual_seed(static_cast<uint64_t>(seed));
    SelfAttention sa(3, d_out_kq, d_out_v);
    backward(sum(sa(x)));
    lesson::show("W_query.grad", grad(sa.W_query));
    lesson::expect_prints(grad(sa.W_query),
                          "tensor([[-0.6935, -1.5471],\n"
                          "        [ 0.9114,  2.5608],\n"
                          "        [-0.0468,  0.6226]])",
                          "W_query.grad prints PyTorch's digits");
    lesson::show("W_key.grad", grad(sa.W_key));
    lesson::expect_prints(grad(sa.W_key),
                          "tensor([[ 0.0492,  0.1817],\n"
                          "        [ 0.6063,  3.1989],\n"
                          "        [-0.3101, -1.2208]])",
                          "W_key.grad prints PyTorch's digits");
    lesson::show("W_value.grad", grad(sa.W_value));
    lesson::expect_prints(grad(sa.W_value),
                          "tensor([[-1.0350, -1.0350, -1.0350, -1.0350],\n"
                          "        [ 3.0878,  3.0878,  3.0878,  3.0878],\n"
                          "        [-0.8070, -0.8070, -0.8070, -0.8070]])",
                          "W_value.grad prints PyTorch's digits");
    std::cout << "W_value.grad has " << d_out_v
              << " equal columns: the loss is a plain sum of the outputs, so\n"
                 "each output column pulls on its value column in exactly the same way.\n";

    lesson::banner("3. The causal version, and the gradient at the scores");
    // >>> scores = q @ k.T; scores.retain_grad()
    // >>> masked = scores.masked_fill(torch.triu(torch.ones(6, 6), diagonal=1).bool(), -inf)
    // >>> (torch.softmax(masked / 2**0.5, dim=-1) @ v).sum().backward()
    manual_seed(static_cast<uint64_t>(seed));
    SelfAttention causal(3, d_out_kq, d_out_v);
    const Tensor q = matmul(x, causal.W_query), k = matmul(x, causal.W_key),
                 v = matmul(x, causal.W_value);
    const Tensor scores = matmul(q, transpose(k, 0, 1));
    retain_grad(scores);
    const Tensor future = logical_not(causal_mask(6));
    const Tensor w = softmax(masked_fill(scores, future, -INFINITY) / root_d, -1);
    backward(sum(matmul(w, v)));
    lesson::show("causal W_query.grad", grad(causal.W_query));
    lesson::expect_prints(grad(causal.W_query),
                          "tensor([[-0.8583, -2.0862],\n"
                          "        [ 0.4539,  1.1404],\n"
                          "        [-0.0901,  0.5079]])",
                          "causal W_query.grad prints PyTorch's digits");
    lesson::show("causal W_key.grad", grad(causal.W_key));
    lesson::expect_prints(grad(causal.W_key),
                          "tensor([[-0.1036, -0.5905],\n"
                          "        [ 0.0187,  1.4992],\n"
                          "        [-0.4310, -1.2820]])",
                          "causal W_key.grad prints PyTorch's digits");
    lesson::show("scores.grad", grad(scores));
    lesson::expect_prints(grad(scores),
                          "tensor([[ 0.0000,  0.0000,  0.0000,  0.0000,  0.0000,  0.0000],\n"
                          "        [-0.2286,  0.2286,  0.0000,  0.0000,  0.0000,  0.0000],\n"
                          "        [ 0.0651,  0.5711, -0.6362,  0.0000,  0.0000,  0.0000],\n"
                          "        [-0.3506,  0.9614, -0.6298,  0.0189,  0.0000,  0.0000],\n"
                          "        [-0.3081,  0.7958, -0.4593, -0.0662,  0.0377,  0.0000],\n"
                          "        [ 0.1215,  0.1273, -0.2620,  0.2563,  0.2101, -0.4533]])",
                          "scores.grad prints PyTorch's digits");
    bool future_zero = true;
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = i + 1; j < 6; ++j) future_zero = future_zero && grad(scores).at({i, j}) == 0;
    lesson::expect(future_zero, "every future position receives exactly zero gradient");
    std::cout << "Row 0 is all zero too: the first token sees only itself, its one weight is 1\n"
                 "whatever its score, and a constant has no gradient. Each row sums to 0 (the\n"
                 "Jacobian's rows do).\n";

    // The other masking method: softmax over all scores, multiply by tril, renormalise.
    manual_seed(static_cast<uint64_t>(seed));
    SelfAttention renorm(3, d_out_kq, d_out_v);
    const Tensor q2 = matmul(x, renorm.W_query), k2 = matmul(x, renorm.W_key),
                 v2 = matmul(x, renorm.W_value);
    const Tensor all = softmax(matmul(q2, transpose(k2, 0, 1)) / root_d, -1);
    const Tensor kept = all * to(causal_mask(6), Dtype::float32);
    backward(sum(matmul(kept / sum(kept, -1, /*keepdim=*/true), v2)));
    const double methods = std::max({max_abs_diff(grad(renorm.W_query), grad(causal.W_query)),
                                     max_abs_diff(grad(renorm.W_key), grad(causal.W_key)),
                                     max_abs_diff(grad(renorm.W_value), grad(causal.W_value))});
    std::printf("multiply-and-renormalise vs -inf: max gradient difference %.1e\n", methods);
    lesson::expect(methods < 1e-5, "both masking methods give the same gradients");

    lesson::banner("4. Why divide by sqrt(d_k)");
    // For each d_k, 200 random queries against 8 random keys (entries N(0, 1)): the mean largest
    // weight of a row, and the mean size (Frobenius norm) of the row's softmax Jacobian.
    Generator g(13);
    std::cout << "(its own generator, seed 13: this section does not change with the flags)\n";
    lesson::Series sat_raw{.name = "largest weight, unscaled", .colour = "#d62728"},
        sat_scaled{.name = "largest weight, / sqrt(d_k)", .colour = "#1f77b4"},
        jac_raw{.name = "|J|, unscaled", .colour = "#d62728", .dash = "6 4"},
        jac_scaled{.name = "|J|, / sqrt(d_k)", .colour = "#1f77b4", .dash = "6 4"};
    for (lesson::Series* s : {&sat_raw, &sat_scaled, &jac_raw, &jac_scaled}) s->markers = true;
    std::printf("  %6s  %22s  %22s\n", "d_k", "unscaled: max w, |J|", "scaled: max w, |J|");
    double j_small_raw = 0, j_large_raw = 0, j_small_scaled = 0, j_large_scaled = 0;
    for (int64_t dk : {4, 16, 64, 256, 1024}) {
      const Tensor qs = randn({200, dk}, &g), ks = randn({8, dk}, &g);
      const Tensor raw_scores = matmul(qs, transpose(ks, 0, 1));  // (200, 8)
      double stats[2][2] = {};
      for (int scaled = 0; scaled < 2; ++scaled) {
        const Tensor sc = scaled ? div(raw_scores, std::sqrt(static_cast<float>(dk))) : raw_scores;
        const Tensor ws = softmax(sc, 1);
        for (int64_t r = 0; r < 200; ++r) {
          const Tensor row = select(ws, 0, r);
          stats[scaled][0] += max(row).item<float>() / 200;
          const Tensor jr = softmax_jacobian(row);
          stats[scaled][1] += std::sqrt(sum(mul(jr, jr)).item<float>()) / 200;
        }
      }
      std::printf("  %6lld  %10.3f  %10.4f  %10.3f  %10.4f\n", static_cast<long long>(dk),
                  stats[0][0], stats[0][1], stats[1][0], stats[1][1]);
      const double lx = std::log2(static_cast<double>(dk));
      sat_raw.points.push_back({lx, stats[0][0]});
      sat_scaled.points.push_back({lx, stats[1][0]});
      jac_raw.points.push_back({lx, stats[0][1]});
      jac_scaled.points.push_back({lx, stats[1][1]});
      if (dk == 4) j_small_raw = stats[0][1], j_small_scaled = stats[1][1];
      if (dk == 1024) j_large_raw = stats[0][1], j_large_scaled = stats[1][1];
    }
    const std::string path = svg_dir + "/softmax_saturation.svg";
    nn::write_file_atomic(
        path, lesson::svg_line_chart(
                  {sat_raw, sat_scaled, jac_raw, jac_scaled},
                  {.title = "softmax saturation as d_k grows (200 random rows of 8 scores)",
                   .x_label = "log2 d_k (2 = 4, 10 = 1024)",
                   .y_label = "mean over the rows",
                   .caption = {"Unscaled (red), the largest weight climbs towards 1 and the "
                               "Jacobian |J| towards 0:",
                               "the softmax saturates and passes almost no gradient back. "
                               "Scaled by 1/sqrt(d_k) (blue), both stay level."}}));
    std::cout << "wrote " << path << "\n";
    lesson::expect(j_large_raw < j_small_raw / 4,
                   "unscaled, the Jacobian (the gradient's way back) shrinks as d_k grows");
    lesson::expect(std::fabs(j_large_scaled - j_small_scaled) < 0.5 * j_small_scaled,
                   "scaled by 1/sqrt(d_k), it stays the same size at every d_k");
    lesson::exercises({"13.1 softmax_backward: dx from y and dy"});
    return lesson::finish();
  });
}
