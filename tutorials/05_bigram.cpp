// Lesson 05: the bigram language model: the baseline every GPT must beat.
//
// What you will learn:
//   - the first model of Karpathy's "Let's build GPT": the next character depends only on the
//     current one. Its whole model is one table, nn.Embedding(V, V): row i holds the logits of
//     the character that follows character i;
//   - training it with the batches, loss and optimizer the GPT of lesson 16 will use (AdamW,
//     here at a learning rate of 1e-2, ten times lesson 16's: a table learns fast);
//   - that the trained table approaches what counting gives: the bigram of the training text's
//     pair counts, P(b | a) = (count(a b) + 1) / (count(a) + V) (add-one smoothing, so that no
//     pair has probability 0), measured on the same validation windows and on every pair;
//   - the number lesson 16 must beat: a bigram knows one character of context; the GPT sees 32.
// What comes before: lessons 03 (a training loop) and 04 (tokens and embeddings).
// Run it: ./build/release/tutorials/05_bigram [--steps 1500] [--seed 1337]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  int64_t steps = 1500, seed = 1337;
  lesson::Flags flags("05_bigram", "The bigram language model: the baseline a GPT must beat.");
  flags.number("--steps", &steps, "gradient-descent steps on the V x V table", 1, 10'000'000);
  flags.number("--seed", &seed, "seed of the table and of the batches (Karpathy's: 1337)", 0);
  return lesson::run(flags, argc, argv, [&] {
    const std::string text = lesson::builtin_corpus();
    const CharTokenizer tok(text);
    const TextSplit split = split_90_10(tok.encode(text));
    const int64_t V = tok.vocab_size(), block = 32, batch = 16;

    lesson::banner("1. The model is a table");
    // >>> self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)
    // >>> logits = self.token_embedding_table(idx)          # (B, T, V)
    manual_seed(static_cast<uint64_t>(seed));
    nn::Embedding table(V, V);
    std::printf("vocabulary %lld characters -> a %lld x %lld table, %lld parameters\n",
                static_cast<long long>(V), static_cast<long long>(V), static_cast<long long>(V),
                static_cast<long long>(V * V));
    // The loss of a table of logits (V, V) on one batch: row x's logits predict y.
    auto loss_with = [&](const Tensor& logits, const Batch& b) {
      return cross_entropy(view(embedding(logits, b.x), {batch * block, V}),
                           view(b.y, {batch * block}));
    };
    auto loss_of = [&](const Batch& b) { return loss_with(table.weight, b); };
    // Validation: 20 fixed batches (a generator seeded 0), as lesson 16 will draw them.
    auto val_loss_of = [&](const Tensor& logits) {
      NoGradGuard no_grad;
      Generator gv(0);
      double total = 0;
      for (int i = 0; i < 20; ++i)
        total += loss_with(logits, get_batch(split.val, block, batch, gv)).item<float>();
      return total / 20;
    };
    // ... and over every pair of the validation text.
    const std::vector<int64_t> val_ids = split.val.to_vector<int64_t>();
    auto every_pair_of = [&](const Tensor& logits) {
      NoGradGuard no_grad;
      const int64_t n = static_cast<int64_t>(val_ids.size()) - 1;
      const Tensor x = from_vector(std::vector<int64_t>(val_ids.begin(), val_ids.end() - 1), {n});
      const Tensor y = from_vector(std::vector<int64_t>(val_ids.begin() + 1, val_ids.end()), {n});
      return static_cast<double>(cross_entropy(embedding(logits, x), y).item<float>());
    };
    auto val_loss = [&] { return val_loss_of(table.weight); };
    const double untrained = val_loss();
    std::printf(
        "untrained: val_loss %.4f (uniform guessing would give ln V = %.4f; random\n"
        "  N(0, 1) logits are a little worse than uniform)\n",
        untrained, std::log(static_cast<double>(V)));

    lesson::banner("2. Training");
    nn::AdamW opt(table.parameters(), 1e-2);
    Generator g(static_cast<uint64_t>(seed));
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t step = 0; step < steps; ++step) {
      const Tensor loss = loss_of(get_batch(split.train, block, batch, g));
      opt.zero_grad();
      backward(loss);
      opt.step();
      if (step % 500 == 0 || step == steps - 1)
        std::printf("  step %5lld  loss %.4f\n", static_cast<long long>(step), loss.item<float>());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double trained = val_loss();
    std::printf("trained: val_loss %.4f (%lld steps, %.2f s)\n", trained,
                static_cast<long long>(steps), seconds);

    lesson::banner("3. What counting gives");
    // P(b | a) = (count(a b) + 1) / (count(a) + V) over the training text (add-one smoothing, so
    // a pair never seen in training does not get probability 0 on validation).
    const std::vector<int64_t> train_ids = split.train.to_vector<int64_t>();
    std::vector<double> counts(static_cast<size_t>(V * V), 1.0),
        rows(static_cast<size_t>(V), static_cast<double>(V));
    for (size_t i = 0; i + 1 < train_ids.size(); ++i) {
      counts[static_cast<size_t>(train_ids[i] * V + train_ids[i + 1])] += 1;
      rows[static_cast<size_t>(train_ids[i])] += 1;
    }
    // The counts as a table of logits: log P(b | a). Softmax of a row of log-probabilities is
    // the probabilities again, so the same loss function measures both tables.
    std::vector<float> log_p(counts.size());
    for (size_t i = 0; i < counts.size(); ++i)
      log_p[i] = static_cast<float>(std::log(counts[i] / rows[i / static_cast<size_t>(V)]));
    const Tensor counted_table = from_vector(log_p, {V, V});
    const double counted = val_loss_of(counted_table);
    std::printf(
        "                 the 20 validation batches   every validation pair\n"
        "trained table    %10.4f %26.4f\n"
        "counted bigram   %10.4f %26.4f\n",
        trained, every_pair_of(table.weight), counted, every_pair_of(counted_table));
    const bool full_run = steps >= 1500;  // the default's steps: what training achieves by then
    lesson::expect_learned(full_run, trained < untrained - 1.0,
                           "the bigram learns (val_loss down by more than 1)");
    lesson::expect_learned(full_run, std::fabs(trained - counted) < 0.05,
                           "on the same batches, gradient descent comes within 0.05 of counting");

    lesson::banner("4. A sample");
    // Each next character drawn from softmax(table[current]).
    Generator gs(static_cast<uint64_t>(seed));
    std::vector<int64_t> ids = {val_ids[0]};
    {
      NoGradGuard no_grad;
      for (int i = 0; i < 200; ++i) {
        const Tensor p = softmax(select(table.weight, 0, ids.back()), 0);
        const std::vector<float> probs = p.to_vector<float>();
        double u = gs.uniform_double(), cum = 0;
        int64_t next = V - 1;
        for (int64_t c = 0; c < V; ++c)
          if (u < (cum += probs[static_cast<size_t>(c)])) {
            next = c;
            break;
          }
        ids.push_back(next);
      }
    }
    std::cout << tok.decode(ids) << "\n";
    std::printf(
        "\nThe baseline: val_loss %.4f. Lesson 16's GPT, which sees 32 characters instead\n"
        "of 1, reaches about 0.31 on the same validation batches.\n",
        trained);
    lesson::exercises({"05.1 cross_entropy_backward: the loss's gradient, softmax minus one-hot"});
    return lesson::finish();
  });
}
