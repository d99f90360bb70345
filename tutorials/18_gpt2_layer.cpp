// Lesson 18: one GPT-2 (small) attention layer, at full size, step by step.
//
// What you will learn: the shapes and the arithmetic of a real model's attention, with random
// weights (the numbers mean nothing; the shapes are GPT-2's):
//   - a 12-token prompt becomes 12 vectors of 768: token embedding (a 50,257 x 768 table) plus
//     position embedding (1,024 x 768), then a layer norm;
//   - each of 12 heads projects them to q, k, v of 64 with its own 768 x 64 matrices;
//   - masked scores (12 x 12), weights, and the head's 12 contextual vectors of 64;
//   - 12 heads side by side make 12 x 768 again, and W_O (768 x 768) mixes them;
//   - the count: 768 * 64 * 3 * 144 = 21,233,664 query/key/value weights over 12 heads x 12
//     layers, the same as GPT-2's 12 fused c_attn matrices of 768 x 2,304.
// What comes before: lessons 10 (multi-head attention), 12 (causal), 15 (a GPT).
// Run it: ./build/release/tutorials/18_gpt2_layer
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  lesson::Flags flags(
      "18_gpt2_layer",
      "One GPT-2 small attention layer at full size, step by step (random weights).");
  return lesson::run(flags, argc, argv, [&] {
    const int64_t vocab = 50257, context = 1024, C = 768, H = 12, D = C / H, T = 12, layers = 12;

    lesson::banner("1. Token plus position embeddings");
    manual_seed(2019);
    nn::Embedding wte(vocab, C), wpe(context, C);
    // Twelve token ids (made up: a tokenizer is not this lesson's subject).
    const Tensor ids = from_vector(
        std::vector<int64_t>{464, 3290, 286, 1204, 318, 257, 1310, 1165, 13, 632, 481, 307},
        {1, T});
    const Tensor x = wte(ids) + wpe(arange(T));  // (1, 12, 768)
    std::printf("wte %s + wpe %s -> x %s\n", shape_str(wte.weight.shape()).c_str(),
                shape_str(wpe.weight.shape()).c_str(), shape_str(x.shape()).c_str());
    nn::LayerNorm ln(C);
    const Tensor h = ln(x);
    // Every row's mean and variance over its 768 numbers.
    const Tensor row_means = mean(select(h, 0, 0), -1);                      // (12,)
    const Tensor row_vars = var(select(h, 0, 0), -1, /*keepdim=*/false, 0);  // (12,)
    std::printf(
        "after layer norm: each of the 12 rows has |mean| <= %.1e and variance in [%.4f, %.4f]\n",
        max(abs(row_means)).item<float>(), min(row_vars).item<float>(),
        max(row_vars).item<float>());
    std::cout
        << "(A fresh LayerNorm's gain is 1 and its shift 0; GPT-2's learned ln_1 scales and\n"
           "shifts each column, so its rows are not mean 0, variance 1: lesson 25 shows them.)\n";

    lesson::banner("2. One head: q, k, v of 64 from 768");
    MultiHeadAttention attn(C, H, {.causal = true});  // q, k, v, o: 768 x 768 each (all heads)
    // Head 0's slice of the fused projections: rows 0..63 of W_q, W_k, W_v (torch's Linear
    // stores weight as (out, in)), i.e. three 768 x 64 matrices.
    NoGradGuard no_grad;
    auto head_of = [&](nn::Linear& lin, int64_t head) {
      return add(matmul(h, transpose(narrow(lin.weight, 0, head * D, D), 0, 1)),
                 narrow(lin.bias, 0, head * D, D));  // (1, 12, 64)
    };
    const Tensor q0 = head_of(*attn.q, 0), k0 = head_of(*attn.k, 0), v0 = head_of(*attn.v, 0);
    std::printf("q, k, v of head 0: %s each\n", shape_str(q0.shape()).c_str());
    const Tensor scores = div(matmul(q0, transpose(k0, 1, 2)), 8.0f);  // sqrt(64)
    const Tensor masked = masked_fill(scores, logical_not(causal_mask(T)), -INFINITY);
    const Tensor weights = softmax(masked, -1);
    std::cout << "scores / 8, masked (rows 0-3 of 12, first 5 columns):\n"
              << narrow(narrow(select(masked, 0, 0), 0, 0, 4), 1, 0, 5)
              << "\nweights (the same corner):\n"
              << narrow(narrow(select(weights, 0, 0), 0, 0, 4), 1, 0, 5) << "\n";
    const Tensor z0 = matmul(weights, v0);  // (1, 12, 64): head 0's contextual vectors
    std::printf("contextual vectors of head 0: %s\n", shape_str(z0.shape()).c_str());

    lesson::banner("3. Twelve heads, concatenated, mixed by W_O");
    std::vector<Tensor> heads;
    for (int64_t hd = 0; hd < H; ++hd) {
      const Tensor qh = head_of(*attn.q, hd), kh = head_of(*attn.k, hd), vh = head_of(*attn.v, hd);
      const Tensor wh = softmax(masked_fill(div(matmul(qh, transpose(kh, 1, 2)), 8.0f),
                                            logical_not(causal_mask(T)), -INFINITY),
                                -1);
      heads.push_back(matmul(wh, vh));
    }
    const Tensor concat = cat(heads, -1);  // (1, 12, 768)
    const Tensor out = attn.o->forward(concat);
    std::printf("concat of 12 heads: %s; after W_O (768 x 768): %s\n",
                shape_str(concat.shape()).c_str(), shape_str(out.shape()).c_str());
    const double diff = max(abs(sub(out, attn(h)))).item<float>();
    std::printf("max |head by head - MultiHeadAttention(h)| = %.1e\n", diff);
    lesson::expect(diff < 1e-4, "twelve heads by hand equal the fused module");

    lesson::banner("4. Counting the weights");
    const int64_t per_layer = C * D * 3 * H, total = C * D * 3 * H * layers;
    std::printf(
        "per head: 3 matrices of 768 x 64 = %lld; per layer (12 heads): %lld;\n"
        "12 layers: 768 * 64 * 3 * 144 = %lld query/key/value weights\n",
        static_cast<long long>(C * D * 3), static_cast<long long>(per_layer),
        static_cast<long long>(total));
    lesson::expect(total == 21233664 && total == 12 * C * (3 * C),
                   "21,233,664 = 12 layers of GPT-2's fused c_attn (768 x 2,304)");
    lesson::expect(
        attn.q->weight.numel() + attn.k->weight.numel() + attn.v->weight.numel() == per_layer,
        "the module's q, k, v hold exactly one layer's share");
    lesson::exercises({"18.1 layer_norm_backward: dx, dw and db of LayerNorm",
                       "18.2 gelu_backward: GPT-2's tanh GELU, backward"});
    return lesson::finish();
  });
}
