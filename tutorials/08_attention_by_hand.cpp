// Lesson 08: attention by hand, as Tom Yeh's "AI by Hand" exercises draw it, and as Srijanie
// Dey's "Deep Dive into Self-Attention by Hand" (Towards Data Science, 2024) walks through it.
//
// What you will learn: the same attention as lessons 06-07 in the convention of the hand
// exercises, small enough to do with a pencil:
//   - features are columns: four tokens x1..x4, each a column of 6 numbers (X is 6 x 4);
//   - Q = W_Q X, K = W_K X, V = W_V X with small integer weights (3 x 6 each);
//   - the scores are K^T Q (4 x 4): column j holds query j against every key, so the softmax
//     runs down each column, and the output Z = V A has one column per token;
//   - the shortcuts a pencil needs: e^x replaced by 3^x, and the division by sqrt(3) either done
//     the article's way, floor(s / 2) (halve and round down), or skipped (sqrt(3) taken as 1),
//     side by side with the exact numbers: they change the weights (skipping the division
//     sharpens every column; the article's floor makes some sharper and some flatter), but
//     neither changes which key a query likes most.
// The matrices are this lesson's own small integers in the article's shapes (X 6 x 4, W 3 x 6):
// the article's matrices are pictures, so its digits cannot be checked here; its method can.
// What comes before: lesson 07 (the weights by hand, in the rows convention).
// Run it: ./build/release/tutorials/08_attention_by_hand
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <iostream>
#include <vector>

#include "attention/all.h"
#include "tutorials/common/lesson.h"

using namespace qkv;

namespace {

Tensor matrix(std::initializer_list<std::initializer_list<float>> rows) {
  std::vector<float> v;
  int64_t r = 0, c = 0;
  for (const auto& row : rows) {
    c = static_cast<int64_t>(row.size());
    v.insert(v.end(), row.begin(), row.end());
    ++r;
  }
  return from_vector(v, {r, c});
}

// Column-wise softmax with a given base: w_ij = b^(s_ij) / sum_i b^(s_ij).
Tensor column_softmax(const Tensor& s, double base, double divide_by) {
  const int64_t R = s.size(0), C = s.size(1);
  std::vector<float> w(static_cast<size_t>(R * C));
  for (int64_t j = 0; j < C; ++j) {
    double total = 0;
    for (int64_t i = 0; i < R; ++i) total += std::pow(base, s.at({i, j}) / divide_by);
    for (int64_t i = 0; i < R; ++i)
      w[static_cast<size_t>(i * C + j)] =
          static_cast<float>(std::pow(base, s.at({i, j}) / divide_by) / total);
  }
  return from_vector(w, {R, C});
}

}  // namespace

