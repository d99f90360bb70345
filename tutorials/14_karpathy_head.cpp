// Lesson 14: one head of masked self-attention over a batch, as in Andrej Karpathy's
// "Let's build GPT" (the digits checked here are those its gpt-dev notebook prints; article 001
// walks through the same lines without printing numbers).
//
// What you will learn:
//   - the video's third version of averaging the past, before anything is learned:
//     wei = softmax(masked zeros) gives every past token the same weight, so wei @ x is the
//     running average of x over time, computed by one matrix product (the video runs it on a
//     (4, 8, 2) x; here x is (4, 8, 32), the head's input);
//   - attention over a batch (B, T, C) = (4, 8, 32): key, query and value are Linear layers
//     without bias, created in that order after torch.manual_seed(1337);
//   - wei = q @ k^T is (B, T, T): every query against every key, for all 4 sequences at once;
//   - the tril mask makes row t see only tokens 0..t, so the 8 rows of one sequence are 8
//     training examples of "predict the next token from what came before", trained together;
//   - why the Head scales by head_size^-0.5.
// What comes before: lesson 12 (causal masking).
// Run it: ./build/release/tutorials/14_karpathy_head
//         [--seed 1337] [--batch 4] [--context_length 8] [--d_model 32] [--head_size 16]
//         (other values: an experiment)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "attention/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;
using namespace qkv::attention;

