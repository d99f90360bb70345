// Lesson 23: the attention family of today's open models, one line of the formula at a time.
//
// What you will learn: every variant below is scaled dot-product attention,
//     out = softmax(q k^T / sqrt(d) + mask) v,
// with one line changed. For each: the line, where it is used, and a number that shows it:
//   - QK-norm (Qwen3, OLMo 2): q, k <- RMSNorm(q), RMSNorm(k): scores no longer grow with the
//     size of q and k;
//   - logit soft-capping (Gemma 2): s <- c tanh(s / c): no score beyond +-c;
//   - attention sinks (gpt-oss): softmax over the keys and one learned sink logit: a row may
//     give weight to nothing; StreamingLLM keeps the first tokens and a window in the cache;
//   - gated output (Qwen3-Next): head_h <- sigmoid(x W_g)_h head_h;
//   - multi-head latent attention (DeepSeek-V2/V3): k, v <- expanded from a small cached latent;
//   - differential attention (Diff Transformer): softmax(.) <- softmax_1(.) - lambda softmax_2(.);
//   - document masks (packed training) and prefix-LM masks: mask <- block-diagonal / prefix;
//   - linear attention (and gated: RetNet, GLA, Mamba-2): e^(q . k) <- phi(q) . phi(k), which
//     turns attention into a recurrence with a fixed-size state.
// Then the maps of differential and plain attention on the same input, as SVG and in the
// terminal.
// What comes before: lessons 10 (multi-head), 12 (causal), 19 (the KV cache), 22 (RoPE).
// Run it: ./build/release/tutorials/23_attention_variants [--svg_dir DIR]
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/plot.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return max(abs(sub(a, b))).item<float>();
}