int main(int argc, char** argv) {
  // Nothing here is random and the numbers are fixed: the only flag is --help.
  lesson::Flags flags(
      "08_attention_by_hand",
      "Attention by hand, AI by Hand's way: features as columns, the pencil shortcuts.");
  return lesson::run(flags, argc, argv, [&] {
    lesson::banner("1. Four tokens as columns, three small weight matrices");
    const Tensor X = matrix({{1, 0, 2, 1},  // 6 x 4: column t is token t
                             {0, 1, 1, 0},
                             {2, 1, 0, 0},
                             {0, 0, 1, 2},
                             {1, 0, 0, 1},
                             {0, 2, 1, 0}});
    const Tensor W_Q = matrix({{1, 0, 1, 0, 0, 0}, {0, 1, 0, 0, 1, 0}, {0, 0, 0, 1, 0, 1}});
    const Tensor W_K = matrix({{0, 1, 0, 0, 0, 1}, {1, 0, 0, 1, 0, 0}, {0, 0, 1, 0, 1, 0}});
    const Tensor W_V = matrix({{1, 0, 0, 0, 1, 0}, {0, 1, 1, 0, 0, 0}, {0, 0, 0, 1, 0, 1}});
    lesson::show("X (6 x 4)", X);
    lesson::show("W_Q", W_Q);

    lesson::banner("2. Q, K, V: one column per token");
    const Tensor Q = matmul(W_Q, X), K = matmul(W_K, X), V = matmul(W_V, X);
    lesson::show("Q = W_Q X", Q);
    lesson::show("K = W_K X", K);
    lesson::show("V = W_V X", V);

    lesson::banner("3. Scores K^T Q: column j is query j against the four keys");
    const Tensor S = matmul(transpose(K, 0, 1), Q);
    lesson::show("K^T Q", S);

    lesson::banner("4. Softmax down each column: by hand and exactly");
    const Tensor hand = column_softmax(S, 3.0, 1.0);  // 3^s, sqrt(3) taken as 1
    const Tensor exact = column_softmax(S, std::exp(1.0), std::sqrt(3.0));  // e^(s / sqrt(3))
    // New: the article's own shortcut for / sqrt(3): halve the score and round down.
    std::vector<float> halved = S.to_vector<float>();
    for (float& x : halved) x = std::floor(x / 2);
    const Tensor article = column_softmax(from_vector(halved, S.shape()), 3.0, 1.0);
    lesson::show("the article's method: 3^floor(s/2) / sum 3^floor(s/2)", article);
    lesson::show("by hand: 3^s / sum 3^s", hand);
    lesson::show("exact: e^(s/sqrt(3)) / sum e^(s/sqrt(3))", exact);
    // The same numbers from the library's core, in its row convention: queries are rows, so
    // transpose in and out.
    const Tensor core = attention::scaled_dot_product_attention(
                            transpose(Q, 0, 1), transpose(K, 0, 1), transpose(V, 0, 1))
                            .weights;  // (4 queries, 4 keys)
    lesson::expect(max(abs(sub(transpose(core, 0, 1), exact))).item<float>() < 1e-6,
                   "the exact column softmax is the core's weights, transposed");
    // Each column's largest weight under each method, and whether a shortcut keeps the exact
    // favourite key (the key with the largest exact weight is among the largest, ties allowed).
    std::printf("%-22s", "column (query)");
    for (int64_t j = 0; j < 4; ++j) std::printf("  %7lld", static_cast<long long>(j + 1));
    std::printf("\n");
    auto column_max = [](const Tensor& w, int64_t j) {
      float m = 0;
      for (int64_t i = 0; i < w.size(0); ++i) m = std::max(m, w.at({i, j}));
      return m;
    };
    auto keeps_favourite = [&](const Tensor& w) {
      bool keeps = true;
      for (int64_t j = 0; j < 4; ++j) {
        int64_t best = 0;
        for (int64_t i = 1; i < 4; ++i) best = exact.at({i, j}) > exact.at({best, j}) ? i : best;
        keeps = keeps && w.at({best, j}) == column_max(w, j);
      }
      return keeps;
    };
    int sharper = 0, flatter = 0, hand_sharper = 0;
    for (const auto& [name, w] : {std::pair<const char*, Tensor>{"largest exact", exact},
                                  {"largest 3^floor(s/2)", article},
                                  {"largest 3^s", hand}}) {
      std::printf("%-22s", name);
      for (int64_t j = 0; j < 4; ++j) std::printf("  %7.4f", column_max(w, j));
      std::printf("\n");
    }
    for (int64_t j = 0; j < 4; ++j) {
      sharper += column_max(article, j) > column_max(exact, j);
      flatter += column_max(article, j) < column_max(exact, j);
      hand_sharper += column_max(hand, j) > column_max(exact, j);
    }
    std::printf(
        "Skipping the division (3^s) makes %d of 4 columns sharper; the article's floor(s/2)\n"
        "makes %d sharper and %d flatter. Both keep each query's favourite key.\n",
        hand_sharper, sharper, flatter);
    lesson::expect(hand_sharper == 4, "skipping the division sharpens every column");
    lesson::expect(keeps_favourite(hand) && keeps_favourite(article),
                   "both shortcuts keep each query's favourite key (ties allowed)");
    const double off_article = max(abs(sub(article, exact))).item<float>();
    const double off_hand = max(abs(sub(hand, exact))).item<float>();
    std::printf("largest distance from the exact weights: floor(s/2) %.4f, sqrt(3) as 1 %.4f\n",
                off_article, off_hand);
    lesson::expect(off_article < off_hand,
                   "halving and rounding down stays closer to / sqrt(3) than skipping it");

    lesson::banner("5. The output Z = V A: each column a weighted mix of value columns");
    const Tensor Z_article = matmul(V, article), Z_hand = matmul(V, hand),
                 Z_exact = matmul(V, exact);
    lesson::show("the article's method, floor(s/2)", Z_article);
    lesson::show("sqrt(3) taken as 1", Z_hand);
    lesson::show("exact", Z_exact);
    const double gap_article = max(abs(sub(Z_article, Z_exact))).item<float>();
    const double gap = max(abs(sub(Z_hand, Z_exact))).item<float>();
    std::printf(
        "largest difference from exact: %.3f with floor(s/2), %.3f with sqrt(3) as 1. 3^s\n"
        "with no scaling is e^(1.10 s) where the exact softmax uses e^(0.58 s).\n",
        gap_article, gap);
    lesson::expect(gap_article < 1.0 && gap < 1.0,
                   "both pencil answers stay within 1 of the exact one in every entry");
    lesson::exercises({"08.1 attention: softmax(q k^T / sqrt(D)) v"});
    return lesson::finish();
  });
}
