// exercise_milestones: your exercises running the real thing.
//
//   1. Your causal attention (12.1) in every block of lesson 16's tiny GPT, in the attention
//      core's place (GPT::set_attention). At step 0, on the first batch, every block's W_q and
//      W_k gradients must equal those of the same model with qkv's own attention (they reach
//      W_q and W_k only through your function's backward). Then it trains on the built-in
//      corpus: its validation loss must end below the bigram baseline's (lesson 05: what one
//      character predicts of the next).
//   2. Your decoding step (19.2) with the KV cache generates exactly the tokens that recomputing
//      the whole context for every token generates with qkv's own attention.
//
//   cmake --build --preset release --target exercise_milestones
//   ./build/release/tutorials/exercises/exercise_milestones
// Each prints its figure and ok or FAILED; the exit status is 0 when both pass. (Built a
// second time as exercise_milestones_solutions, on the reference solutions, for ctest.)
// `--steps N` trains milestone 1 for N steps instead of 400: a shorter run executes every line
// but has not had time to learn, so its check reports "skipped" (the sanitizer builds run it
// that way, as they do the training lessons: tutorials/CMakeLists.txt).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"
#include "tutorials/exercises/exercises.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

#ifdef QKV_MILESTONES_SOLUTIONS
namespace mine = qkv::exercises::solution;
constexpr const char* kProgram = "exercise_milestones_solutions";
#else
namespace mine = qkv::exercises;
constexpr const char* kProgram = "exercise_milestones";
#endif

// The bigram baseline: the validation cross-entropy of next-character counts from the training
// split (add-one smoothing), the best that one character can say about the next.
double bigram_val_loss(const TextSplit& split, int64_t V) {
  std::vector<double> counts(static_cast<size_t>(V * V), 1.0);
  const std::vector<int64_t> train = split.train.to_vector<int64_t>();
  for (size_t i = 0; i + 1 < train.size(); ++i)
    counts[static_cast<size_t>(train[i] * V + train[i + 1])] += 1;
  const std::vector<int64_t> val = split.val.to_vector<int64_t>();
  double loss = 0;
  for (size_t i = 0; i + 1 < val.size(); ++i) {
    double row = 0;
    for (int64_t b = 0; b < V; ++b) row += counts[static_cast<size_t>(val[i] * V + b)];
    loss -= std::log(counts[static_cast<size_t>(val[i] * V + val[i + 1])] / row);
  }
  return loss / static_cast<double>(val.size() - 1);
}

// The step-0 check of milestone 1: each block's W_q and W_k gradients with `mine` in the
// attention core's place against qkv's own, on the first training batch. "" when they agree.
std::string step0_gradients(const TextSplit& split, int64_t V, int64_t B, int64_t T) {
  const GPTConfig config{.vocab_size = V, .n_embd = 64, .n_head = 4, .n_layer = 2, .block = T};
  manual_seed(1337);
  GPT yours(config);
  yours.set_attention([](const Tensor& q, const Tensor& k, const Tensor& v) {
    return mine::causal_attention(q, k, v);
  });
  manual_seed(1337);
  GPT own(config);  // the same weights
  Generator g(1337);
  const Batch b = get_batch(split.train, T, B, g);
  for (GPT* m : {&yours, &own})
    backward(cross_entropy(view((*m)(b.x), {B * T, V}), view(b.y, {B * T})));
  double worst = 0;
  for (int64_t i = 0; i < config.n_layer; ++i)
    for (const char* which : {"q", "k"}) {
      auto weight = [&](const GPT& m) {
        const Block& block = m.block(i);
        return (which[0] == 'q' ? block.q : block.k)->weight;
      };
      const std::string name = "blocks." + std::to_string(i) + "." + which + ".weight";
      const Tensor want = grad(weight(own)), have = grad(weight(yours));
      if (!have.defined())
        return "no gradient reaches " + name +
               ": your causal_attention breaks the graph (write it with qkv's ops)";
      const double scale = max(abs(want)).item<float>(), diff = max(abs(have - want)).item<float>();
      if (!(diff <= 1e-3 * scale + 1e-7))
        return "the gradient of " + name + " differs from qkv's own attention's by " +
               std::to_string(diff) + " (its largest entry is " + std::to_string(scale) +
               "): your causal_attention's backward is not attention's";
      worst = std::max(worst, diff / scale);
    }
  std::printf(
      "  step 0: every block's W_q and W_k gradients are qkv's own attention's (largest "
      "relative difference %.1e): ok\n",
      worst);
  return "";
}