void formula(const char* line) {
  std::cout << "  changes: " << line << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string svg_dir = ".";
  lesson::Flags flags("23_attention_variants",
                      "The attention family of today's models, one changed line at a time.");
  flags.output_folder("--svg_dir", &svg_dir, "folder for attention_variants_differential.svg");
  return lesson::run(flags, argc, argv, [&] {
    NoGradGuard no_grad;
    Generator g(14);
    const int64_t C = 16, H = 2, T = 8;
    const Tensor x = randn({1, T, C}, &g);

    lesson::banner("1. QK-norm");
    formula("q, k <- RMSNorm(q), RMSNorm(k)   per head, before q k^T");
    MultiHeadOptions o{.causal = true, .frontier = {.qk_norm = true}};
    MultiHeadAttention qk(C, H, o, &g);
    const Tensor before = qk(x);
    copy_(qk.q->weight, mul(qk.q->weight, 100.0f));
    copy_(qk.q->bias, mul(qk.q->bias, 100.0f));
    const double qk_change = max_abs_diff(qk(x), before);
    std::printf("W_q scaled by 100: the output changes by %.1e\n", qk_change);
    lesson::expect(qk_change < 1e-4, "with QK-norm the scores ignore how large q is");

    lesson::banner("2. Logit soft-capping");
    formula("s <- c * tanh(s / c)");
    const Tensor q = mul(randn({T, 4}, &g), 10.0f), k = randn({T, 4}, &g), v = randn({T, 4}, &g);
    AttentionOptions capped{.softcap = 5.0};
    const Tensor w_plain = scaled_dot_product_attention(q, k, v).weights;
    const Tensor w_capped = scaled_dot_product_attention(q, k, v, capped).weights;
    const float top_plain = max(w_plain).item<float>(), top_capped = max(w_capped).item<float>();
    std::printf("largest weight: %.4f without the cap, %.4f with c = 5\n", top_plain, top_capped);
    lesson::expect(top_capped < top_plain && min(w_capped).item<float>() >= std::exp(-10.0f) / T,
                   "capped scores stay within +-5: no weight below e^-10 of another");

    lesson::banner("3. Attention sinks");
    formula("softmax over [scores, sink]   then drop the sink's column");
    AttentionOptions sinks{.causal = true, .sinks = from_vector(std::vector<float>{1.0f}, {1})};
    const Tensor w_sink = scaled_dot_product_attention(view(q, {1, T, 4}), view(k, {1, T, 4}),
                                                       view(v, {1, T, 4}), sinks)
                              .weights;
    const std::vector<float> row_sums = sum(w_sink, -1).to_vector<float>();
    std::printf(
        "row sums with a sink logit of 1: %.3f %.3f %.3f ... %.3f (the rest went to the sink)\n",
        row_sums[0], row_sums[1], row_sums[2], row_sums[T - 1]);
    lesson::expect(row_sums[0] < 1.0f && row_sums[0] > 0.0f, "a row can keep weight back");
    MultiHeadOptions stream{.causal = true, .rope = true};
    MultiHeadAttention streaming(C, H, stream, &g);
    KVCache rolling;
    rolling.keep_first = 2;
    rolling.window = 4;
    for (int64_t t = 0; t < 50; ++t) streaming.forward(randn({1, 1, C}, &g), Tensor(), &rolling);
    std::printf("StreamingLLM cache after 50 tokens: %lld kept (first 2 + last 4), position %lld\n",
                static_cast<long long>(rolling.length()), static_cast<long long>(rolling.position));
    lesson::expect(rolling.length() == 6 && rolling.position == 50,
                   "the rolling cache stays at keep_first + window");

    lesson::banner("4. Gated output");
    formula("head_h <- sigmoid(x W_g)[h] * head_h");
    MultiHeadOptions gated_options{.causal = true, .frontier = {.gate = true}};
    MultiHeadAttention gated(C, H, gated_options, &g);
    const Tensor gates = sigmoid(gated.g->forward(x));  // (1, T, H)
    lesson::show("gates (token x head)", select(gates, 0, 0));
    lesson::expect(min(gates).item<float>() > 0 && max(gates).item<float>() < 1,
                   "each head of each token scaled by a number in (0, 1)");

    lesson::banner("5. Multi-head latent attention");
    formula("k, v <- expanded from a cached latent c = x W_down, plus one shared RoPE key");
    MultiHeadLatentAttention mla(64, 4, 16, 8, {.causal = true}, &g);
    std::printf(
        "per token MHA caches 2 * H * D = %lld floats, MLA d_latent + d_rope = %lld: %.2fx less\n",
        static_cast<long long>(2 * 64), static_cast<long long>(16 + 8), mla.cache_reduction());
    lesson::expect(std::fabs(mla.cache_reduction() - 128.0 / 24.0) < 1e-12,
                   "the cache is smaller by 2HD / (d_latent + d_rope)");

    lesson::banner("6. Differential attention");
    formula("softmax(q k^T) <- softmax(q1 k1^T) - lambda * softmax(q2 k2^T)");
    DifferentialAttention diff(C, H, {.layer = 1, .causal = true}, &g);
    diff(x);
    const float lambda = diff.lambda().item<float>();
    std::printf("lambda = %.4f (lambda_init %.1f); rows of the map sum to 1 - lambda = %.4f\n",
                lambda, diff.lambda_init, 1 - lambda);
    lesson::expect(
        std::fabs(
            sum(select(select(diff.attention_weights, 0, 0), 0, 0), -1).to_vector<float>()[5] -
            (1 - lambda)) < 1e-5,
        "each row of A1 - lambda A2 sums to 1 - lambda");

    lesson::banner("7. Document and prefix-LM masks");
    formula("mask <- same document and j <= i   (or: j <= i or j < prefix)");
    const Tensor docs =
        document_mask(from_vector(std::vector<int64_t>{0, 0, 0, 1, 1, 2, 2, 2}, {8}));
    std::cout << "three packed documents (3, 2 and 3 tokens):\n";
    for (int64_t i = 0; i < 8; ++i) {
      std::cout << "  ";
      for (int64_t j = 0; j < 8; ++j) std::cout << (docs.at<bool>({i, j}) ? '1' : '.');
      std::cout << "\n";
    }
    lesson::expect(!docs.at<bool>({3, 2}) && docs.at<bool>({4, 3}),
                   "a document never sees the one before it");
    const Tensor prefix = prefix_lm_mask(6, 3);
    std::cout << "prefix LM, a prefix of 3 (seen both ways), then causal:\n";
    for (int64_t i = 0; i < 6; ++i) {
      std::cout << "  ";
      for (int64_t j = 0; j < 6; ++j) std::cout << (prefix.at<bool>({i, j}) ? '1' : '.');
      std::cout << "\n";
    }
    lesson::expect(prefix.at<bool>({0, 2}) && !prefix.at<bool>({3, 4}),
                   "the prefix sees ahead within itself; after it, no one sees ahead");

    lesson::banner("8. Linear attention");
    formula("e^(q . k) <- phi(q) . phi(k), phi = elu + 1: a recurrence with state D x D_v");
    const Tensor lq = randn({T, 4}, &g), lk = randn({T, 4}, &g), lv = randn({T, 4}, &g);
    const Tensor lg = sigmoid(randn({T}, &g));
    const double forms =
        max_abs_diff(linear_attention(lq, lk, lv, {.form = LinearForm::parallel}, lg),
                     linear_attention(lq, lk, lv, {.form = LinearForm::recurrent}, lg));
    std::printf("gated, parallel (T x T) vs recurrent (state of 4 x 4): max difference %.1e\n",
                forms);
    lesson::expect(forms < 1e-5, "the parallel and the recurrent form are the same function");

    lesson::banner("9. The maps: plain vs differential attention, same input");
    // Both at initialisation on the same 8 tokens: plain MHA's head 0, and the differential
    // head 0's two maps and their difference. The SVG would draw a negative weight red; how many
    // there are is counted below (at initialisation, with lambda small, usually none).
    MultiHeadAttention plain(C, H, {.causal = true}, &g);
    plain(x);
    const Tensor plain_map = select(select(plain.attention_weights, 0, 0), 0, 0);
    const Tensor a1 = select(select(diff.weights_first, 0, 0), 0, 0);
    const Tensor a2 = select(select(diff.weights_second, 0, 0), 0, 0);
    const Tensor d_map = select(select(diff.attention_weights, 0, 0), 0, 0);
    const std::vector<std::string> labels = {"L", "i", "f", "e", "_", "i", "s", "_"};
    std::vector<std::string> figure_labels;  // the spaces as a figure shows them
    for (const char c : std::string("Life is "))
      figure_labels.push_back(lesson::char_label({c}, false));
    const std::string path = svg_dir + "/attention_variants_differential.svg";
    nn::write_file_atomic(
        path, lesson::svg_heatmap_grid(
                  {.title = "plain vs differential attention, head 0, at initialisation, on "
                            "\"Life is \"",
                   .maps = {{plain_map, a1, a2, d_map}},
                   .column_titles = {"plain head 0", "A1", "A2", "A1 - lambda A2"},
                   .row_labels = figure_labels,
                   .column_labels = figure_labels,
                   .caption = {"Differential attention subtracts a second map (A2, scaled by "
                               "lambda) from the first; a weight below 0 would show red.",
                               "\u2423 is a space."},
                   .max_width = 1000,
                   .scale_max = 1}));
    std::cout << "plain attention, head 0:\n" << lesson::terminal_heatmap(plain_map, labels);
    std::cout << "differential, head 0 (negative entries blank):\n"
              << lesson::terminal_heatmap(d_map, labels) << "wrote " << path << "\n";
    int64_t negative = 0;
    for (float w : d_map.to_vector<float>()) negative += w < 0;
    std::printf("%lld of the differential map's entries are negative; plain attention has none\n",
                static_cast<long long>(negative));
    lesson::expect(min(plain_map).item<float>() >= 0, "plain weights are never negative");
    std::cout << "At initialisation both maps are diffuse; the paper's claim is about trained\n"
                 "models, where subtracting the second map cancels the weight both spread over\n"
                 "irrelevant tokens (bench/bench_attention times the variants above, but for the\n"
                 "prefix-LM mask and the rolling cache).\n";
    lesson::exercises({"23.1 rms_norm_backward: dx and dw of RMSNorm (QK-norm's, Llama's)"});
    return lesson::finish();
  });
}
