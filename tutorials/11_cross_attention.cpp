// Lesson 11: cross-attention: queries from one sequence, keys and values from another.
//
// What you will learn:
//   - the only change from self-attention: Q comes from x_1, K and V from x_2;
//   - the two sequences may have different lengths (6 and 8 here): the weights are 6 x 8, and
//     there is one output per token of x_1;
//   - where it is used: a decoder reading an encoder (translation, the article's first
//     example); an image reading a prompt (Stable Diffusion, its second: in Stable Diffusion the
//     queries come from the image's features, the keys and values from the text). The example
//     here is a sentence (x_1) reading 8 rows of another input (x_2): the mechanism is the same
//     whichever side asks;
//   - which side gives the queries: the sequence that asks, the one that gets an output per
//     token. The article's CrossAttention takes them from x_1 and prints a 6 x 4 result;
//     notebook 004, a reader's notebook of the same code, takes them from x2 instead and prints
//     8 x 4. Both run here, with the same weights, and both printouts are checked;
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
  lesson::article_flags(flags, &seed, &d_out_kq, &d_out_v);
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
                          "the 6 x 4 output matches the article's printout");
    lesson::expect(crossattn.attention_weights.shape() == Shape({6, second_length}),
                   "the weights are 6 x " + std::to_string(second_length));
    std::cout << "Which side gives the queries is the side that gets the outputs: 6 rows, one per\n"
                 "word of x_1.\n";
    lesson::expect(context_vectors.size(0) == first_input.size(0),
                   "one output per query: as many rows as x_1, whatever x_2's length");

    lesson::banner("3. Notebook 004's version: the queries from x2");
    // Notebook 004 (a reader's notebook of the article's code) writes its forward as
    // >>> queries = x2 @ self.w_query
    // >>> keys = x1 @ self.w_key; values = x1 @ self.w_value
    // with the same weights and the same second input (x1 = embedded_sentence, x2 = the rand
    // above). qkv's CrossAttention takes the queries from its first argument, so the notebook's
    // cat(x1, x2) is crossattn(x2, x1) here: 8 queries against 6 keys.
    lesson::show("x2", second_input);
    const Tensor notebook = crossattn(second_input, first_input);  // New: the sides swapped
    lesson::show("context_vecs (queries from x2)", notebook);
    std::cout << "Output shape: " << shape_str(notebook.shape()) << ": one row per row of x2 now,\n"
              << "each a mix of the sentence's six values.\n";
    lesson::expect_prints(second_input,
                          "tensor([[0.2745, 0.6584, 0.2775],\n"
                          "        [0.8573, 0.8993, 0.0390],\n"
                          "        [0.9268, 0.7388, 0.7179],\n"
                          "        [0.7058, 0.9156, 0.4340],\n"
                          "        [0.0772, 0.3565, 0.1479],\n"
                          "        [0.5331, 0.4066, 0.2318],\n"
                          "        [0.4545, 0.9737, 0.4606],\n"
                          "        [0.5159, 0.4220, 0.5786]])",
                          "x2 matches notebook 004's printout");
    lesson::expect_prints(notebook,
                          "tensor([[0.2628, 0.7515, 0.3963, 0.6775],\n"
                          "        [0.3689, 0.9600, 0.5367, 0.9030],\n"
                          "        [0.4914, 1.2517, 0.7219, 1.2023],\n"
                          "        [0.4381, 1.1187, 0.6384, 1.0672],\n"
                          "        [0.0906, 0.4545, 0.1880, 0.3441],\n"
                          "        [0.2374, 0.7029, 0.3635, 0.6248],\n"
                          "        [0.4167, 1.0701, 0.6070, 1.0166],\n"
                          "        [0.3376, 0.8998, 0.4955, 0.8371]])",
                          "the 8 x 4 output matches notebook 004's printout");
    lesson::expect(notebook.size(0) == second_input.size(0),
                   "queries from x2: as many output rows as x2 has");

    lesson::banner("4. Cross-attention of a sequence with itself is self-attention");
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
