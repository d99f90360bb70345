// Lesson 11: cross-attention: queries from one sequence, keys and values from another.
//
// What you will learn:
//   - the only change from self-attention: Q comes from x_1, K and V from x_2;
//   - the two sequences may have different lengths (6 and 8 here): the weights are 6 x 8, and
//     there is one output per token of x_1;
//   - where it is used: a decoder reading an encoder (translation); an image reading a prompt
//     (Stable Diffusion, the article's example: the queries come from the image's features, the
//     keys and values from the text). The example here goes the other way round, a sentence
//     (x_1) reading 8 rows of another input (x_2): the mechanism is the same whichever side
//     asks;
//   - which side gives the queries: the sequence that asks, the one that gets an output per
//     token (x_1 here). Raschka's notebook swaps the two sides in one place; the code it runs,
//     like this lesson, takes queries from x_1 and keys and values from x_2;
//   - CrossAttention(x, x) is exactly self-attention.
// What comes before: lesson 09 (SelfAttention).
// Run it: ./build/release/tutorials/11_cross_attention
//         [--seed 123] [--d_out_kq 2] [--d_out_v 4] [--second_length 8]   (other values: an
//         experiment)
#include <iostream>
#include <string>

#include "attention/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4, second_length = 8;
  lesson::Flags flags("11_cross_attention",
                      "Cross-attention: queries from one sequence, keys and values from another.");
  flags.number("--seed", &seed, "seed of the embeddings and weights (the article's: 123)", 0);
  flags.number("--d_out_kq", &d_out_kq, "width of queries and keys (the article's: 2)", 1, 4096);
  flags.number("--d_out_v", &d_out_v, "width of values (the article's: 4)", 1, 4096);
  flags.number("--second_length", &second_length, "rows of the second input (the article's: 8)", 1,
               4096);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && d_out_kq == 2 && d_out_v == 4 && second_length == 8;
    const Tensor embedded_sentence = lesson::embedded_sentence();  // (6, 3)

    lesson::banner("1. The module, then a second input");
    // >>> torch.manual_seed(123)
    // >>> crossattn = CrossAttention(d_in=3, d_out_kq=2, d_out_v=4)   # weights drawn first
    // >>> first_input = embedded_sentence
    // >>> second_input = torch.rand(8, d_in)                          # then the second input
    manual_seed(static_cast<uint64_t>(seed));
    CrossAttention crossattn(3, d_out_kq, d_out_v);
    const Tensor first_input = embedded_sentence;
    const Tensor second_input = rand({second_length, 3});
    std::cout << "First input shape: " << shape_str(first_input.shape()) << "\n";
    std::cout << "Second input shape: " << shape_str(second_input.shape()) << "\n";

    lesson::banner("2. Six queries against " + std::to_string(second_length) + " keys");
    // >>> context_vectors = crossattn(first_input, second_input)
    const Tensor context_vectors = crossattn(first_input, second_input);  // New: two inputs
    lesson::show("context_vectors", context_vectors);
    std::cout << "Output shape: " << shape_str(context_vectors.shape()) << "\n";
    std::cout << "Weights shape: " << shape_str(crossattn.attention_weights.shape())
              << ": row i says how much word i of the sentence takes from each of the "
              << second_length
              << " rows\n"
                 "of the second input. The outputs look alike because the second input is\n"
                 "random noise: every word finds roughly the same mixture in it.\n";
    lesson::expect_prints(context_vectors,
                          "tensor([[0.4231, 0.8665, 0.6503, 1.0042],\n"
                          "        [0.4874, 0.9718, 0.7359, 1.1353],\n"
                          "        [0.4054, 0.8359, 0.6258, 0.9667],\n"
                          "        [0.4357, 0.8886, 0.6678, 1.0311],\n"
                          "        [0.4429, 0.9006, 0.6775, 1.0460],\n"
                          "        [0.3860, 0.8021, 0.5985, 0.9250]])",
                          "the 6 x 4 output matches the article");
    lesson::expect(crossattn.attention_weights.shape() == Shape({6, second_length}),
                   "the weights are 6 x " + std::to_string(second_length));
    std::cout << "Which side gives the queries is the side that gets the outputs: 6 rows, one per\n"
                 "word of x_1. (Raschka's notebook swaps the two sides in one place; its\n"
                 "CrossAttention code, like this one, takes the queries from x_1.)\n";
    lesson::expect(context_vectors.size(0) == first_input.size(0),
                   "one output per query: as many rows as x_1, whatever x_2's length");

    lesson::banner("3. Cross-attention of a sequence with itself is self-attention");
    manual_seed(static_cast<uint64_t>(seed));
    SelfAttention sa(3, d_out_kq, d_out_v);  // the same seed, the same draws, the same weights
    const Tensor self_out = sa(embedded_sentence);
    const Tensor cross_self = crossattn(embedded_sentence, embedded_sentence);
    lesson::show("crossattn(x, x)", cross_self);
    lesson::expect(lesson::digits(cross_self) == lesson::digits(self_out),
                   "CrossAttention(x, x) equals SelfAttention(x) (lesson 09's output)");
    lesson::exercises({"11.1 cross_attention: queries from x, keys and values from the memory"});
    return lesson::finish();
  });
}
