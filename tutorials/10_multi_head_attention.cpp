// Lesson 10: multi-head attention, first as independent heads, then fused.
//
// What you will learn:
//   - several heads are several SelfAttention modules side by side, each with its own
//     W_query, W_key, W_value, so each can learn to look for something different; their
//     outputs are concatenated (MultiHeadAttentionWrapper);
//   - the fused form does the same with one projection per Q, K and V for all heads, splits the
//     heads with a view and a transpose, (T, H*D) -> (T, H, D) -> (H, T, D), and lets one
//     batched attention call serve every head;
//   - MultiHeadAttention(d_model, num_heads), what models use: the fused form plus an output
//     projection W_O that mixes the heads.
// What comes before: lesson 09 (the SelfAttention module).
// Run it: ./build/release/tutorials/10_multi_head_attention
//         [--seed 123] [--num_heads 4] [--d_out_kq 2] [--d_out_v 1]   (other values: an experiment)
#include <iostream>
#include <string>

#include "attention/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  int64_t seed = 123, num_heads = 4, d_out_kq = 2, d_out_v = 1;
  lesson::Flags flags(
      "10_multi_head_attention",
      "Multi-head attention: heads side by side, then fused by view and transpose.");
  flags.number("--seed", &seed, "seed of the embeddings and weights (the article's: 123)", 0);
  flags.number("--num_heads", &num_heads, "attention heads (the article's: 4)", 1, 1024);
  flags.number("--d_out_kq", &d_out_kq, "width of each head's queries and keys (the article's: 2)",
               1, 4096);
  flags.number("--d_out_v", &d_out_v, "width of each head's values (the article's: 1)", 1, 4096);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && num_heads == 4 && d_out_kq == 2 && d_out_v == 1;
    const std::string heads = std::to_string(num_heads);
    const Tensor embedded_sentence = lesson::embedded_sentence();  // (6, 3)

    lesson::banner("1. One head with d_out_v = " + std::to_string(d_out_v));
    // >>> torch.manual_seed(123)
    // >>> sa = SelfAttention(d_in=3, d_out_kq=2, d_out_v=1)
    manual_seed(static_cast<uint64_t>(seed));
    SelfAttention sa(3, d_out_kq, d_out_v);
    const Tensor one = sa(embedded_sentence);
    lesson::show("sa(embedded_sentence)", one);
    lesson::expect_prints(one,
                          "tensor([[-0.0185],\n        [ 0.4003],\n        [-0.1103],\n"
                          "        [ 0.0668],\n        [ 0.1180],\n        [-0.1827]])",
                          "one head of width 1 matches the article");

    lesson::banner("2. " + heads + " heads: MultiHeadAttentionWrapper(3, " +
                   std::to_string(d_out_kq) + ", " + std::to_string(d_out_v) +
                   ", num_heads=" + heads + ")");
    // >>> torch.manual_seed(123)
    // >>> mha = MultiHeadAttentionWrapper(d_in, d_out_kq, d_out_v, num_heads=4)
    // >>> context_vecs = mha(embedded_sentence)
    manual_seed(static_cast<uint64_t>(seed));
    MultiHeadAttentionWrapper mha(3, d_out_kq, d_out_v, num_heads);  // New: a ModuleList of heads
    const Tensor context_vecs = mha(embedded_sentence);
    lesson::show("context_vecs", context_vecs);
    std::cout << "context_vecs.shape: " << shape_str(context_vecs.shape()) << "\n";
    std::cout << "The first " << d_out_v
              << " column(s) are the single head above: the first head draws its\n"
                 "weights first, right after the seed, exactly as the lone SelfAttention did. The\n"
                 "other heads drew different weights and look at the sentence differently.\n";
    lesson::expect(lesson::digits(narrow(context_vecs, 1, 0, d_out_v)) == lesson::digits(one),
                   "the first head's columns are the single head's output");
    lesson::expect_prints(context_vecs,
                          "tensor([[-0.0185,  0.0170,  0.1999, -0.0860],\n"
                          "        [ 0.4003,  1.7137,  1.3981,  1.0497],\n"
                          "        [-0.1103, -0.1609,  0.0079, -0.2416],\n"
                          "        [ 0.0668,  0.3534,  0.2322,  0.1008],\n"
                          "        [ 0.1180,  0.6949,  0.3157,  0.2807],\n"
                          "        [-0.1827, -0.2060, -0.2393, -0.3167]])",
                          "the four heads' 6 x 4 output matches the article");

    lesson::banner("3. The same " + heads + " heads, fused");
    // Put the heads' weight matrices side by side: one (3, 4*2) W_query for all heads, etc.
    std::vector<Tensor> wq, wk, wv;
    for (int64_t h = 0; h < num_heads; ++h) {
      wq.push_back(mha.head(h)->W_query);
      wk.push_back(mha.head(h)->W_key);
      wv.push_back(mha.head(h)->W_value);
    }
    const int64_t T = 6, H = num_heads;
    const Tensor Q = matmul(embedded_sentence, cat(wq, 1));  // (6, 8): all heads' queries
    const Tensor K = matmul(embedded_sentence, cat(wk, 1));  // (6, 8)
    const Tensor V = matmul(embedded_sentence, cat(wv, 1));  // (6, 4)
    // New: split the heads. (T, H*D) -> view (T, H, D) -> transpose (H, T, D)
    auto split = [&](const Tensor& t) { return transpose(view(t, {T, H, t.size(1) / H}), 0, 1); };
    std::cout << "Q " << shape_str(Q.shape()) << " -> heads " << shape_str(split(Q).shape())
              << "\n";
    // One call attends in all four heads: the core treats H as a batch dim.
    const AttentionOutput a = scaled_dot_product_attention(split(Q), split(K), split(V));
    // (H, T, d_out_v) -> (T, H, d_out_v) -> (T, H * d_out_v): the heads side by side again.
    const Tensor fused = reshape(transpose(a.output, 0, 1), {T, H * d_out_v});
    lesson::show("fused", fused);
    lesson::expect(lesson::digits(fused) == lesson::digits(context_vecs),
                   "fusing the heads gives the wrapper's numbers");

    lesson::banner("4. MultiHeadAttention(d_model, num_heads), as models use it");
    // A batch of 2 sequences of 6 tokens of width C = 2 * num_heads: heads of width 2.
    manual_seed(0);
    std::cout << "(seed 0 and width C = 2 * num_heads here: of the flags, only --num_heads\n"
                 "changes this section)\n";
    const int64_t C = 2 * num_heads;
    MultiHeadAttention attn(C, num_heads);  // q, k, v, o: Linear(C, C) each, created in that order
    for (const auto& [name, p] : attn.named_parameters())
      std::cout << name << " " << shape_str(p.shape()) << "\n";
    const Tensor x = randn({2, 6, C});
    const Tensor y = attn(x);
    std::cout << "x " << shape_str(x.shape()) << " -> y " << shape_str(y.shape())
              << ", weights per head " << shape_str(attn.attention_weights.shape()) << "\n";
    std::cout << "(B, T, C) -> q, k, v (B, T, C) -> (B, T, H, D) -> (B, H, T, D) -> attention ->\n"
                 "(B, H, T, D) -> (B, T, C) -> o. The output projection o lets heads combine;\n"
                 "with bias off, o = I and each head's weights copied into its rows of q, k and\n"
                 "v, it equals a wrapper of heads of width C / H (tests/attention checks it to\n"
                 "1e-6).\n";
    lesson::expect(
        y.shape() == x.shape() && attn.attention_weights.shape() == Shape({2, num_heads, 6, 6}),
        "MultiHeadAttention keeps (B, T, C) and hands back (B, H, T, T) weights");
    lesson::exercises({"10.1 split_heads: (B, T, C) -> (B, H, T, D)",
                       "10.2 merge_heads: (B, H, T, D) -> (B, T, C)"});
    return lesson::finish();
  });
}
