// Lesson 12: causal attention: hiding the future, two ways that agree.
//
// What you will learn:
//   - why a language model must not look ahead: it is trained to predict word t+1 from words
//     0..t, and a peek at t+1 would let it cheat;
//   - method 1: softmax as usual, multiply by a lower-triangular mask of ones, renormalise
//     each row to sum to 1;
//   - method 2: set the future's scores to -inf before the softmax, where e^-inf = 0 hides
//     them in one step;
//   - that both give the same weights (and, lesson 13 shows, the same gradients), and why models
//     use the second: the article's reason, it is more efficient: one softmax, with no second
//     pass to renormalise;
//   - a slip in notebook 004 (a reader's notebook of the article's code): its -inf cell
//     forgets the 1/sqrt(d_k), and its weights (0.0168 / 0.9832 in row 1) are then not the
//     article's (0.0532 / 0.9468), whose cell scales;
//   - that "mask" means opposite things in two places: masked_fill fills where its mask is true
//     (what to hide), scaled_dot_product_attention attends where its mask is true (what to see).
// What comes before: lesson 09 (SelfAttention).
// Run it: ./build/release/tutorials/12_causal_attention
//         [--seed 123] [--d_out_kq 2] [--d_out_v 4]   (other values: an experiment)
#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include "attention/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4;
  lesson::Flags flags("12_causal_attention",
                      "Causal attention two ways, and the two meanings of \"mask\".");
  lesson::article_flags(flags, &seed, &d_out_kq, &d_out_v);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && d_out_kq == 2 && d_out_v == 4;
    const Tensor x = lesson::embedded_sentence();  // (6, 3)
    // >>> torch.manual_seed(123); W_query, W_key, W_value = rand(3, 2), rand(3, 2), rand(3, 4)
    manual_seed(static_cast<uint64_t>(seed));
    const Tensor W_query = nn::Parameter(rand({3, d_out_kq}));
    const Tensor W_key = nn::Parameter(rand({3, d_out_kq}));
    const Tensor W_value = nn::Parameter(rand({3, d_out_v}));
    const Tensor keys = matmul(x, W_key), queries = matmul(x, W_query), values = matmul(x, W_value);
    const float root_d = static_cast<float>(std::sqrt(static_cast<double>(d_out_kq)));

    lesson::banner("1. The scores and the ordinary weights");
    // >>> attn_scores = queries @ keys.T
    // >>> attn_weights = torch.softmax(attn_scores / d_out_kq**0.5, dim=1)
    const Tensor attn_scores = matmul(queries, transpose(keys, 0, 1));  // (6, 6)
    const Tensor attn_weights = softmax(attn_scores / root_d, 1);
    lesson::show("attn_scores", attn_scores);
    lesson::show("attn_weights", attn_weights);
    std::cout << "Row 0 ('Life') spreads its attention over all six words, including the five\n"
                 "that come after it. For next-word prediction that is cheating.\n";

    lesson::banner("2. Method 1: multiply by tril, then renormalise");
    // >>> mask_simple = torch.tril(torch.ones(block_size, block_size))
    // >>> masked_simple = attn_weights * mask_simple
    // >>> masked_simple_norm = masked_simple / masked_simple.sum(dim=1, keepdim=True)
    const Tensor mask_simple = tril(ones({6, 6}));
    const Tensor masked_simple = attn_weights * mask_simple;
    const Tensor masked_simple_norm = masked_simple / sum(masked_simple, 1, /*keepdim=*/true);
    lesson::show("mask_simple", mask_simple);
    lesson::show("masked_simple", masked_simple);
    lesson::show("masked_simple_norm", masked_simple_norm);
    {
      const std::vector<float> row = select(attn_weights, 0, 1).to_vector<float>();
      const std::vector<float> norm = select(masked_simple_norm, 0, 1).to_vector<float>();
      std::printf(
          "After zeroing the future, row 1 sums to %.4f + %.4f; dividing by that sum makes\n"
          "it a distribution again: %.4f and %.4f.\n",
          row[0], row[1], norm[0], norm[1]);
    }
    const std::string causal_weights =
        "tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.0532, 0.9468, 0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.3862, 0.1214, 0.4924, 0.0000, 0.0000, 0.0000],\n"
        "        [0.2232, 0.3242, 0.2078, 0.2449, 0.0000, 0.0000],\n"
        "        [0.1536, 0.3145, 0.1325, 0.1849, 0.2145, 0.0000],\n"
        "        [0.1973, 0.0247, 0.3102, 0.1132, 0.0751, 0.2794]])";
    lesson::expect_prints(masked_simple_norm, causal_weights, "method 1 matches the article");

    lesson::banner("3. Method 2: -inf before the softmax");
    // >>> mask = torch.triu(torch.ones(block_size, block_size), diagonal=1)
    // >>> masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    // >>> attn_weights = torch.softmax(masked / d_out_kq**0.5, dim=1)
    const Tensor mask = triu(ones({6, 6}, Dtype::boolean), 1);        // true above the diagonal
    const Tensor masked = masked_fill(attn_scores, mask, -INFINITY);  // New: -inf hides a score
    const Tensor causal = softmax(masked / root_d, 1);
    lesson::show("masked", masked);
    lesson::show("attn_weights", causal);
    std::cout << "e^-inf = 0, so the future gets weight exactly 0, and the softmax normalises\n"
                 "over the visible words only: no second step.\n";
    lesson::expect_prints(causal, causal_weights, "method 2 matches the article");
    lesson::expect(lesson::digits(causal) == lesson::digits(masked_simple_norm),
                   "both methods print the same weights");
    // A slip a reader of notebook 004 meets: its -inf cell leaves out the 1/sqrt(d_k).
    const Tensor unscaled = softmax(masked, 1);
    lesson::show("the same without / sqrt(d_k), rows 0-1", narrow(unscaled, 0, 0, 2));
    std::cout << "Notebook 004 (a reader's notebook of the article's code) runs this cell\n"
                 "without the scaling; the article's cell scales. "
              << (d_out_kq > 1 ? "Unscaled, the weights are sharper\n"
                                 "and no longer what method 1 gave: both methods must use the "
                                 "same scale.\n"
                               : "With --d_out_kq 1, sqrt(d_k) = 1\nand the two agree.\n");
    lesson::article_note(
        "Its row 1 reads 0.0168 / 0.9832 where the article's weights are "
        "0.0532 / 0.9468.\n");
    lesson::expect_article(lesson::digits(select(unscaled, 0, 1)) ==
                               "tensor([0.0168, 0.9832, 0.0000, 0.0000, 0.0000, 0.0000])",
                           "without the scaling, row 1 is the notebook's 0.0168 / 0.9832");

    lesson::banner("4. Two meanings of \"mask\"");
    // masked_fill's mask marks what to fill (hide): true above the diagonal. The mask of
    // scaled_dot_product_attention, like torch's attn_mask, marks the opposite: what each query
    // may see. causal_mask(6) is true on and below the diagonal: logical_not of the one above.
    const Tensor keep = causal_mask(6);  // New: a "may see" mask
    const AttentionOutput sdpa =
        scaled_dot_product_attention(queries, keys, values, {.mask = keep});
    lesson::show("causal_mask(6)", keep);
    lesson::expect(lesson::digits(sdpa.weights) == lesson::digits(causal),
                   "scaled_dot_product_attention with causal_mask gives method 2's weights");
    // The mistake this invites: handing attention the masked_fill mask. Nothing fails; each word
    // then sees only its future, and the last word, with nothing left to see, gets all zeros.
    const AttentionOutput wrong =
        scaled_dot_product_attention(queries, keys, values, {.mask = mask});
    lesson::show("weights with masked_fill's mask given by mistake", wrong.weights);
    lesson::expect(select(wrong.weights, 0, 0).to_vector<float>()[0] == 0.0f &&
                       max(select(wrong.weights, 0, 5)).item<float>() == 0.0f,
                   "the wrong mask hides 'Life' from itself and leaves the last word nothing");

    lesson::banner("5. The CausalAttention module, both ways");
    manual_seed(static_cast<uint64_t>(seed));
    CausalAttention by_inf(3, d_out_kq, d_out_v, CausalMasking::negative_infinity);
    manual_seed(static_cast<uint64_t>(seed));
    CausalAttention by_multiply(3, d_out_kq, d_out_v, CausalMasking::multiply_and_renormalise);
    const Tensor out_inf = by_inf(x), out_multiply = by_multiply(x);
    lesson::show("CausalAttention (-inf)", out_inf);
    const float max_diff = max(abs(sub(out_inf, out_multiply))).item<float>();
    std::cout << "largest difference between the methods: " << max_diff
              << " (rounding: method 1 divides by a row sum)\n";
    std::cout << "Row 0 of the output is value 0 itself: 'Life' can only see 'Life'.\n";
    lesson::expect(max_diff < 1e-6f, "the module's two methods agree to 1e-6");
    lesson::expect(lesson::digits(select(out_inf, 0, 0)) == lesson::digits(select(values, 0, 0)),
                   "the first word's output is its own value vector");
    lesson::exercises(
        {"12.1 causal_attention: -inf before the softmax",
         "12.2 causal_attention_renormalised: mask after the softmax, then renormalise"});
    return lesson::finish();
  });
}
