// Lesson 09: the SelfAttention module: lesson 07 for every word at once.
//
// What you will learn:
//   - the whole computation as matrices: Q = X W_query, K = X W_key, V = X W_value,
//     softmax(Q K^T / sqrt(d_k)) V, one row per word;
//   - that SelfAttention(3, 2, 4) under seed 123 holds lesson 06's weights (it draws them in
//     the same order) and that row 1 of its output is lesson 07's context vector;
//   - what simplified self-attention (no weights: softmax(X X^T / sqrt(d)) X) can and cannot do;
//   - that every qkv attention module is a few lines on one core,
//     attention::scaled_dot_product_attention.
// What comes before: lesson 07 (one context vector by hand).
// Run it: ./build/release/tutorials/09_self_attention_class
//         [--seed 123] [--d_out_kq 2] [--d_out_v 4]   (other values: an experiment)
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "attention/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4;
  lesson::Flags flags("09_self_attention_class",
                      "Self-attention as a module: the article's 6 x 4 output, and its gradients.");
  lesson::article_flags(flags, &seed, &d_out_kq, &d_out_v);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && d_out_kq == 2 && d_out_v == 4;
    const Tensor embedded_sentence = lesson::embedded_sentence();  // (6, 3)

    lesson::banner("1. Simplified self-attention: no trainable weights");
    // softmax(X X^T / sqrt(3)) X: every word is its own query, key and value.
    SimplifiedSelfAttention simple;
    const Tensor simple_out = simple(embedded_sentence);
    lesson::show("attention weights", simple.attention_weights);
    lesson::show("output", simple_out);
    std::cout << "A word's score with itself is its squared length |x|^2. That need not be the\n"
                 "row's largest score (x . y beats |x|^2 when y is longer and points the same\n"
                 "way): here the diagonal wins in rows 1 to 5, but row 0 ('Life', a short\n"
                 "vector) attends most to 'short' (0.2197). Nothing here can learn to do\n"
                 "better: there are no parameters. W_query, W_key and W_value are what make\n"
                 "attention trainable.\n";
    // The diagonal wins in rows 1 to 5 and loses in row 0, as the text says.
    const Tensor best = argmax(simple.attention_weights, -1);
    lesson::expect(best.to_vector<int64_t>() == std::vector<int64_t>{2, 1, 2, 3, 4, 5},
                   "each row's largest weight is where the text says");
    lesson::expect(simple.num_parameters() == 0, "the simplified version has no parameters");

    lesson::banner("2. SelfAttention(d_in=3, d_out_kq=" + std::to_string(d_out_kq) +
                   ", d_out_v=" + std::to_string(d_out_v) + ")");
    // >>> torch.manual_seed(123)
    // >>> sa = SelfAttention(d_in=3, d_out_kq=2, d_out_v=4)
    // >>> print(sa(embedded_sentence))
    manual_seed(static_cast<uint64_t>(seed));
    SelfAttention sa(3, d_out_kq,
                     d_out_v);  // New: W_query, W_key, W_value are Parameters inside a Module
    for (const auto& [name, p] : sa.named_parameters())
      std::cout << name << " " << shape_str(p.shape()) << "\n";
    const Tensor context = sa(embedded_sentence);
    lesson::show("sa(embedded_sentence)", context);
    std::cout << "Six context vectors of width d_out_v = " << d_out_v
              << ". Row 1 is the vector lesson 07\n"
                 "computed by hand for 'is' (with the same flags): the class does the same\n"
                 "arithmetic for all rows.\n";
    // PyTorch 1.13 prints these digits for the same lines (tools/gen_tutorial_reference.py).
    lesson::expect_prints(context,
                          "tensor([[-0.1564,  0.1028, -0.0763, -0.0764],\n"
                          "        [ 0.5313,  1.3607,  0.7891,  1.3110],\n"
                          "        [-0.3542, -0.1234, -0.2626, -0.3706],\n"
                          "        [ 0.0071,  0.3345,  0.0969,  0.1998],\n"
                          "        [ 0.1008,  0.4780,  0.2021,  0.3674],\n"
                          "        [-0.5296, -0.2799, -0.4107, -0.6006]])",
                          "the 6 x 4 output prints PyTorch 1.13's digits");
    // The article printed the same, but for one digit: -0.2627 at [2][2].
    const std::string article =
        "tensor([[-0.1564,  0.1028, -0.0763, -0.0764],\n"
        "        [ 0.5313,  1.3607,  0.7891,  1.3110],\n"
        "        [-0.3542, -0.1234, -0.2627, -0.3706],\n"
        "        [ 0.0071,  0.3345,  0.0969,  0.1998],\n"
        "        [ 0.1008,  0.4780,  0.2021,  0.3674],\n"
        "        [-0.5296, -0.2799, -0.4107, -0.6006]])";
    const std::vector<size_t> differ = lesson::differing_numbers(lesson::digits(context), article);
    if (lesson::article_values()) {
      const float edge = context.at({2, 2});
      std::printf(
          "The article printed -0.2627 at [2][2]; here it is %.8f, which prints as -0.2626.\n"
          "It lies %.1e from -0.26265, where rounding to 4 decimals changes: the same six\n"
          "products summed in another order (another build of PyTorch may order them\n"
          "differently) can land on the other side. Every other digit is the article's.\n",
          edge, std::fabs(edge + 0.26265f));
    }
    lesson::expect_article(differ == std::vector<size_t>{10} &&
                               std::fabs(context.at({2, 2}) + 0.26265f) < 1e-6f,
                           "23 of the 24 entries print the article's digits; entry [2][2] is "
                           "within 1e-6 of the rounding edge -0.26265 (the article: -0.2627)");
    lesson::expect_article(
        lesson::digits(select(context, 0, 1)) == "tensor([0.5313, 1.3607, 0.7891, 1.3110])",
        "row 1 is lesson 07's context_vector_2");

    lesson::banner("3. The weights it used");
    lesson::show("sa.attention_weights", sa.attention_weights);
    std::cout << "Every row sums to 1. Row 1 is lesson 07's attention_weights_2. Modules keep\n"
                 "the weights of their last forward pass for inspection (without history).\n";
    lesson::expect_article(lesson::digits(select(sa.attention_weights, 0, 1)) ==
                               "tensor([0.0386, 0.6870, 0.0204, 0.0840, 0.1470, 0.0229])",
                           "row 1 of the weights is attention_weights_2");
    const float worst_row = max(abs(sub(sum(sa.attention_weights, -1), 1.0f))).item<float>();
    lesson::expect(worst_row < 1e-6f, "every row of the weights sums to 1");

    lesson::banner("4. Gradients reach every weight matrix");
    backward(sum(context));
    lesson::show("grad(sa.W_query)", grad(sa.W_query));
    std::cout << "W_query gets a gradient only through the softmax: it changes which values are\n"
                 "mixed, not the values themselves. W_value gets one directly.\n";
    lesson::expect(
        grad(sa.W_query).defined() && grad(sa.W_key).defined() && grad(sa.W_value).defined(),
        "all three weight matrices receive gradients");
    return lesson::finish();
  });
}
