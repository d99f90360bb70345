// test_join_matmul.cpp: cat/stack/split/chunk, gathering by index, and torch.matmul's shape
// rules against a naive triple loop in double.
#include "tests/testing.h"

namespace qkv {
namespace {

Tensor iota(const Shape& shape, double start = 0) {
  return raw::reshape(arange(start, start + static_cast<double>(shape_numel(shape))), shape);
}

TEST(Join, CatAndStack) {
  Tensor a = iota({2, 2}), b = iota({2, 1}, 10);
  EXPECT_TRUE(testing::tensor_near(raw::cat({a, b}, 1), {2, 3}, {0, 1, 10, 2, 3, 11}, 0));
  EXPECT_TRUE(testing::tensor_near(raw::cat({a, a}, 0), {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3}, 0));
  Tensor s = raw::stack({iota({3}), iota({3}, 5)}, 1);
  EXPECT_TRUE(testing::tensor_near(s, {3, 2}, {0, 5, 1, 6, 2, 7}, 0));
  EXPECT_EQ(raw::stack({a, a, a}).shape(), (Shape{3, 2, 2}));
}

TEST(Join, SplitAndChunkAreViews) {
  Tensor a = iota({5, 2});
  auto parts = raw::split(a, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].shape(), (Shape{1, 2}));
  EXPECT_TRUE(parts[1].shares_storage(a));
  EXPECT_EQ(parts[1].at({0, 0}), 4.0f);
  auto chunks = raw::chunk(iota({6}), 4);  // ceil(6 / 4) = 2 per chunk: 3 chunks, as torch
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2].to_vector(), (std::vector<float>{4, 5}));
  auto cols = raw::chunk(iota({2, 6}), 3, -1);
  EXPECT_EQ(raw::contiguous(cols[1]).to_vector(), (std::vector<float>{2, 3, 8, 9}));
}

TEST(Join, IndexSelectAndEmbedding) {
  Tensor w = iota({4, 3});
  Tensor ids = from_vector(std::vector<int64_t>{2, 0, 2}, {3});
  EXPECT_TRUE(
      testing::tensor_near(raw::index_select(w, 0, ids), {3, 3}, {6, 7, 8, 0, 1, 2, 6, 7, 8}, 0));
  EXPECT_TRUE(testing::tensor_near(raw::index_select(w, 1, ids), {4, 3},
                                   {2, 0, 2, 5, 3, 5, 8, 6, 8, 11, 9, 11}, 0));
  Tensor batch = from_vector(std::vector<int64_t>{3, 1, 0, 3}, {2, 2});  // (B, T)
  Tensor e = raw::embedding(w, batch);                                   // (B, T, C)
  EXPECT_EQ(e.shape(), (Shape{2, 2, 3}));
  EXPECT_TRUE(testing::tensor_near(e, {2, 2, 3}, {9, 10, 11, 3, 4, 5, 0, 1, 2, 9, 10, 11}, 0));
}

// A batch large enough to be copied on several threads: every row is its id's row of the
// weight, on 1 and 3 threads; a bad id anywhere, even the last, is the error before any copy.
TEST(Join, EmbeddingOfALargeBatchOnThreads) {
  const int64_t V = 50, C = 64, B = 16, T = 64;  // 65536 floats: over kParallelElements
  Generator g(5);
  const Tensor w = randn({V, C}, &g);
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < B * T; ++i) flat.push_back((i * 7 + 3) % V);
  const Tensor ids = from_vector(flat, {B, T});
  const auto wv = w.to_vector();
  std::vector<double> want;
  for (const int64_t id : flat)
    for (int64_t j = 0; j < C; ++j) want.push_back(wv[static_cast<size_t>(id * C + j)]);
  const int saved = num_threads();
  for (const int threads : {1, 3}) {
    set_num_threads(threads);
    EXPECT_TRUE(testing::tensor_near(raw::embedding(w, ids), {B, T, C}, want, 0.0)) << threads;
  }
  set_num_threads(saved);
  flat.back() = V;
  EXPECT_TRUE(testing::throws_error(
      [&] {
        raw::embedding(w, from_vector(flat, {B, T}));
      },
      {"embedding", "[0, 49]", "got 50"}));
}

// The oracle: C[b, i, j] = sum_k A[b, i, k] B[b, k, j] in double, on contiguous batches.
std::vector<double> naive_bmm(const Tensor& a, const Tensor& b) {
  const auto va = raw::contiguous(a).to_vector<double>(),
             vb = raw::contiguous(b).to_vector<double>();
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  int64_t batches = 1;
  for (int64_t d = 0; d + 2 < a.dim(); ++d) batches *= a.size(d);
  std::vector<double> c;
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += va[(t * M + i) * K + k] * vb[(t * K + k) * N + j];
        c.push_back(s);
      }
  return c;
}

