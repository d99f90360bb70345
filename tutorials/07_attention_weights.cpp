// Lesson 07: attention weights and a context vector, by hand, for one query.
//
// What you will learn:
//   - the unnormalised attention weights omega: how well the second word's query matches each
//     word's key, a dot product each;
//   - a dot product read as similarity: |q| |k| cos(angle), the cosine (the direction) times
//     both lengths;
//   - why they are divided by sqrt(d_k) before the softmax (dot products of long vectors grow
//     large, and a softmax of large numbers is nearly one-hot, with vanishing gradients);
//   - the softmax turns them into weights that are positive and sum to 1;
//   - the context vector: the values averaged with those weights.
// The numbers are the article's (Raschka's), for the second word, embedded_sentence[1].
// Notebook 004 prints other numbers under the same names (omega_24 -0.5191, ...): its x_2 is
// embedded_sentence[2], the third word.
// What comes before: lesson 06 (queries, keys and values).
// Run it: ./build/release/tutorials/07_attention_weights
//         [--seed 123] [--d_out_kq 2] [--d_out_v 4]   (other values: an experiment)
#include <cmath>
#include <cstdio>
#include <iostream>

#include "nn/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;

int main(int argc, char** argv) {
  int64_t seed = 123, d_out_kq = 2, d_out_v = 4;
  lesson::Flags flags(
      "07_attention_weights",
      "The attention weights of one query, by hand: scores, scaling, softmax, context.");
  lesson::article_flags(flags, &seed, &d_out_kq, &d_out_v);
  return lesson::run(flags, argc, argv, [&] {
    lesson::article_values() = seed == 123 && d_out_kq == 2 && d_out_v == 4;
    // Lesson 06's setup: seed 123, then W_query, W_key, W_value from rand.
    const Tensor embedded_sentence = lesson::embedded_sentence();
    manual_seed(static_cast<uint64_t>(seed));
    const int64_t d_k = d_out_kq;
    const Tensor W_query = nn::Parameter(rand({3, d_out_kq}));
    const Tensor W_key = nn::Parameter(rand({3, d_out_kq}));
    const Tensor W_value = nn::Parameter(rand({3, d_out_v}));
    const Tensor query_2 = matmul(select(embedded_sentence, 0, 1), W_query);  // (2,)
    const Tensor keys = matmul(embedded_sentence, W_key);                     // (6, 2)
    const Tensor values = matmul(embedded_sentence, W_value);                 // (6, 4)

    lesson::banner("1. One unnormalised weight: omega_24");
    // >>> omega_24 = query_2.dot(keys[4])
    const Tensor omega_24 = matmul(query_2, select(keys, 0, 4));  // (2,) . (2,) -> ()
    lesson::show("omega_24", omega_24);
    std::cout << "How much does word 2 ('is') care about word 5 ('dessert')? query_2 . key_5.\n";
    lesson::expect_prints(omega_24, "tensor(1.2903)", "omega_24 = 1.2903");

    lesson::banner("2. All six: omega_2");
    // >>> omega_2 = query_2 @ keys.T
    const Tensor omega_2 = matmul(query_2, transpose(keys, 0, 1));  // (2,) @ (2, 6) -> (6,)
    lesson::show("omega_2", omega_2);
    lesson::article_note(
        "Entry 1 (3.4707) is the query against its own key: 'is' matches itself best.\n");
    lesson::expect_prints(omega_2, "tensor([-0.6004,  3.4707, -1.5023,  0.4991,  1.2903, -1.3374])",
                          "omega_2 matches the article");

    lesson::banner("3. A dot product is a similarity: direction times length");
    // >>> F.cosine_similarity(query_2.unsqueeze(0), keys, dim=1)
    // >>> keys.norm(dim=1)
    const Tensor key_lengths = sqrt(sum(keys * keys, 1));                           // (6,)
    const Tensor cosines = omega_2 / (sqrt(sum(query_2 * query_2)) * key_lengths);  // (6,)
    lesson::show("cosine(query_2, key_i)", cosines);
    lesson::show("|key_i|", key_lengths);
    std::cout << "omega = |q| |k| cos(angle): +1 where a key points the query's way, -1 the\n"
                 "opposite way, 0 at a right angle; then each is stretched by the key's length.\n";
    lesson::article_note(
        "'dessert' (entry 4) points almost exactly where 'is' does (cosine 0.9999, 'is' itself\n"
        "1.0000), yet its omega is 1.2903 against 3.4707: its key is shorter (0.6746 vs 1.8145).\n"
        "Here every key lies close to the query's line (each cosine is near +1 or -1), so the\n"
        "lengths decide much of the order.\n");
    lesson::expect_prints(cosines, "tensor([-0.9994,  1.0000, -0.9961,  0.9679,  0.9999, -0.9263])",
                          "the cosines match PyTorch's F.cosine_similarity");
    lesson::expect_prints(key_lengths, "tensor([0.3141, 1.8145, 0.7885, 0.2696, 0.6746, 0.7548])",
                          "the key lengths match keys.norm(dim=1)");

    lesson::banner("4. Scale by 1/sqrt(d_k), then softmax");
    // >>> attention_weights_2 = F.softmax(omega_2 / d_k**0.5, dim=0)
    const Tensor attention_weights_2 =
        softmax(omega_2 / static_cast<float>(std::sqrt(static_cast<double>(d_k))), 0);
    lesson::show("attention_weights_2", attention_weights_2);
    const float total = sum(attention_weights_2).item<float>();
    std::cout << "The weights sum to " << total << ": the softmax makes a probability\n"
              << "distribution over the six words. 'is' puts "
              << std::lround(100 * select(attention_weights_2, 0, 1).item<float>())
              << "% of its attention on itself.\n"
              << "Without the 1/sqrt(d_k) the largest weight would be "
              << max(softmax(omega_2, 0)).item<float>()
              << ": sharper, and a\nsharper softmax passes back smaller gradients.\n";
    lesson::expect_prints(attention_weights_2,
                          "tensor([0.0386, 0.6870, 0.0204, 0.0840, 0.1470, 0.0229])",
                          "attention_weights_2 matches the article");
    lesson::expect(std::fabs(total - 1.0f) < 1e-6f, "the weights sum to 1");

    lesson::banner("5. The context vector");
    // >>> context_vector_2 = attention_weights_2 @ values
    const Tensor context_vector_2 = matmul(attention_weights_2, values);  // (6,) @ (6, 4) -> (4,)
    lesson::show("context_vector_2", context_vector_2);
    std::cout << "A weighted average of the six value vectors, each taken as much as its weight.\n";
    lesson::article_note("Here mostly value_2 (weight 0.687), with a little of the others.\n");
    std::cout << "This vector is the new representation of 'is', informed by the words it\n"
                 "attended to.\n";
    lesson::expect_prints(context_vector_2, "tensor([0.5313, 1.3607, 0.7891, 1.3110])",
                          "context_vector_2 matches the article");
    lesson::exercises({"07.1 softmax_rows: softmax that cannot overflow"});
    return lesson::finish();
  });
}
