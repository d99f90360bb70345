// Lesson 21: flash attention: softmax one tile at a time, and never the T x T matrix.
//
// What you will learn:
//   - standard attention builds scores and weights of shape (T, T): at T = 4096 that is 64 MiB
//     per head, and training keeps several such matrices for the backward pass;
//   - the online softmax: scores can arrive in tiles. Keep a running max m and a running sum
//     l = sum e^(s - m); when a tile brings a larger max m', multiply what you have by
//     e^(m - m'). The output sum_j e^(s_j - m) v_j is rescaled the same way, so the weighted
//     average of the values is ready when the last tile has passed: no (T, T) matrix at all;
//   - the backward pass needs the weights again: it recomputes them tile by tile from q, k and
//     one saved number per row, logsumexp = m + log(l);
//   - the result equals standard attention (to float rounding), at O(T * D) memory.
// What comes before: lesson 07 (softmax and the weights), lesson 12 (causal masking).
// Run it: ./build/release/tutorials/21_flash_attention
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a, b))).item<float>();
}

}  // namespace

int main(int argc, char** argv) {
  lesson::Flags flags("21_flash_attention",
                      "Flash attention: the online softmax, tile by tile, and its memory.");
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. The online softmax, by hand");
    // One query's 12 scores and the 12 values (one number each) they weigh, arriving 4 at a time.
    const std::vector<float> scores = {0.5f, 1.2f,  -0.3f, 0.8f, 2.5f, 0.1f,
                                       1.9f, -1.0f, 3.1f,  0.0f, 0.7f, 2.2f};
    const std::vector<float> values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    float m = -INFINITY, l = 0, acc = 0;  // running max, running sum, running weighted values
    std::printf(
        "  tile  scores                      tile max  running m  rescale e^(m-m')  "
        "running l\n");
    for (size_t t0 = 0; t0 < scores.size(); t0 += 4) {
      float tile_max = -INFINITY;
      for (size_t j = t0; j < t0 + 4; ++j) tile_max = std::max(tile_max, scores[j]);
      const float m_new = std::max(m, tile_max);
      const float rescale = std::exp(m - m_new);  // e^(-inf) = 0 for the first tile
      l *= rescale;
      acc *= rescale;
      for (size_t j = t0; j < t0 + 4; ++j) {
        const float p = std::exp(scores[j] - m_new);
        l += p;
        acc += p * values[j];
      }
      m = m_new;
      std::printf("  %zu     %5.1f %5.1f %5.1f %5.1f   %8.4f  %9.4f  %16.4f  %9.4f\n", t0 / 4,
                  scores[t0], scores[t0 + 1], scores[t0 + 2], scores[t0 + 3], tile_max, m, rescale,
                  l);
    }
    const float online = acc / l;
    const Tensor w = softmax(from_vector(scores, {12}), 0);
    const float standard = sum(mul(w, from_vector(values, {12}))).item<float>();
    std::printf("online:   acc / l           = %.6f\nstandard: softmax(s) . v     = %.6f\n", online,
                standard);
    lesson::expect(std::fabs(online - standard) < 1e-5f,
                   "three running numbers give the weighted average softmax gives");
    const float lse = m + std::log(l);
    std::printf("logsumexp = m + log(l) = %.4f; weight of key 8 = e^(s_8 - logsumexp) = %.4f\n",
                lse, std::exp(scores[8] - lse));
    lesson::expect(std::fabs(std::exp(scores[8] - lse) - w.at({8})) < 1e-6f,
                   "logsumexp alone recovers any weight (what the backward recomputes from)");

    lesson::banner("2. Flash attention equals standard attention");
    // Four causal heads of 32 over 300 tokens: tiles of 64 keys, 64 queries.
    Generator g(12);
    const Tensor q = randn({1, 4, 300, 32}, &g), k = randn({1, 4, 300, 32}, &g),
                 v = randn({1, 4, 300, 32}, &g), up = randn({1, 4, 300, 32}, &g);
    AttentionOptions options{.causal = true};
    auto forward_backward = [&](bool flash) {
      options.flash = flash;
      const Tensor ql = requires_grad_(clone(q)), kl = requires_grad_(clone(k)),
                   vl = requires_grad_(clone(v));
      const Tensor out = scaled_dot_product_attention(ql, kl, vl, options).output;
      backward(sum(out * up));
      return std::vector<Tensor>{detach(out), grad(ql), grad(kl), grad(vl)};
    };
    const std::vector<Tensor> standard_path = forward_backward(/*flash=*/false),
                              flash_path = forward_backward(/*flash=*/true);
    const char* names[] = {"output", "dq", "dk", "dv"};
    double worst = 0;
    for (size_t i = 0; i < 4; ++i) {
      const double diff = max_abs_diff(flash_path[i], standard_path[i]);
      worst = std::max(worst, diff);
      std::printf("max |flash - standard| of %-6s = %.2e\n", names[i], diff);
    }
    lesson::expect(worst < 1e-5,
                   "flash equals the standard path within 1e-5, forward and backward");

    lesson::banner("3. Memory");
    // Forward and backward at T = 2048, one head-batch of 4 x 32: the peak bytes held, inputs
    // excluded, from the allocator's counters.
    const int64_t T = 2048;
    const Tensor q2 = randn({1, 4, T, 32}, &g), k2 = randn({1, 4, T, 32}, &g),
                 v2 = randn({1, 4, T, 32}, &g);
    auto peak_bytes = [&](bool flash, bool fused) {
      const FusedGuard path(fused);  // fused paths on or off (tensor/fused.h)
      options.flash = flash;
      const size_t before = memory_stats().allocated;
      reset_peak_memory();
      const Tensor ql = requires_grad_(clone(q2)), kl = requires_grad_(clone(k2)),
                   vl = requires_grad_(clone(v2));
      backward(sum(scaled_dot_product_attention(ql, kl, vl, options).output));
      return static_cast<double>(memory_stats().peak - before) / (1 << 20);
    };
    // New: the standard path twice. Its composed ops keep the scores, the weights and their
    // gradients, each T x T; the fused kernel it runs by default keeps only the weights.
    const double composed_mib = peak_bytes(/*flash=*/false, /*fused=*/false),
                 fused_mib = peak_bytes(/*flash=*/false, /*fused=*/true);
    const double flash_mib = peak_bytes(/*flash=*/true, /*fused=*/true);
    const double one_matrix_mib = 4.0 * T * T * sizeof(float) / (1 << 20);
    std::printf(
        "one (4, T, T) matrix: %.0f MiB\n"
        "standard path peak:   %.1f MiB (composed ops), %.1f MiB (fused kernel)\n"
        "flash path peak:      %.1f MiB (%.0fx less than the fused kernel)\n",
        one_matrix_mib, composed_mib, fused_mib, flash_mib, fused_mib / flash_mib);
    lesson::expect(composed_mib > 2 * one_matrix_mib && fused_mib > one_matrix_mib,
                   "the standard path holds T x T matrices: several composed, the weights fused");
    lesson::expect(flash_mib < one_matrix_mib / 4,
                   "flash never holds a T x T matrix: its peak is a fraction of one");
    std::cout << "\nThe standard path's peak grows as T^2, flash's as T: at T = 4096 the ratio\n"
                 "between them doubles again. bench/bench_attention measures both\n"
                 "(bench/README.md).\n";
    lesson::exercises({"21.1 online_softmax_attention: the online softmax, tile by tile"});
    return lesson::finish();
  });
}
