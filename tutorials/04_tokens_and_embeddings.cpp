// Lesson 04: from a sentence to vectors: tokens, a vocabulary, and an embedding table.
//
// What you will learn:
//   - how "Life is short, eat dessert first" becomes the integers 0, 4, 5, 2, 1, 3;
//   - what an Embedding is: a (vocab_size, d) table of trainable numbers, one row per token;
//   - that qkv, seeded like PyTorch, builds the very same 50,000 x 3 table, so the six vectors
//     printed here are the ones in Sebastian Raschka's "Understanding and Coding
//     Self-Attention, Multi-Head Attention, Causal-Attention, and Cross-Attention in LLMs".
// What comes before: lesson 01 (tensors, views, the random generator).
// Run it: ./build/release/tutorials/04_tokens_and_embeddings
//         [--seed 123] [--vocab_size 50000] [--embedding_dim 3]   (other values: an experiment)
#include <iostream>
#include <string>

#include "nn/all.h"
#include "tutorials/common/lesson.h"
#include "tutorials/common/sentence.h"

using namespace qkv;

int main(int argc, char** argv) {
  int64_t seed = 123, vocab_size = 50'000, embedding_dim = 3;
  lesson::Flags flags("04_tokens_and_embeddings",
                      "A sentence to token ids to embedding vectors (the article's seed 123).");
  flags.number("--seed", &seed, "seed of the embedding table (the article's: 123)", 0);
  flags.number("--vocab_size", &vocab_size, "rows of the embedding table (the article's: 50000)", 6,
               10'000'000);
  flags.number("--embedding_dim", &embedding_dim, "numbers per token (the article's: 3)", 1, 4096);
  return lesson::run(flags, argc, argv, [&] {
    if (vocab_size < 6) {
      std::cerr << "error: --vocab_size must be at least 6 (the sentence's words)\n";
      return 2;
    }
    lesson::article_values() = seed == 123 && vocab_size == 50'000 && embedding_dim == 3;

    lesson::banner("1. Words and a vocabulary");
    // >>> sentence = 'Life is short, eat dessert first'
    // >>> dc = {s: i for i, s in enumerate(sorted(sentence.replace(',', '').split()))}
    const std::vector<std::string> words = lesson::words(lesson::kSentence);
    const std::map<std::string, int64_t> dc = lesson::vocabulary(words);
    std::cout << "{";
    for (auto it = dc.begin(); it != dc.end(); ++it)
      std::cout << (it == dc.begin() ? "" : ", ") << "'" << it->first << "': " << it->second;
    std::cout << "}\n";
    std::cout << "Sorting puts 'Life' first: Python compares strings by code point (and so does\n"
                 "std::map here), and capital "
                 "letters come before lowercase ones. Each distinct word gets its rank.\n";
    lesson::expect(dc.at("Life") == 0 && dc.at("dessert") == 1 && dc.at("short") == 5,
                   "the dictionary is {'Life': 0, 'dessert': 1, 'eat': 2, 'first': 3, 'is': 4, "
                   "'short': 5}");

    lesson::banner("2. The sentence as token ids");
    // >>> sentence_int = torch.tensor([dc[s] for s in sentence.replace(',', '').split()])
    const Tensor sentence_int = lesson::token_ids(words, dc);
    std::cout << sentence_int << "\n";
    std::cout << "The model never sees letters, only these ids: 'Life' is 0, 'is' is 4, ...\n";
    lesson::expect(lesson::digits(sentence_int) == "tensor([0, 4, 5, 2, 1, 3])",
                   "sentence_int is [0, 4, 5, 2, 1, 3]");

    lesson::banner("3. An embedding table of " + std::to_string(vocab_size) + " x " +
                   std::to_string(embedding_dim));
    // >>> torch.manual_seed(123)
    // >>> embed = torch.nn.Embedding(50_000, 3)
    // >>> embedded_sentence = embed(sentence_int).detach()
    manual_seed(static_cast<uint64_t>(seed));
    nn::Embedding embed(vocab_size, embedding_dim);  // New: a table drawn from a standard normal
    const Tensor embedded_sentence = detach(embed(sentence_int));
    std::cout << embedded_sentence << "\n";
    std::cout << "shape " << shape_str(embedded_sentence.shape()) << "\n";
    std::cout << "Row t is row sentence_int[t] of the table: 'Life' -> row 0, 'is' -> row 4.\n"
                 "The table is a Parameter: training will move these rows so that words used\n"
                 "alike end up near each other. Here they are still random, but random in exactly\n"
                 "PyTorch's way: the same seed gives the same "
              << vocab_size * embedding_dim << " numbers.\n";
    lesson::expect_prints(embedded_sentence,
                          "tensor([[ 0.3374, -0.1778, -0.3035],\n"
                          "        [ 0.1794,  1.8951,  0.4954],\n"
                          "        [ 0.2692, -0.0770, -1.0205],\n"
                          "        [-0.2196, -0.3792,  0.7671],\n"
                          "        [-0.5880,  0.3486,  0.6603],\n"
                          "        [-1.1925,  0.6984, -1.4097]])",
                          "embedded_sentence prints the article's 6 x 3 numbers");
    // An embedding is a lookup: the second word's vector is row 4 of the table.
    lesson::expect(select(embedded_sentence, 0, 1).to_vector<float>() ==
                       select(embed.weight, 0, 4).to_vector<float>(),
                   "embedded_sentence[1] is embed.weight[4] ('is' has id 4)");
    return lesson::finish();
  });
}