// Lesson 16's validation loss: 20 batches from a generator seeded 0.
double val_loss(GPT& m, const TextSplit& split, int64_t B, int64_t T) {
  NoGradGuard no_grad;
  Generator g(0);
  double total = 0;
  for (int i = 0; i < 20; ++i) {
    const Batch b = get_batch(split.val, T, B, g);
    total +=
        cross_entropy(view(m(b.x), {B * T, m.config.vocab_size}), view(b.y, {B * T})).item<float>();
  }
  return total / 20;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t full_steps = 400;
  int64_t steps = full_steps;
  lesson::Flags flags(kProgram,
                      "Your exercises in the real thing: 12.1 trains the tiny GPT, 19.2 decodes.");
  flags.number("--steps", &steps, "training steps of milestone 1 (its check needs 400)", 1,
               10'000'000);
  return lesson::run(flags, argc, argv, [&] {
    const std::string text = lesson::builtin_corpus();
    const CharTokenizer tok(text);
    const TextSplit split = split_90_10(tok.encode(text));
    const int64_t V = tok.vocab_size(), B = 16, T = 32;
    int failures = 0;

    std::cout << "Milestone 1: the tiny GPT trained through your causal_attention (12.1)\n";
    try {
      const std::string wrong_gradients = step0_gradients(split, V, B, T);
      if (!wrong_gradients.empty()) {
        std::cout << "  FAILED at step 0: " << wrong_gradients << "\n";
        return 1;
      }
    } catch (const std::exception& e) {
      std::cout << "  FAILED at step 0: " << e.what() << "\n";
      return 1;
    }
    manual_seed(1337);
    GPT m(GPTConfig{.vocab_size = V, .n_embd = 64, .n_head = 4, .n_layer = 2, .block = T});
    m.set_attention([](const Tensor& q, const Tensor& k, const Tensor& v) {
      return mine::causal_attention(q, k, v);
    });
    nn::AdamW opt(m.parameters(), 1e-3);
    Generator g(1337);
    double loss = 0;
    try {
      for (int64_t step = 0; step < steps; ++step) {
        const Batch b = get_batch(split.train, T, B, g);
        const Tensor l = cross_entropy(view(m(b.x), {B * T, V}), view(b.y, {B * T}));
        loss = l.item<float>();
        opt.zero_grad();
        backward(l);
        opt.step();
      }
    } catch (const std::exception& e) {
      std::cout << "  FAILED: training stopped: " << e.what() << "\n";
      return 1;
    }
    const double ours = val_loss(m, split, B, T), bigram = bigram_val_loss(split, V);
    const bool learned = std::isfinite(ours) && ours < bigram, full_run = steps >= full_steps;
    const std::string verdict = !full_run ? "skipped (a shortened run; the check needs " +
                                                std::to_string(full_steps) + " steps)"
                                : learned ? "ok"
                                          : "FAILED";
    std::printf(
        "  after %lld steps: train loss %.4f, val_loss %.4f; the bigram baseline %.4f: %s\n",
        static_cast<long long>(steps), loss, ours, bigram, verdict.c_str());
    failures += full_run && !learned;

    std::cout << "Milestone 2: greedy decoding with the KV cache and your decode_step (19.2)\n";
    const SampleOptions greedy{.top_k = 1};
    const std::vector<int64_t> prompt = {split.val.to_vector<int64_t>()[0]};
    m.set_attention({});  // qkv's own attention, recomputing the context for every token
    Generator g1(7), g2(7);
    const std::vector<int64_t> reference =
        m.generate(prompt, 60, {.top_k = 1, .use_cache = false}, g1);
    m.set_attention([](const Tensor& q, const Tensor& k, const Tensor& v) {
      // The whole context at once (the prompt, or a full window): your causal attention;
      // one new token after the cached ones: your decoding step.
      return q.size(2) == k.size(2) ? mine::causal_attention(q, k, v) : mine::decode_step(q, k, v);
    });
    std::vector<int64_t> cached;
    try {
      cached = m.generate(prompt, 60, greedy, g2);
    } catch (const std::exception& e) {
      std::cout << "  FAILED: decoding stopped: " << e.what() << "\n";
      return 1;
    }
    int64_t same = 0;
    for (size_t i = 0; i < reference.size() && i < cached.size(); ++i)
      same += reference[i] == cached[i];
    const bool decoded = cached == reference;
    std::printf("  %lld of %zu tokens the same as recomputing every context: %s\n",
                static_cast<long long>(same), reference.size(), decoded ? "ok" : "FAILED");
    std::cout << "  " << tok.decode(cached) << "\n";
    failures += !decoded;
    return failures == 0 ? 0 : 1;
  });
}