int main(int argc, char** argv) {
  int64_t seed = 1337, B = 4, T = 8, C = 32, head_size = 16;
  lesson::Flags flags("14_karpathy_head",
                      "Karpathy's masked self-attention head on a batch (B, T, C = 4, 8, 32).");
  flags.number("--seed", &seed, "seed of x and the head's weights (Karpathy's: 1337)", 0);
  flags.number("--batch", &B, "sequences B (Karpathy's: 4)", 1, 4096);
  flags.number("--context_length", &T, "positions T (Karpathy's: 8)", 1, 4096);
  flags.number("--d_model", &C, "channels C (Karpathy's: 32)", 1, 4096);
  flags.number("--head_size", &head_size,
               "width of the head's queries, keys and values (Karpathy's: 16)", 1, 4096);
  return lesson::run(flags, argc, argv, [&] {
    if (T < 3 || C < 4 || head_size < 4)
      flags.fail("--context_length must be at least 3, --d_model and --head_size at least 4 (the "
                 "lesson prints rows 0-2 and columns 0-3 of its results), got " +
                 std::to_string(T) + ", " + std::to_string(C) + " and " +
                 std::to_string(head_size));
    lesson::article_values() = seed == 1337 && B == 4 && T == 8 && C == 32 && head_size == 16;
    lesson::banner("1. A batch and three Linear layers");
    // >>> torch.manual_seed(1337)
    // >>> B, T, C = 4, 8, 32
    // >>> x = torch.randn(B, T, C)
    // >>> head_size = 16
    // >>> key = nn.Linear(C, head_size, bias=False)
    // >>> query = nn.Linear(C, head_size, bias=False)
    // >>> value = nn.Linear(C, head_size, bias=False)
    manual_seed(static_cast<uint64_t>(seed));
    const Tensor x = randn({B, T, C});
    nn::Linear key(C, head_size, /*bias=*/false), query(C, head_size, /*bias=*/false),
        value(C, head_size, /*bias=*/false);
    std::cout << "x " << shape_str(x.shape()) << ": " << B << " sequences of " << T << " tokens, "
              << C << " numbers each\n";

    lesson::banner("2. Before learning: every token averages its past");
    // >>> tril = torch.tril(torch.ones(T, T))
    // >>> wei = torch.zeros((T, T))                        # every pair equally interesting
    // >>> wei = wei.masked_fill(tril == 0, float('-inf'))  # except the future
    // >>> wei = F.softmax(wei, dim=-1)                     # row t: 1/(t+1) on tokens 0..t
    // >>> xbow = wei @ x                                   # (T, T) @ (B, T, C) -> (B, T, C)
    const Tensor uniform =
        softmax(masked_fill(zeros({T, T}), logical_not(causal_mask(T)), -INFINITY), -1);
    const Tensor xbow = matmul(uniform, x);
    lesson::show("wei", uniform);
    double off = 0;  // row t: 1/(t+1) on tokens 0..t, 0 after, for any T
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < T; ++j)
        off = std::max(off, std::fabs(uniform.at({t, j}) - (j <= t ? 1.0 / (t + 1) : 0.0)));
    lesson::expect(off < 1e-6, "softmax of masked zeros: row t is 1/(t+1) on tokens 0..t");
    lesson::show("xbow[0, :3, :4]", narrow(narrow(select(xbow, 0, 0), 0, 0, 3), 1, 0, 4));
    lesson::expect_prints(narrow(narrow(select(xbow, 0, 0), 0, 0, 3), 1, 0, 4),
                          "tensor([[ 0.1808, -0.0700, -0.3596, -0.9152],\n"
                          "        [-0.2412, -0.1606,  0.3253, -0.3968],\n"
                          "        [-0.4389,  0.0922,  0.1997, -0.2861]])",
                          "xbow[0, :3, :4] matches PyTorch");
    // The same by a loop: xbow[b, t] = mean(x[b, 0..t]).
    double worst = 0;
    for (int64_t t = 0; t < T; ++t) {
      const Tensor running_mean = mean(narrow(x, 1, 0, t + 1), 1);  // (B, C)
      worst =
          std::max<double>(worst, max(abs(sub(select(xbow, 1, t), running_mean))).item<float>());
    }
    std::printf("max |wei @ x - the running mean by a loop| = %.1e\n", worst);
    lesson::expect(worst < 1e-6, "one matrix product computes every token's average of its past");
    std::cout
        << "Equal weights cannot tell an interesting token from a dull one. The trainable head\n"
           "keeps the mask and the softmax and replaces the zeros with q . k: weights that\n"
           "depend on what the tokens are (here from random, untrained key and query layers).\n";

    lesson::banner("3. Scores for every pair, then the mask");
    // >>> k = key(x); q = query(x)                        # (B, T, 16)
    // >>> wei = q @ k.transpose(-2, -1)                   # (B, T, 16) @ (B, 16, T) -> (B, T, T)
    // >>> tril = torch.tril(torch.ones(T, T))
    // >>> wei = wei.masked_fill(tril == 0, float('-inf'))
    // >>> wei = F.softmax(wei, dim=-1)
    // >>> v = value(x); out = wei @ v
    const Tensor k = key(x), q = query(x), v = value(x);
    const AttentionOutput a = scaled_dot_product_attention(
        q, k, v,
        {.causal = true,  // the tril mask
         .scale = 1.0});  // the video's first self-attention has no scaling yet
    const Tensor wei0 = select(a.weights, 0, 0);
    std::cout << "out.shape: " << shape_str(a.output.shape()) << "\n";
    lesson::show("wei[0]", wei0);
    lesson::expect_prints(
        wei0,
        "tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.1574, 0.8426, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.2088, 0.1646, 0.6266, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.5792, 0.1187, 0.1889, 0.1131, 0.0000, 0.0000, 0.0000, 0.0000],\n"
        "        [0.0294, 0.1052, 0.0469, 0.0276, 0.7909, 0.0000, 0.0000, 0.0000],\n"
        "        [0.0176, 0.2689, 0.0215, 0.0089, 0.6812, 0.0019, 0.0000, 0.0000],\n"
        "        [0.1691, 0.4066, 0.0438, 0.0416, 0.1048, 0.2012, 0.0329, 0.0000],\n"
        "        [0.0210, 0.0843, 0.0555, 0.2297, 0.0573, 0.0709, 0.2423, 0.2391]])",
        "wei[0] is the matrix Karpathy's notebook prints");
    lesson::expect_prints(narrow(narrow(select(a.output, 0, 0), 0, 0, 2), 1, 0, 4),
                          "tensor([[-0.1571,  0.8801,  0.1615, -0.7824],\n"
                          "        [ 0.6764, -0.5477, -0.2478,  0.3143]])",
                          "out[0, :2, :4] matches PyTorch");

    lesson::banner("4. Reading wei[0] row by row");
    std::cout << "Row t is what token t sees when it predicts token t+1:\n"
                 "  row 0: only itself (1.0000): the first token has no past.\n";
    lesson::article_note(
        "  row 1: tokens 0 and 1; it puts more weight on token 1 (0.8426).\n"
        "  row 4: tokens 0..4, and 79% of its attention goes to itself.\n"
        "  row 7: all eight tokens; the weights spread over 3, 6 and 7.\n");
    std::cout
        << "Everything above the diagonal is exactly 0: a score of -inf became e^-inf = 0, so\n"
           "token t's output is a mix of values 0..t only, and its gradient never reaches a\n"
           "later token. That is why ONE matrix product q @ k^T trains all T predictions of a\n"
           "sequence at once: each row is its own honest example, computed in parallel, and the\n"
           "mask keeps any row from reading its own answer.\n";
    bool upper_zero = true;
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = i + 1; j < T; ++j) upper_zero = upper_zero && wei0.at({i, j}) == 0.0f;
    lesson::expect(upper_zero, "every weight above the diagonal is exactly 0");

    lesson::banner("5. Scaled attention: the Head module");
    // Variance: for unit-variance q and k (the video's randn demo), q . k sums head_size
    // products, so its variance is about head_size; multiplying by head_size^-0.5 brings it back
    // to ~1 whatever head_size is, and keeps the softmax from saturating into one-hot rows. (Here
    // q and k come from Linear layers, whose smaller outputs give scores of smaller variance, but
    // the scale still makes it independent of head_size.)
    manual_seed(static_cast<uint64_t>(seed));
    const Tensor x_again = randn({B, T, C});
    Head head(C, head_size);  // New: key, query, value inside a Module, scaled by 16^-0.5
    const Tensor out = head(x_again);
    lesson::show("head.attention_weights[0]", select(head.attention_weights, 0, 0));
    lesson::article_note(
        "The same rows, flatter: row 1 is now 0.3966 / 0.6034 instead of 0.1574 / 0.8426.\n");
    lesson::expect_article(
        lesson::digits(select(select(head.attention_weights, 0, 0), 0, 1)) ==
            "tensor([0.3966, 0.6034, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000])",
        "the scaled weights of row 1 match PyTorch (0.3966, 0.6034)");
    lesson::expect_prints(
        narrow(narrow(select(out, 0, 0), 0, 0, 2), 1, 0, 4),
        "tensor([[-0.1571,  0.8801,  0.1615, -0.7824],\n"
        "        [ 0.4397, -0.1423, -0.1316,  0.0029]])",
        "the head's out[0, :2, :4] matches PyTorch (row 0 is value 0 either way)");
    return lesson::finish();
  });
}
