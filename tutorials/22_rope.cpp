// Lesson 22: RoPE against learned positions: where a token is, told by rotation.
//
// What you will learn:
//   - attention alone does not know word order: shuffle the keys and values together and the
//     output is the same. Lesson 16's GPT adds a learned vector per position (a table of
//     block rows), so it cannot read position block + 1 at all;
//   - RoPE (rotary position embedding; Llama, Qwen, Mistral) instead turns each pair of q's and
//     k's numbers by an angle proportional to the position: (x_i, x_{i+D/2}) at position t is
//     rotated by t * base^(-2i/D). Rotations keep lengths, and the dot product of q turned by
//     m with k turned by n depends only on m - n: the scores see relative positions;
//   - qkv's rope prints PyTorch's digits (the rotate_half code of Hugging Face's Llama);
//   - the same tiny GPT trained both ways on the same data: and then asked to read sequences
//     twice as long as it was trained on.
// What comes before: lessons 07 (scores), 16 (the tiny GPT and its position table).
// Run it: ./build/release/tutorials/22_rope [--steps 300]
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/corpus.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

namespace {

float dot(const Tensor& a, const Tensor& b) {
  return sum(mul(a, b)).item<float>();
}

struct Trained {
  double val_loss = 0;       // at the training length
  double val_loss_long = 0;  // at twice the training length (RoPE only)
};

// Mean cross-entropy of `batches` validation batches of length T (a generator seeded 0).
double evaluate(GPT& m, const Tensor& val, int64_t T, int64_t batch, int batches) {
  NoGradGuard no_grad;
  Generator gv(0);
  double total = 0;
  for (int i = 0; i < batches; ++i) {
    const Batch b = get_batch(val, T, batch, gv);
    const Tensor logits = m(b.x);
    total += cross_entropy(view(logits, {batch * T, m.config.vocab_size}), view(b.y, {batch * T}))
                 .item<float>();
  }
  return total / batches;
}

Trained train(GPTConfig config, const TextSplit& split, int64_t steps) {
  const int64_t batch = 16;
  manual_seed(1337);
  GPT m(config);
  nn::AdamW opt(m.parameters(), 1e-3);
  Generator g(1337);
  for (int64_t step = 0; step < steps; ++step) {
    const Batch b = get_batch(split.train, config.block, batch, g);
    const Tensor loss = cross_entropy(view(m(b.x), {batch * config.block, config.vocab_size}),
                                      view(b.y, {batch * config.block}));
    opt.zero_grad();
    backward(loss);
    opt.step();
  }
  Trained t;
  t.val_loss = evaluate(m, split.val, config.block, batch, 10);
  if (config.rope)
    t.val_loss_long = evaluate(m, split.val, 2 * config.block, batch, 10);
  else {
    try {  // the table has `block` rows: position block does not exist
      evaluate(m, split.val, 2 * config.block, batch, 1);
    } catch (const Error& e) {
      std::cout << "learned positions at T = " << 2 * config.block << ": " << e.what() << "\n";
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int64_t kFullRun = 300;
  int64_t steps = kFullRun;
  lesson::Flags flags("22_rope",
                      "RoPE against learned positions: scores that depend only on distance.");
  flags.number("--steps", &steps, "training steps per model (the lesson's checks need 300)", 1,
               10'000'000);
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. Attention alone does not know word order");
    {
      // One query against 6 keys and values; then the same keys and values in another order.
      Generator g(21);
      const Tensor q = randn({1, 4}, &g), k = randn({6, 4}, &g), v = randn({6, 3}, &g);
      const Tensor order = from_vector(std::vector<int64_t>{3, 0, 5, 1, 4, 2}, {6});
      const Tensor out = scaled_dot_product_attention(q, k, v).output;
      const Tensor shuffled =
          scaled_dot_product_attention(q, index_select(k, 0, order), index_select(v, 0, order))
              .output;
      lesson::show("output", out);
      lesson::show("output with the keys and values in the order 3 0 5 1 4 2", shuffled);
      lesson::expect(max(abs(out - shuffled)).item<float>() < 1e-6,
                     "the same output: the weights follow their keys, and a sum has no order");
    }

    lesson::banner("2. A rotation per position");
    // One pair (x_0, x_1) = (1, 0) turned by t * theta_0: the angle grows with t, the length
    // stays 1.
    std::printf("  position  angle   x_0      x_1      length\n");
    for (int t = 0; t < 5; ++t) {
      const Tensor r = rope(from_vector(std::vector<float>{1.0f, 0.0f}, {1, 2}), t, 4.0);
      // D = 2: theta_0 = base^0 = 1 radian per position, whatever the base.
      std::printf("  %8d  %5.2f  %7.4f  %7.4f  %.4f\n", t, t * 1.0, r.at({0, 0}), r.at({0, 1}),
                  std::sqrt(dot(r, r)));
    }
    std::cout << "With D = 2 there is one pair and theta_0 = base^0 = 1 radian per position; with\n"
                 "D = 64 the 32 pairs turn at 32 speeds, from 1 radian per position down to\n"
                 "base^(-62/64) (slow pairs tell far positions apart, fast ones near).\n";

    lesson::banner("3. RoPE of four positions, as PyTorch prints it");
    // >>> torch.manual_seed(0); x = torch.randn(4, 8)
    // >>> inv_freq = 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8))
    // >>> emb = torch.cat((torch.outer(torch.arange(4).float(), inv_freq),) * 2, dim=-1)
    // >>> x * emb.cos() + rotate_half(x) * emb.sin()
    manual_seed(0);
    const Tensor x = randn({4, 8});
    const Tensor xr = rope(x);
    lesson::show("rope(x)", xr);
    lesson::expect_prints(
        xr,
        "tensor([[-1.1258, -1.1524, -0.2506, -0.4339,  0.8487,  0.6920, -0.3160, -2.1152],\n"
        "        [ 0.0733, -1.3806,  0.3388,  0.3084,  0.3359,  1.1054,  1.1202, -0.2470],\n"
        "        [ 0.0184, -1.3532,  0.5734,  0.7898, -1.4792, -1.8610, -0.3300,  1.8546],\n"
        "        [-0.9387, -1.0281, -0.2017,  0.1860, -1.2696,  1.3425,  0.9407, -0.8431]])",
        "rope(x) prints PyTorch's digits (position 0 is left unturned)");

    lesson::banner("4. Scores see relative positions");
    // The same query and key placed at different positions m and n, with m - n = 2 always.
    Generator g(13);
    const Tensor q = randn({1, 16}, &g), k = randn({1, 16}, &g);
    const Tensor table = randn({128, 16}, &g);  // a learned-position table, as lesson 16's pos
    std::printf("  (m, n)      RoPE score   learned-position score\n");
    std::vector<float> rope_scores;
    for (auto [mq, nk] :
         {std::pair{2, 0}, std::pair{5, 3}, std::pair{40, 38}, std::pair{100, 98}}) {
      const float s_rope = dot(rope(q, mq), rope(k, nk));
      const float s_learned = dot(add(q, narrow(table, 0, mq, 1)), add(k, narrow(table, 0, nk, 1)));
      rope_scores.push_back(s_rope);
      std::printf("  (%3d, %3d)  %10.4f   %10.4f\n", mq, nk, s_rope, s_learned);
    }
    bool same = true;
    for (float s : rope_scores) same = same && std::fabs(s - rope_scores[0]) < 1e-4f;
    lesson::expect(same, "with RoPE the score depends only on m - n");
    lesson::expect(std::fabs(dot(rope(q, 7), rope(q, 7)) - dot(q, q)) < 1e-4f,
                   "a rotation keeps the length of q");

    lesson::banner("5. The same tiny GPT, learned positions vs RoPE");
    // Lesson 16's default model (C 64, 4 heads, 2 layers, block 32) on its built-in corpus,
    // `steps` AdamW steps of 16 sequences each; then evaluated on sequences of 64.
    const std::string text = lesson::builtin_corpus();
    const CharTokenizer tok(text);
    const TextSplit split = split_90_10(tok.encode(text));
    GPTConfig config{.vocab_size = tok.vocab_size()};
    const double untrained = std::log(static_cast<double>(config.vocab_size));
    const Trained learned = train(config, split, steps);
    config.rope = true;
    const Trained rotary = train(config, split, steps);
    std::printf("after %lld steps (untrained: ln(vocab) = %.3f)\n", static_cast<long long>(steps),
                untrained);
    std::printf("  learned positions: val_loss %.4f at T = 32, cannot run T = 64\n",
                learned.val_loss);
    std::printf("  RoPE:              val_loss %.4f at T = 32, %.4f at T = 64\n", rotary.val_loss,
                rotary.val_loss_long);
    const bool full = steps >= kFullRun;
    lesson::expect_learned(full,
                           learned.val_loss < untrained - 0.8 && rotary.val_loss < untrained - 0.8,
                           "both models learn (val_loss well below ln(vocab))");
    lesson::expect_learned(full, rotary.val_loss_long < untrained - 0.8,
                           "the RoPE model still predicts at twice its training length");
    std::cout << "RoPE has no position table: nothing to learn for positions (the learned model\n"
                 "spends block x C = 2048 parameters on them), and no last row to run out of.\n"
                 "Reading past the trained length is not free - the model never saw the angles of\n"
                 "distances beyond 31 - but it degrades instead of failing.\n";
    lesson::exercises({"22.1 rope_rotate: rotate each pair by its position's angle"});
    return lesson::finish();
  });
}