struct MatmulCase {
  Shape a, b, out;
};

class Matmul : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(Matmul, FollowsTorchShapeRulesAndValues) {
  const MatmulCase& c = GetParam();
  Generator g(21);
  Tensor a = randn(c.a, &g), b = randn(c.b, &g);
  Tensor out = raw::matmul(a, b);
  ASSERT_EQ(out.shape(), c.out);
  // Build the oracle's operands: vectors become matrices, batch dims broadcast explicitly.
  Tensor a2 = a.dim() == 1 ? raw::unsqueeze(a, 0) : a;
  Tensor b2 = b.dim() == 1 ? raw::unsqueeze(b, 1) : b;
  Shape batch = broadcast_shapes(Shape(a2.shape().begin(), a2.shape().end() - 2),
                                 Shape(b2.shape().begin(), b2.shape().end() - 2));
  Shape sa = batch, sb = batch;
  sa.insert(sa.end(), a2.shape().end() - 2, a2.shape().end());
  sb.insert(sb.end(), b2.shape().end() - 2, b2.shape().end());
  EXPECT_TRUE(testing::values_near(
      out.to_vector<double>(), naive_bmm(raw::expand(a2, sa), raw::expand(b2, sb)), 1e-4, 1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Matmul,
    ::testing::Values(MatmulCase{{4}, {4}, {}},                           // dot
                      MatmulCase{{2, 3}, {3, 5}, {2, 5}},                 // matrix product
                      MatmulCase{{3}, {3, 5}, {5}},                       // vector @ matrix
                      MatmulCase{{2, 3}, {3}, {2}},                       // matrix @ vector
                      MatmulCase{{4, 2, 3}, {3, 5}, {4, 2, 5}},           // batch @ matrix
                      MatmulCase{{2, 1, 7, 3}, {5, 3, 2}, {2, 5, 7, 2}},  // broadcast batches
                      MatmulCase{{3}, {6, 3, 4}, {6, 4}},                 // vector @ batch
                      MatmulCase{{33, 1}, {1, 17}, {33, 17}},             // K = 1
                      MatmulCase{{0, 3}, {3, 4}, {0, 4}},                 // empty
                      MatmulCase{{7, 33}, {33, 129}, {7, 129}},           // awkward sizes
                      MatmulCase{{3, 5, 7, 33}, {33, 9}, {3, 5, 7, 9}},   // folded batch
                      MatmulCase{{6, 1, 9}, {9, 4}, {6, 1, 4}}));         // folded, M = 1

TEST(Matmul, TransposedOperandsAreReadThroughTheirStrides) {
  Generator g(4);
  Tensor q = randn({2, 6, 4}, &g), k = randn({2, 6, 4}, &g);
  Tensor scores = raw::matmul(q, raw::transpose(k, -2, -1));  // (2, 6, 6) = q k^T
  Tensor expected = raw::matmul(q, raw::contiguous(raw::transpose(k, -2, -1)));
  EXPECT_TRUE(testing::tensor_near(scores, expected, 1e-6));
}

// A weight shared by a batch is multiplied as one tall product (folding); these layouts must
// fold only when the batch rows really lie at one even stride, else run batch by batch.
TEST(Matmul, FoldedAndUnfoldableBatchesAgreeWithTheOracle) {
  Generator g(5);
  const Tensor w = randn({6, 5}, &g);
  const Tensor big = randn({4, 7, 9}, &g);
  const std::vector<Tensor> as = {
      raw::narrow(big, 2, 1, 6),                         // rows of stride 9: folds
      raw::narrow(raw::narrow(big, 2, 0, 6), 1, 2, 3),   // batches 63 apart, rows 9: no fold
      raw::transpose(randn({4, 6, 3}, &g), 1, 2),        // transposed rows: no fold
      raw::expand(randn({1, 3, 6}, &g), {4, 3, 6}),      // broadcast batch: no fold
      raw::narrow(raw::narrow(big, 2, 0, 6), 1, 0, 7)};  // a full-height slice: folds
  for (size_t i = 0; i < as.size(); ++i) {
    const Tensor& a = as[i];
    const Tensor wb = raw::expand(w, {a.size(0), 6, 5});
    EXPECT_TRUE(
        testing::values_near(raw::matmul(a, w).to_vector<double>(), naive_bmm(a, wb), 1e-4, 1e-5))
        << "case " << i;
    // And accumulate into an existing output.
    Tensor out = ones({a.size(0), a.size(1), 5});
    raw::matmul_out(a, w, out, true);
    std::vector<double> expected = naive_bmm(a, wb);
    for (double& e : expected) e += 1;
    EXPECT_TRUE(testing::values_near(out.to_vector<double>(), expected, 1e-4, 1e-5))
        << "case " << i;
  }
}

}  // namespace
}  // namespace qkv
