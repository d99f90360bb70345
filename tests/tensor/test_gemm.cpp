// test_gemm.cpp: every step of the GEMM ladder, and the production path, held to the naive
// oracle on awkward shapes, through transposed operands, with accumulation, and bit-identical
// on 1, 2 and 3 threads.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "tensor/gemm/kernel.h"
#include "tensor/gemm/plan.h"
#include "tests/testing.h"

namespace qkv {
namespace {

struct Step {
  const char* name;
  GemmFn fn;
};
const std::vector<Step> kSteps = {{"loop_order", gemm_loop_order},
                                  {"blocked", gemm_blocked},
                                  {"packed", gemm_packed},
                                  {"threaded", gemm_threaded},
                                  {"production", gemm}};

struct Dims {
  int64_t M, N, K;
};
// 1, 7, 33, 129, 257 and friends: none a multiple of MR = 6, NR (8, 16 or 32 by the build's
// kernel), MC = 96 or KC = 384, plus K = 1, empty products, a K that crosses a KC block
// boundary, M <= 4 (the few-rows path that reads B in place), K of 2 and 4 chunks of 1024 and
// more (with A transposed, the production GEMM sums those in K chunks, as for a weight
// gradient), one full tile over one KC block, and N = NR with M on both sides of 2 MC (a small
// product reads a row-major B of one micro-panel in place), at the build's own NR.
std::vector<Dims> dims() {
  const GemmBlocking g = gemm_blocking();
  return {{1, 1, 1},
          {7, 33, 129},
          {33, 7, 1},
          {129, 257, 33},
          {257, 129, 7},
          {g.MR, g.NR, g.KC},
          {97, 65, 385},
          {0, 5, 3},
          {5, 0, 3},
          {5, 3, 0},
          {1, 300, 800},
          {200, 1, 17},
          {4, 70, 33},
          {3, 129, 20},
          {33, 17, 2100},
          {9, 40, 4100},
          {50, g.NR, 700},
          {2 * g.MC, g.NR, 30},
          {2 * g.MC + 1, g.NR, 30}};
}
const std::vector<Dims> kDims = dims();

// Operands as (rows, cols) data with the given layout: transposed ones are stored K-major.
struct Operand {
  std::vector<float> data;
  MatrixRef ref;
};
Operand make(int64_t rows, int64_t cols, bool transposed, uint64_t seed) {
  Generator g(seed);
  Tensor t = randn({std::max<int64_t>(rows * cols, 1)}, &g);
  Operand o{t.to_vector(), {}};
  o.ref = transposed ? MatrixRef{o.data.data(), 1, rows} : MatrixRef{o.data.data(), cols, 1};
  return o;
}

class Ladder : public ::testing::TestWithParam<std::tuple<Step, Dims>> {};

TEST_P(Ladder, MatchesTheNaiveOracleInEveryLayout) {
  const auto& [step, d] = GetParam();
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool accumulate : {false, true}) {
        Operand a = make(d.M, d.K, ta, 1), b = make(d.K, d.N, tb, 2);
        const int64_t ldc = d.N + 3;  // C with a leading dimension wider than N
        Generator g(3);
        std::vector<float> start = randn({std::max<int64_t>(d.M * ldc, 1)}, &g).to_vector();
        std::vector<float> c = start, expected = start;
        step.fn(d.M, d.N, d.K, a.ref, b.ref, c.data(), ldc, accumulate);
        gemm_naive(d.M, d.N, d.K, a.ref, b.ref, expected.data(), ldc, accumulate);
        // Float sums in a different order differ by rounding: about K * eps * |terms|.
        const double tol = 1e-5 * (d.K + 1) * 4;
        EXPECT_TRUE(testing::values_near(std::vector<double>(c.begin(), c.end()),
                                         std::vector<double>(expected.begin(), expected.end()), tol,
                                         1e-5))
            << step.name << " M=" << d.M << " N=" << d.N << " K=" << d.K << " ta=" << ta
            << " tb=" << tb << " accumulate=" << accumulate;
        // Columns past N (the padding of ldc) are never touched.
        for (int64_t i = 0; i < d.M; ++i)
          for (int64_t j = d.N; j < ldc; ++j)
            ASSERT_EQ(c[i * ldc + j], start[i * ldc + j]) << step.name << " wrote past N";
      }
}

INSTANTIATE_TEST_SUITE_P(StepsTimesShapes, Ladder,
                         ::testing::Combine(::testing::ValuesIn(kSteps),
                                            ::testing::ValuesIn(kDims)),
                         [](const auto& info) {
                           const Dims& d = std::get<1>(info.param);
                           return std::string(std::get<0>(info.param).name) + "_" +
                                  std::to_string(d.M) + "x" + std::to_string(d.N) + "x" +
                                  std::to_string(d.K);
                         });

// The production GEMM planned for a CPU like this one but for `change` (its kernel, threads or
// tuning table), and run: how the tests put a kernel or a threshold of their own under it.
void planned_gemm(const GemmProblem& p, const std::function<void(GemmCpu&)>& change) {
  GemmCpu cpu = this_cpu();
  change(cpu);
  run_gemm(p, plan_gemm(p, cpu));
}

// Every micro-kernel this build has for its tile and this CPU can run (tensor/gemm/kernel.h: in an SSE
// build on a CPU with AVX2 and FMA, the SSE kernel and the AVX2 one chosen at run time), put in
// turn under the production GEMM, and step 5 with the fastest, against the naive oracle.
TEST(GemmKernels, EveryKernelThisCpuRunsMatchesTheOracle) {
  const auto& kernels = gemm_detail::runnable_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_STREQ(gemm_detail::fast_kernel().name, kernels.back().name);
  EXPECT_STREQ(gemm_kernel_name(), kernels.back().name);
  EXPECT_STREQ(this_cpu().kernel.name, kernels.back().name);
  for (const gemm_detail::FastKernel& kernel : kernels) {
    for (const Dims& d : kDims)
      for (int path : {0, 1})  // step 5 (the fastest kernel's), the production GEMM (this one)
        for (bool ta : {false, true}) {
          Operand a = make(d.M, d.K, ta, 11), b = make(d.K, d.N, !ta, 12);
          Generator g(13);
          std::vector<float> c = randn({std::max<int64_t>(d.M * d.N, 1)}, &g).to_vector();
          std::vector<float> expected = c;
          if (path == 0)
            gemm_threaded(d.M, d.N, d.K, a.ref, b.ref, c.data(), d.N, true);
          else
            planned_gemm({d.M, d.N, d.K, a.ref, b.ref, c.data(), d.N, true}, [&](GemmCpu& cpu) {
              cpu.kernel = kernel;
              cpu.tuning = gemm_detail::tuning_for(kernel);
            });
          gemm_naive(d.M, d.N, d.K, a.ref, b.ref, expected.data(), d.N, true);
          EXPECT_TRUE(testing::values_near(std::vector<double>(c.begin(), c.end()),
                                           std::vector<double>(expected.begin(), expected.end()),
                                           1e-5 * (d.K + 1) * 4, 1e-5))
              << kernel.name << (path ? " production" : " step 5") << " M=" << d.M << " N=" << d.N
              << " K=" << d.K << " ta=" << ta;
        }
  }
}

// The thread count changes who computes which tile, never how: bit-identical results.
TEST(GemmThreads, BitIdenticalOnOneTwoAndThreeThreads) {
  const int before = num_threads();
  auto check_threads = [](Dims d, bool a_transposed, uint64_t seed) {
    Operand a = make(d.M, d.K, a_transposed, seed), b = make(d.K, d.N, !a_transposed, seed + 1);
    std::vector<std::vector<float>> results;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      std::vector<float> c(d.M * d.N);
      gemm(d.M, d.N, d.K, a.ref, b.ref, c.data(), d.N, false);
      results.push_back(c);
    }
    EXPECT_EQ(results[0], results[1]) << "1 vs 2 threads, M=" << d.M << ", A^T " << a_transposed;
    EXPECT_EQ(results[0], results[2]) << "1 vs 3 threads, M=" << d.M << ", A^T " << a_transposed;
  };
  // M <= 4 (decoding) reads B in place, its columns handed out in pieces: any piece must give
  // the same bits, B's columns contiguous (x W^T, here) or its rows (below).
  for (Dims d : {Dims{257, 129, 385}, Dims{64, 1000, 50}, Dims{1000, 40, 70}, Dims{3, 4000, 100},
                 Dims{1, 2000, 768}})
    check_threads(d, false, 4);
  // A transposed, as in a weight gradient dY^T X: with the AVX2 and AVX-512 tiles read in place
  // while each k's values are at most 512 floats from the next (M <= 512 here), cut by rows
  // where M >= 2 N, else by columns; packed beyond that (and always with narrower tiles), cut
  // by rows where M >= N, else by columns.
  for (Dims d : {Dims{128, 512, 300}, Dims{300, 70, 200}, Dims{600, 70, 200}, Dims{520, 600, 64},
                 Dims{2, 3000, 200}})
    check_threads(d, true, 7);
  // ... and over K >= 2048, summed in K chunks: 2 (K = 2500, an odd cut at 1250), 4 (K = 4500)
  // and the most there are (K = 9000 still makes 4), whose count must not follow the threads;
  // on 3 threads, M = 9 has each of its 2 chunks cut into rows [0, 6) and [6, 9), a range of
  // 3 rows that must still give 1 thread's bits.
  for (Dims d : {Dims{130, 70, 2500}, Dims{7, 33, 4500}, Dims{50, 20, 9000}, Dims{9, 1000, 2100}})
    check_threads(d, true, 8);
  // Batched matmul too (the attention shapes split over batches, not rows).
  Generator g(6);
  Tensor q = randn({6, 40, 8}, &g), k = randn({6, 40, 8}, &g);
  std::vector<Tensor> outs;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    outs.push_back(raw::matmul(q, raw::transpose(k, -2, -1)));
  }
  EXPECT_TRUE(testing::tensor_equal(outs[0], outs[1]));
  EXPECT_TRUE(testing::tensor_equal(outs[0], outs[2]));
  // Decoding's attention products, one query per head against 50 cached keys: few-row
  // products, which are split over the heads from this size (gemm/plan.cpp, gemm_work), as dot
  // products with the keys (q k^T) and as rows of the values (p v).
  Tensor q1 = randn({12, 1, 64}, &g), k1 = randn({12, 50, 64}, &g), p1 = randn({12, 1, 50}, &g);
  std::vector<Tensor> scores, mixed;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    scores.push_back(raw::matmul(q1, raw::transpose(k1, -2, -1)));
    mixed.push_back(raw::matmul(p1, k1));
  }
  for (int i : {1, 2}) {
    EXPECT_TRUE(testing::tensor_equal(scores[0], scores[i])) << "1 vs " << i + 1 << " threads";
    EXPECT_TRUE(testing::tensor_equal(mixed[0], mixed[i])) << "1 vs " << i + 1 << " threads";
  }
  set_num_threads(before);
}

// The threaded tests below: C = 1 + A @ B on 1, 2 and 3 threads (the caller's count
// restored after), planned for this CPU as `change` has it, and a few entries of it against the
// dot product in double.
std::vector<std::vector<float>> on_one_two_three_threads(
    int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b,
    const std::function<void(GemmCpu&)>& change = [](GemmCpu&) {}) {
  const int before = num_threads();
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<float> c(static_cast<size_t>(M * N), 1.0f);
    planned_gemm({M, N, K, a.ref, b.ref, c.data(), N, /*accumulate=*/true}, change);
    results.push_back(c);
  }
  set_num_threads(before);
  return results;
}
// C = A @ B + bias, the bias added as the tiles are stored (gemm_epilogue, as Linear does), into
// a fresh C on 1, 2 and 3 threads (the caller's count restored after).
std::vector<std::vector<float>> with_bias_on_one_two_three_threads(
    int64_t M, int64_t N, int64_t K, const Operand& a, const Operand& b, const Operand& bias,
    const std::function<void(GemmCpu&)>& change = [](GemmCpu&) {}) {
  const int before = num_threads();
  std::vector<std::vector<float>> results;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    std::vector<float> c(static_cast<size_t>(M * N));
    planned_gemm({M, N, K, a.ref, b.ref, c.data(), N, false, {bias.data.data()}}, change);
    results.push_back(c);
  }
  set_num_threads(before);
  return results;
}
void spot_check(const std::vector<float>& c, int64_t N, int64_t K, const Operand& a,
                const Operand& b, const std::vector<std::pair<int64_t, int64_t>>& entries) {
  for (auto [i, j] : entries) {
    double dot = 1.0;
    for (int64_t k = 0; k < K; ++k) dot += static_cast<double>(a.ref.at(i, k)) * b.ref.at(k, j);
    EXPECT_NEAR(c[static_cast<size_t>(i * N + j)], dot, 1e-3 * (1 + std::fabs(dot)))
        << i << ", " << j;
  }
}

// Products of 2^31 multiply-adds and more share one packed B between threads; 1 thread runs the
// ordinary serial loops. Here the shared path starts at the product's own size (the tuning's
// shared_b_min_work: at the default sizes these products would take minutes under qemu). 601 x 401
// x 301 (awkward: not a multiple of MC, KC or NR; its 401 terms cross a KC block) takes both paths
// and must give the same bits, with A transposed 601 floats apart (packed, not read in place) and
// accumulating too. Spot-checked against the naive dot product on a few entries.
TEST(GemmThreads, SharedPackedBForLargeProductsIsBitIdentical) {
  const int64_t M = 601, K = 401, N = 301;
  const auto shared_b_from_here = [&](GemmCpu& cpu) { cpu.tuning.shared_b_min_work = M * N * K; };
  const Operand a = make(M, K, true, 7), b = make(K, N, false, 8);
  const std::vector<std::vector<float>> results =
      on_one_two_three_threads(M, N, K, a, b, shared_b_from_here);
  EXPECT_EQ(results[0], results[1]) << "1 vs 2 threads";
  EXPECT_EQ(results[0], results[2]) << "1 vs 3 threads";
  spot_check(results[1], N, K, a, b, {{0, 0}, {600, 300}, {317, 5}, {6, 299}});
}

// A row-major A is read in place, and so is a transposed one whose k steps are at most 512
// floats apart (with the AVX2 and AVX-512 tiles). With the shared packed B started at this
// size (as above; by default it starts at 2^31 multiply-adds), 98 x 700 x 771 (98 rows end in a
// short panel of 2, 771 columns in a short micro-panel, 700 terms cross a KC block), with A and B
// each row-major and transposed, must give the same bits on 1, 2 and 3 threads, and step 5's,
// which packs everything. Each thread owns a range of rows and may take chunks of the others'
// (whichever thread is free first), which must change no bits.
TEST(GemmThreads, SharedPackedBWithAInPlaceIsBitIdentical) {
  const int64_t M = 98, K = 700, N = 771;
  const auto shared_b_from_here = [&](GemmCpu& cpu) { cpu.tuning.shared_b_min_work = M * N * K; };
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      const Operand a = make(M, K, ta, 9), b = make(K, N, tb, 10);
      const std::vector<std::vector<float>> results =
          on_one_two_three_threads(M, N, K, a, b, shared_b_from_here);
      std::vector<float> step5(static_cast<size_t>(M * N), 1.0f);
      gemm_threaded(M, N, K, a.ref, b.ref, step5.data(), N, /*accumulate=*/true);
      EXPECT_EQ(results[0], results[1]) << "1 vs 2 threads, ta " << ta << ", tb " << tb;
      EXPECT_EQ(results[0], results[2]) << "1 vs 3 threads, ta " << ta << ", tb " << tb;
      EXPECT_EQ(results[1], step5) << "2 threads vs step 5, ta " << ta << ", tb " << tb;
      spot_check(results[1], N, K, a, b, {{0, 0}, {97, 770}, {49, 5}});
    }
  // With a bias added as the tiles are stored (Linear's epilogue, as GPT-2's products at
  // M = 512 use it): on 1, 2 and 3 threads, the bits of step 5's product with the bias added
  // afterwards.
  const Operand a = make(M, K, false, 16), b = make(K, N, true, 17), bias = make(1, N, false, 18);
  std::vector<float> then_added(static_cast<size_t>(M * N));
  gemm_threaded(M, N, K, a.ref, b.ref, then_added.data(), N, /*accumulate=*/false);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      then_added[static_cast<size_t>(i * N + j)] += bias.data[static_cast<size_t>(j)];
  const std::vector<std::vector<float>> with_bias =
      with_bias_on_one_two_three_threads(M, N, K, a, b, bias, shared_b_from_here);
  for (size_t t = 0; t < with_bias.size(); ++t)
    EXPECT_EQ(with_bias[t], then_added) << "with a bias, " << t + 1 << " threads";
}

// The checks of the two hand-out tests for one product (A transposed if ta, B if tb; operands
// drawn from `seed`): 1, 2 and 3 threads give the same bits as step 5 (C added to), near the
// naive sums at three entries; and with a bias added as the tiles are stored (A row-major, B
// transposed), the same bits on 1, 2 and 3 threads.
struct HandOutCase {
  int64_t M, N, K;
  bool ta, tb;
};
void expect_step_fives_bits(const HandOutCase& c, uint64_t seed) {
  const Operand a = make(c.M, c.K, c.ta, seed), b = make(c.K, c.N, c.tb, seed + 1);
  const std::vector<std::vector<float>> results = on_one_two_three_threads(c.M, c.N, c.K, a, b);
  std::vector<float> step5(static_cast<size_t>(c.M * c.N), 1.0f);
  gemm_threaded(c.M, c.N, c.K, a.ref, b.ref, step5.data(), c.N, /*accumulate=*/true);
  const std::string shape =
      std::to_string(c.M) + " x " + std::to_string(c.K) + " x " + std::to_string(c.N);
  EXPECT_EQ(results[0], results[1]) << "1 vs 2 threads, " << shape;
  EXPECT_EQ(results[0], results[2]) << "1 vs 3 threads, " << shape;
  EXPECT_EQ(results[1], step5) << "2 threads vs step 5, " << shape;
  spot_check(results[1], c.N, c.K, a, b, {{0, 0}, {c.M - 1, c.N - 1}, {c.M / 2, c.N / 2 + 3}});
}
void expect_same_bits_with_a_bias(int64_t M, int64_t N, int64_t K, uint64_t seed) {
  const Operand a = make(M, K, false, seed), b = make(K, N, true, seed + 1);
  const Operand bias = make(1, N, false, seed + 2);
  const std::vector<std::vector<float>> with_bias =
      with_bias_on_one_two_three_threads(M, N, K, a, b, bias);
  EXPECT_EQ(with_bias[0], with_bias[1]) << "with a bias, 1 vs 2 threads";
  EXPECT_EQ(with_bias[0], with_bias[2]) << "with a bias, 1 vs 3 threads";
}

// A product cut by rows whose packed B fits 4 MiB per thread gives each thread a range of rows
// and hands the pieces left to whichever thread is free (hand_out_rows in
// tensor/gemm/execute.cpp), each thread having packed every KC block of B once. Which thread takes
// which piece changes from run to run; the bits must not. On 1, 2 and 3 threads, and against step
// 5: several KC blocks (K = 900 is 384 + 384 + 132; K = 385 ends in a block of 1), a short last
// tile and a short micro-panel, A row-major (read in place) and transposed 1001 floats apart
// (packed), B both ways, C added to; and with a bias added as the tiles are stored.
TEST(GemmThreads, RowsHandedOutGiveStepFivesBits) {
  for (HandOutCase c :
       {HandOutCase{602, 128, 900, false, true}, HandOutCase{1001, 70, 800, true, false},
        HandOutCase{999, 33, 385, false, false}})
    expect_step_fives_bits(c, 11);
  expect_same_bits_with_a_bias(602, 128, 900, 13);
}

// A product cut by columns (fewer than twice as many rows as columns with A read in place, fewer
// rows than columns with A packed) gives each thread a range of micro-panels and hands the pieces
// left to whichever thread is free (hand_out_columns in tensor/gemm/execute.cpp), each piece a
// product of its own over all of A. On 1, 2 and 3 threads, and against step 5: a panel wider
// than two chunks of rows outer on 1 thread (N = 1500) whose pieces are not; a short last
// micro-panel (N = 333) and a KC block of 1 (K = 385); A transposed 600 floats apart (packed with
// the AVX-512 and AVX2 tiles), B both ways, C added to; and with a bias added as the tiles are
// stored. All below the size from which one packed B is shared.
TEST(GemmThreads, ColumnsHandedOutGiveStepFivesBits) {
  for (HandOutCase c :
       {HandOutCase{120, 1500, 400, false, false}, HandOutCase{100, 333, 385, false, true},
        HandOutCase{600, 1400, 300, true, false}})
    expect_step_fives_bits(c, 21);
  expect_same_bits_with_a_bias(100, 900, 500, 23);
}

// The two packing tests below: a product's sizes and how much wider than its rows or columns a
// transposed operand is stored, and A @ B into a fresh (M, N) C.
struct PackCase {
  int64_t M, N, K, pad;
};
std::vector<float> product(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B) {
  std::vector<float> c(static_cast<size_t>(M * N));
  gemm(M, N, K, A, B, c.data(), N, false);
  return c;
}

// Packing a transposed B (columns contiguous: x @ W^T, q k^T) goes through 8 x 8 transposes
// where whole blocks fit, and element by element elsewhere. Packing only moves floats, so the
// product must be the same bits as with the same B stored row-major: for widths that fill
// whole micro-panels and that do not, depths that are and are not multiples of 8, several KC
// blocks, a leading dimension wider than the column, and a strided view (every other column).
TEST(GemmPacking, TransposedBGivesTheSameBitsAsRowMajorB) {
  for (const PackCase c :
       {PackCase{7, 32, 8, 0}, PackCase{13, 64, 37, 3}, PackCase{30, 96, 385, 0},
        PackCase{6, 70, 9, 5}, PackCase{64, 64, 32, 320}, PackCase{20, 31, 800, 1}}) {
    Generator g(static_cast<uint64_t>(c.N * 1000 + c.K));
    const std::vector<float> a = randn({c.M * c.K}, &g).to_vector();
    const int64_t ld = c.K + c.pad;  // column j of B at bt[j * ld], its rows contiguous
    const std::vector<float> bt = randn({c.N * ld}, &g).to_vector();
    std::vector<float> b(static_cast<size_t>(c.K * c.N));  // the same B, row-major
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t j = 0; j < c.N; ++j) b[k * c.N + j] = bt[j * ld + k];
    const MatrixRef a_ref{a.data(), c.K, 1};
    EXPECT_EQ(product(c.M, c.N, c.K, a_ref, {bt.data(), 1, ld}),
              product(c.M, c.N, c.K, a_ref, {b.data(), c.N, 1}))
        << c.M << "x" << c.N << "x" << c.K << " pad " << c.pad;
    // And a view of every other column of bt (col_stride 2 ld), against its row-major copy.
    const int64_t half = c.N / 2;
    std::vector<float> b2(static_cast<size_t>(c.K * half));
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t j = 0; j < half; ++j) b2[k * half + j] = bt[2 * j * ld + k];
    EXPECT_EQ(product(c.M, half, c.K, a_ref, {bt.data(), 1, 2 * ld}),
              product(c.M, half, c.K, a_ref, {b2.data(), half, 1}))
        << "every other column, " << c.M << "x" << half << "x" << c.K;
  }
}

// The production GEMM reads a row-major A's short last panel (M not a multiple of MR) in
// place where the kernel computes only the rows it is given, and a small product's row-major B
// in place but for a short last micro-panel; step 5 packs both, with rows and columns of zeros.
// The kernel sees the same numbers in the same order either way, so the bits must be step 5's:
// 64^3 (a 4-row last panel, two whole panels of B at NR = 32), ragged rows and columns, an A
// of one short panel, more rows than one MC block, and a depth past a KC block (B packed, the
// short panel still in place), into a C wider than N, stored and accumulated.
TEST(GemmPacking, PanelsReadInPlaceGiveStepFivesBits) {
  const GemmBlocking blocks = gemm_blocking();
  for (const Dims c : {Dims{64, 64, 64}, Dims{61, 70, 33}, Dims{5, 3 * blocks.NR, 40},
                       Dims{13, 33, 7}, Dims{100, 64, 50}, Dims{64, 64, blocks.KC + 16}})
    for (bool accumulate : {false, true}) {
      Operand a = make(c.M, c.K, false, 21), b = make(c.K, c.N, false, 22);
      const int64_t ldc = c.N + 5;
      Generator g(23);
      const std::vector<float> start = randn({c.M * ldc}, &g).to_vector();
      std::vector<float> fast = start, step5 = start;
      gemm(c.M, c.N, c.K, a.ref, b.ref, fast.data(), ldc, accumulate);
      gemm_threaded(c.M, c.N, c.K, a.ref, b.ref, step5.data(), ldc, accumulate);
      EXPECT_EQ(fast, step5) << c.M << "x" << c.N << "x" << c.K << " accumulate " << accumulate;
    }
}

// One product three ways, for the tests that hold two ways of computing it to the same bits:
// plain (0), with a bias epilogue (1), and with a band (2), over A (M, K), row-major or
// transposed, and B (K, N) drawn from seed and seed + 1, and C starting from values (and the
// bias) drawn from seed + 2. For the band, A has exact zeros in the terms the band leaves out
// (row i of C needs k <= i + 3), as GemmBand asks: tiles of different rows leave out different
// terms, all of them zeros. run() computes it planned for this CPU as `change` has it.
struct ThreeProducts {
  int64_t M, N, K;
  bool ta, accumulate;
  Operand a, b;
  std::vector<float> banded, start, bias;
  ThreeProducts(int64_t M_, int64_t N_, int64_t K_, bool ta_, bool accumulate_, uint64_t seed)
      : M(M_),
        N(N_),
        K(K_),
        ta(ta_),
        accumulate(accumulate_),
        a(make(M, K, ta, seed)),
        b(make(K, N, false, seed + 1)),
        banded(a.data) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = i + 4; k < K; ++k) banded[ta ? i + k * M : i * K + k] = 0.0f;
    Generator g(seed + 2);
    start = randn({M * N}, &g).to_vector();
    bias = randn({N}, &g).to_vector();
  }
  std::vector<float> run(
      int which, const std::function<void(GemmCpu&)>& change = [](GemmCpu&) {}) const {
    std::vector<float> out = start;
    GemmProblem p{M, N, K, a.ref, b.ref, out.data(), N, accumulate};
    if (which == 1) p.epilogue = {bias.data()};
    if (which == 2) {
      p.A = {banded.data(), a.ref.row_stride, a.ref.col_stride};
      p.band = {GemmBand::up_to_row, 3};
    }
    planned_gemm(p, change);
    return out;
  }
  std::string where(int which, int threads) const {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + " ta " +
           std::to_string(ta) + " accumulate " + std::to_string(accumulate) + " on " +
           std::to_string(threads) + " threads, " +
           (which == 0   ? "plain"
            : which == 1 ? "bias"
                         : "band");
  }
};

// A wide tile (R x 2 NR, tensor/gemm/kernel.h: AVX-512's 6 x 64, or 4 x 64 where A is read in place
// on a Zen 4, and the SSE build's AVX2 kernel's 6 x 16) gives each element of C the
// multiply-adds of the ordinary MR x NR tile, in the same order, so the production GEMM must
// give the same bits with it and without it (planned with a copy of the kernel with no wide
// tile), and with its tiles over an A read in place of 4 rows and of MR, whichever
// this CPU takes: B read in place (small products) and packed (larger ones, threaded), every
// row count of the last panel (1 to 6 rows), widths that leave a narrow panel or a short packed
// one over, more rows than an MC block and terms past a KC block, A transposed (read in place,
// and packed: more than 512 rows), stored and accumulated, with a bias epilogue and with a
// band. A kernel without a wide tile (the AVX2 build's 6x16, SSE, NEON, portable) is compared
// with itself.
TEST(GemmKernels, WideTileGivesTheNarrowTilesBits) {
  const gemm_detail::FastKernel& build = gemm_detail::fast_kernel();
  const std::string name = build.name;
  const int64_t rows_here = gemm_detail::tuning_for(build).wide_rows_in_place;
  EXPECT_EQ(build.wide != nullptr, name == "AVX-512 6x32" || name == "AVX2 6x8") << name;
  if (name == "AVX-512 6x32")
    EXPECT_TRUE(rows_here == 4 || rows_here == gemm_detail::kMR) << rows_here;
  else
    EXPECT_EQ(rows_here, gemm_detail::kMR) << name;
  const auto narrow = [](GemmCpu& cpu) { cpu.kernel.wide = nullptr; };
  // The wide tile over an A read in place with each row count a CPU may take: 4 only where
  // the kernel reads just the rows it is given.
  std::vector<int64_t> wide_rows;
  for (int64_t rows : {int64_t{4}, gemm_detail::kMR})
    if (rows == gemm_detail::kMR || (build.wide && build.reads_short_a_in_place))
      wide_rows.push_back(rows);
  const int before = num_threads();
  struct Case {
    int64_t M, N, K;
  };
  for (const Case c : {Case{7, 64, 9}, Case{8, 64, 40}, Case{9, 96, 33}, Case{10, 130, 20},
                       Case{11, 64, 64}, Case{12, 200, 17}, Case{64, 64, 64}, Case{100, 200, 64},
                       Case{97, 256, 400}, Case{301, 197, 50}, Case{520, 128, 24}})
    for (bool ta : {false, true})
      for (bool accumulate : {false, true})
        for (int threads : {1, 2}) {
          set_num_threads(threads);
          const ThreeProducts p(c.M, c.N, c.K, ta, accumulate, 31);
          for (int which : {0, 1, 2}) {
            const std::vector<float> wide = p.run(which);
            const std::vector<float> plain = p.run(which, narrow);
            EXPECT_EQ(wide, plain) << p.where(which, threads);
            for (int64_t rows : wide_rows)
              EXPECT_EQ(
                  p.run(which, [rows](GemmCpu& cpu) { cpu.tuning.wide_rows_in_place = rows; }),
                  plain)
                  << p.where(which, threads) << ", wide tiles of " << rows << " rows";
          }
        }
  set_num_threads(before);
}

// Where all of A is read in place and the panel of B is more than two chunks wide, the tiles may go
// rows outer (GemmTuning::rows_outer_chunk, gemm/loops.cpp's block_rows: AVX-512's and AVX2's on an
// Intel CPU) instead of in BLIS's order: each tile still gets the same terms through the same
// kernel, so the bits must be those of BLIS's order. Copies of the build's kernel (and of its
// narrow twin) with rows_outer_chunk 0 and 2 NR, small enough that these products cross several
// chunks and leave a short one over, planned with them: on one thread (packed_loops, B read in
// place below kParallelMinWork, packed above), on two (cut by columns; 600 rows handed out; B
// shared from the product's own size), with row counts that are and are not whole panels of MR,
// more rows than an MC block, terms past a KC block, A row-major and transposed (read in place
// where its rows are close, else packed, which keeps BLIS's order), stored and accumulated, with a
// bias epilogue and with a band.
TEST(GemmKernels, RowsOuterGivesBlisOrdersBits) {
  gemm_detail::FastKernel build = gemm_detail::fast_kernel();
  if (!build.reads_a_in_place) GTEST_SKIP() << build.name << " reads A packed only: no rows outer";
  const std::string name = build.name;
  const int64_t chunk_here = gemm_detail::tuning_for(build).rows_outer_chunk;
  EXPECT_TRUE(chunk_here == 0 || (chunk_here % (2 * gemm_detail::kNR) == 0 &&
                                  (name == "AVX-512 6x32" || name == "AVX2 6x16")))
      << build.name << " rows_outer_chunk " << chunk_here;
  gemm_detail::FastKernel narrow = build;
  narrow.wide = nullptr;
  const int before = num_threads();
  struct Case {
    int64_t M, N, K;
    bool shared_b;
  };
  const int64_t nr = gemm_detail::kNR;
  for (const gemm_detail::FastKernel& kernel : {build, narrow})
    for (const Case c : {Case{12, 5 * nr + 3, 9, false}, Case{13, 9 * nr, 40, false},
                         Case{100, 7 * nr + 1, 33, false}, Case{102, 8 * nr, 400, false},
                         Case{203, 12 * nr + 5, 64, false}, Case{301, 6 * nr + 8, 50, true},
                         Case{96, 10 * nr, 390, true}, Case{600, 5 * nr + 3, 50, false}})
      for (bool ta : {false, true})
        for (bool accumulate : {false, true})
          for (int threads : {1, 2}) {
            set_num_threads(threads);
            const ThreeProducts p(c.M, c.N, c.K, ta, accumulate, 41);
            const auto run = [&](int64_t chunk, int which) {
              return p.run(which, [&](GemmCpu& cpu) {
                cpu.kernel = kernel;
                cpu.tuning.rows_outer_chunk = chunk;
                if (c.shared_b) cpu.tuning.shared_b_min_work = c.M * c.N * c.K;
              });
            };
            for (int which : {0, 1, 2})
              EXPECT_EQ(run(2 * nr, which), run(0, which))
                  << kernel.name << (kernel.wide ? " wide, " : " narrow, ")
                  << p.where(which, threads);
          }
  set_num_threads(before);
}

// A transposed A (a weight gradient's dY^T: each k's values of all rows side by side) is read
// in place while those rows are at most 512 floats apart (with the AVX2 and AVX-512 tiles), and
// packed, several panels at a time and 8 values of k at once, where they are further apart
// (always with narrower tiles); a row-major A is read in place. All feed the same kernel the
// same numbers in the same order, so the products must be the same bits: for row counts with
// and without a short last panel, one and several MC blocks, depths below, at and past a KC
// block (all below the depth at which a weight gradient is cut along K), and a leading
// dimension wider than the rows, below and past 512.
TEST(GemmPacking, TransposedAGivesTheSameBitsAsRowMajorA) {
  for (const PackCase c :
       {PackCase{6, 32, 8, 0}, PackCase{13, 70, 37, 3}, PackCase{96, 32, 384, 0},
        PackCase{100, 64, 385, 1}, PackCase{200, 40, 800, 7}, PackCase{5, 33, 9, 2},
        PackCase{13, 70, 37, 600}, PackCase{600, 40, 400, 0}, PackCase{510, 33, 100, 2}}) {
    Generator g(static_cast<uint64_t>(c.M * 1000 + c.K));
    const int64_t ld = c.M + c.pad;  // row i of A at at[i + k * ld]: each k's values contiguous
    const std::vector<float> at = randn({c.K * ld}, &g).to_vector();
    const std::vector<float> b = randn({c.K * c.N}, &g).to_vector();
    std::vector<float> a(static_cast<size_t>(c.M * c.K));  // the same A, row-major
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t k = 0; k < c.K; ++k) a[i * c.K + k] = at[i + k * ld];
    const MatrixRef b_ref{b.data(), c.N, 1};
    EXPECT_EQ(product(c.M, c.N, c.K, {at.data(), 1, ld}, b_ref),
              product(c.M, c.N, c.K, {a.data(), c.K, 1}, b_ref))
        << c.M << "x" << c.N << "x" << c.K << " pad " << c.pad;
  }
}

// Each pool worker gives its packing buffers back as it ends (thread_pool.h: no thread_local
// destructors, which MinGW-w64 runs after the thread's storage is gone). Changing the thread
// count many times, with threaded products in between, leaves no more threads holding scratch
// than the pool's workers and this thread; ctest runs this case as a process of its own, so its
// exit right after is part of the test.
TEST(GemmThreads, ChangingTheThreadCountManyTimesGivesWorkersBuffersBack) {
  const int before = num_threads();
  Operand a = make(130, 90, false, 3), b = make(90, 200, true, 4);
  std::vector<float> c(130 * 200);
  gemm(130, 200, 90, a.ref, b.ref, c.data(), 200, false);
  const std::vector<float> expected = c;
  for (int round = 0; round < 40; ++round) {
    const int threads = 1 + round % 4;
    set_num_threads(threads);
    gemm(130, 200, 90, a.ref, b.ref, c.data(), 200, false);  // every worker packs
    ASSERT_EQ(c, expected) << "round " << round;
    EXPECT_LE(threads_with_scratch(), threads)
        << "round " << round << ", " << threads << " threads: a finished worker kept its buffers";
  }
  set_num_threads(before);
}

// set_flush_denormal, as torch.set_flush_denormal. Every term of this product is subnormal
// (1e-20 x 1e-20 = 1e-40, below 1.2e-38) and their sum is not (256 of them: 2.56e-38). With
// flushing on, each term is 0 on every thread of the pool, also on the threads set_num_threads
// starts after it, and so is the sum; off again, the sums are back.
TEST(GemmThreads, FlushDenormalZeroesSubnormalTermsOnEveryThread) {
  const int before = num_threads();
  const Tensor a = full({256, 256}, 1e-20), b = full({256, 256}, 1e-20);
  auto all = [](const Tensor& c, auto pred) {
    const std::vector<float> v = c.to_vector<float>();
    return std::all_of(v.begin(), v.end(), pred);
  };
  const auto positive = [](float v) { return v > 2e-38f && v < 3e-38f; };
  ASSERT_TRUE(all(raw::matmul(a, b), positive)) << "the subnormal terms add up, unflushed";
  if (!set_flush_denormal(true)) GTEST_SKIP() << "no way to flush subnormals on this CPU";
  for (int threads : {2, 3, 1}) {
    set_num_threads(threads);
    EXPECT_TRUE(all(raw::matmul(a, b), [](float v) { return v == 0.0f; })) << threads;
  }
  set_num_threads(2);
  EXPECT_TRUE(set_flush_denormal(false));
  EXPECT_TRUE(all(raw::matmul(a, b), positive));
  set_num_threads(before);
}

TEST(GemmThreads, PoolRunsEveryPartOnceAndRethrows) {
  const int before = num_threads();
  set_num_threads(3);
  std::vector<int> hits(10, 0);
  parallel_for(10, [&](int64_t p) { hits[p] += 1; });
  EXPECT_EQ(hits, std::vector<int>(10, 1));
  EXPECT_THROW(parallel_for(4,
                            [](int64_t p) {
                              if (p == 2) throw Error("boom");
                            }),
               Error);
  // Nested calls run serially instead of deadlocking.
  int inner = 0;
  parallel_for(2, [&](int64_t p) {
    if (p == 0) parallel_for(3, [&](int64_t) { ++inner; });
  });
  EXPECT_EQ(inner, 3);
  set_num_threads(before);
  EXPECT_TRUE(testing::throws_error([] { set_num_threads(0); }, {"set_num_threads", "got 0"}));
}

// parallel_ranges hands each thread's range out in chunks, and a thread done with its own
// takes what is left of the others': every unit still runs exactly once, in ranges inside
// [0, units), however the threads are timed.
TEST(GemmThreads, ParallelRangesRunEveryUnitOnce) {
  const int before = num_threads();
  for (int threads : {1, 2, 3})
    for (int64_t units : {1, 2, 3, 7, 100, 1000, 100003}) {
      set_num_threads(threads);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(units));
      std::atomic<bool> bad_range{false};
      parallel_ranges(units, true, [&](int64_t begin, int64_t end) {
        if (begin < 0 || end > units || begin >= end) bad_range = true;
        for (int64_t u = std::max<int64_t>(begin, 0); u < std::min(end, units); ++u)
          ++hits[static_cast<size_t>(u)];
      });
      EXPECT_FALSE(bad_range) << units << " units on " << threads << " threads";
      for (int64_t u = 0; u < units; ++u)
        ASSERT_EQ(hits[static_cast<size_t>(u)].load(), 1)
            << "unit " << u << " of " << units << " on " << threads << " threads";
    }
  set_num_threads(before);
}

TEST(GemmThreads, ParallelRangesShareALateThreadsWork) {
  if (!kCanStartThreads) GTEST_SKIP() << "this build cannot start threads (thread_pool.h)";
  const int before = num_threads();
  // The calling thread stalls in its first chunk (units [0, 250) of its range [0, 500)) until
  // another thread has run a unit of that range, or 10 s pass: the worker, done with [500,
  // 1000), must take the rest of the caller's range.
  set_num_threads(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int64_t> taken_from_caller{0};
  parallel_ranges(1000, true, [&](int64_t begin, int64_t end) {
    if (std::this_thread::get_id() != caller && begin < 500)
      taken_from_caller += std::min<int64_t>(end, 500) - begin;
    if (begin == 0) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (taken_from_caller.load() == 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  EXPECT_GT(taken_from_caller.load(), 0) << "the worker never took the stalled caller's units";
  set_num_threads(before);
}

// Decoding's x W^T reads W's rows (B's columns) four at a time, a quarter of N apart: a column
// summed in a group of four must get the bits it gets alone, and land in its own place. N = 7
// is one group of neighbours and three alone; N = 23 is five groups of columns 5 apart
// (0, 5, 10, 15; ...; 4, 9, 14, 19) and three alone. Each column is then computed again as a
// product of its own (N = 1), for K below, at and past 16 sums.
TEST(GemmFewRows, AColumnGetsTheSameBitsInAGroupOfFourAsAlone) {
  for (int64_t N : {7, 23})
    for (int64_t M : {1, 3})
      for (int64_t K : {7, 16, 100, 768}) {
        Operand a = make(M, K, false, 31), b = make(K, N, true, 32);  // b: columns contiguous
        std::vector<float> together(static_cast<size_t>(M * N));
        gemm(M, N, K, a.ref, b.ref, together.data(), N, false);
        for (int64_t j = 0; j < N; ++j) {
          std::vector<float> alone(static_cast<size_t>(M));
          gemm(M, 1, K, a.ref, {b.data.data() + j * K, 1, K}, alone.data(), 1, false);
          for (int64_t i = 0; i < M; ++i)
            ASSERT_EQ(together[static_cast<size_t>(i * N + j)], alone[static_cast<size_t>(i)])
                << "M=" << M << " N=" << N << " K=" << K << " row " << i << " column " << j;
        }
      }
}

// hand_out_ranges is public: a count of parts below 1 or negative units is an error that names
// the counts, not a silent no-op or an allocation of 2^64 parts; zero units run nothing.
TEST(GemmThreads, HandOutRangesRejectsNoPartsAndNegativeUnits) {
  int64_t calls = 0;
  const auto body = [&](int64_t, int64_t) { ++calls; };
  EXPECT_TRUE(testing::throws_error([&] { hand_out_ranges(10, 0, 1, body); },
                                    {"hand_out_ranges", "10 units on 0 parts"}));
  EXPECT_TRUE(testing::throws_error([&] { hand_out_ranges(10, -1, 1, body); },
                                    {"hand_out_ranges", "10 units on -1 parts"}));
  EXPECT_TRUE(testing::throws_error([&] { hand_out_ranges(-5, 2, 1, body); },
                                    {"hand_out_ranges", "-5 units on 2 parts"}));
  EXPECT_EQ(calls, 0);
  hand_out_ranges(0, 1, 1, body);
  EXPECT_EQ(calls, 0);
  std::vector<int> hits(7, 0);  // min_piece 0 is taken as 1: each of the 7 units runs once
  hand_out_ranges(7, 1, 0, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) ++hits[static_cast<size_t>(u)];
  });
  EXPECT_EQ(hits, std::vector<int>(7, 1));
}

// hand_out_ranges_per_part tells each piece which part's thread runs it: that thread's own
// part, whichever range the piece came from. Every unit runs once; a part's thread runs the
// pieces of its own range before any of another's (a late thread may find the start of its
// range taken by one that finished early, never the other way round); each part's pieces all
// run on one thread, never two at once (they would not, were the range a piece came from
// passed instead: the caller's per-thread state would race); and the bad counts are
// hand_out_ranges' errors. On 1, 2 and 3 threads, with more parts than threads.
TEST(GemmThreads, HandOutRangesPerPartNamesTheThreadsOwnPart) {
  const int before = num_threads();
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (int64_t parts : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{5}}) {
      const int64_t units = 1000;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(units));
      std::vector<std::vector<int64_t>> begins(static_cast<size_t>(parts));  // in the order run
      std::vector<std::atomic<int>> inside(static_cast<size_t>(parts));
      std::vector<std::thread::id> runner(static_cast<size_t>(parts));  // who runs part p
      hand_out_ranges_per_part(units, parts, 4, [&](int64_t p, int64_t begin, int64_t end) {
        ASSERT_TRUE(p >= 0 && p < parts);
        ASSERT_EQ(inside[static_cast<size_t>(p)].fetch_add(1), 0)
            << "part " << p << " twice at once";
        std::thread::id& who = runner[static_cast<size_t>(p)];
        if (who == std::thread::id()) who = std::this_thread::get_id();
        EXPECT_EQ(who, std::this_thread::get_id()) << "part " << p << " on two threads";
        begins[static_cast<size_t>(p)].push_back(begin);
        for (int64_t u = begin; u < end; ++u) hits[static_cast<size_t>(u)].fetch_add(1);
        inside[static_cast<size_t>(p)].fetch_sub(1);
      });
      for (int64_t u = 0; u < units; ++u)
        ASSERT_EQ(hits[static_cast<size_t>(u)].load(), 1)
            << "unit " << u << ", " << parts << " parts";
      for (int64_t p = 0; p < parts; ++p) {
        const int64_t lo = units * p / parts, hi = units * (p + 1) / parts;
        bool elsewhere = false;  // a piece of another part's range has run on this part's thread
        for (int64_t b : begins[static_cast<size_t>(p)]) {
          const bool own = b >= lo && b < hi;
          EXPECT_FALSE(own && elsewhere) << "part " << p << " of " << parts << " on " << threads
                                         << " threads ran a piece of its own range after another's";
          elsewhere = elsewhere || !own;
        }
      }
    }
  }
  set_num_threads(before);
  const auto body = [](int64_t, int64_t, int64_t) {};
  EXPECT_TRUE(testing::throws_error([&] { hand_out_ranges_per_part(10, 0, 1, body); },
                                    {"hand_out_ranges", "10 units on 0 parts"}));
  EXPECT_TRUE(testing::throws_error([&] { hand_out_ranges_per_part(-5, 2, 1, body); },
                                    {"hand_out_ranges", "-5 units on 2 parts"}));
}

// GemmBand: an A with a triangle of exact zeros, as causal attention's P and dS (and their
// transposes) have; the band must give the full product's bits and skip only those zeros.
TEST(GemmBand, SkippingTheZeroTriangleGivesTheFullProductBitForBit) {
  const int before = num_threads();
  struct Case {
    int64_t M, N, K, row0;
  };
  // Square and not; a row0 offset; N = 32 (B read in place) and wider; tiles cut by MR = 6;
  // a product large enough to be split over threads; K = 400 (over one KC: summed in full).
  for (const Case c : {Case{64, 32, 64, 0}, Case{61, 32, 61, 0}, Case{30, 45, 64, 34},
                       Case{200, 64, 200, 0}, Case{64, 32, 400, 0}, Case{5, 7, 9, 2}})
    for (const GemmBand::Side side : {GemmBand::up_to_row, GemmBand::from_row})
      for (const bool transposed : {false, true})
        for (const int threads : {1, 2}) {
          set_num_threads(threads);
          Operand a = make(c.M, c.K, transposed, 21), b = make(c.K, c.N, false, 22);
          for (int64_t i = 0; i < c.M; ++i)  // zero the triangle; the diagonal k = i stays
            for (int64_t k = 0; k < c.K; ++k) {
              const int64_t row = c.row0 + i;
              if (side == GemmBand::up_to_row ? k > row : k < row)
                a.data[static_cast<size_t>(transposed ? k * c.M + i : i * c.K + k)] = 0.0f;
            }
          std::vector<float> full(static_cast<size_t>(c.M * c.N)), banded(full.size(), -1.0f);
          gemm(c.M, c.N, c.K, a.ref, b.ref, full.data(), c.N, false);
          gemm_band(c.M, c.N, c.K, a.ref, b.ref, banded.data(), c.N, false, {side, c.row0});
          EXPECT_EQ(std::memcmp(full.data(), banded.data(), sizeof(float) * full.size()), 0)
              << c.M << "x" << c.N << "x" << c.K << " row0 " << c.row0 << " side " << side
              << (transposed ? " A transposed" : "") << " on " << threads << " threads";
        }
  set_num_threads(before);
  // The band does leave terms out: with no zeros in A, the banded product differs.
  Operand a = make(64, 64, false, 23), b = make(64, 32, false, 24);
  std::vector<float> full(64 * 32), banded(64 * 32);
  gemm(64, 32, 64, a.ref, b.ref, full.data(), 32, false);
  gemm_band(64, 32, 64, a.ref, b.ref, banded.data(), 32, false, {GemmBand::up_to_row, 0});
  EXPECT_NE(std::memcmp(full.data(), banded.data(), sizeof(float) * full.size()), 0);
}

TEST(MatmulOut, AccumulatesIntoAnExistingTensor) {
  Tensor a = tensor({{1., 2.}, {3., 4.}}), b = tensor({{1., 0.}, {0., 1.}});
  Tensor out = ones({2, 2});
  raw::matmul_out(a, b, out, true);  // out += a @ I
  EXPECT_TRUE(testing::tensor_near(out, {2, 2}, {2, 3, 4, 5}, 0));
  raw::matmul_out(a, b, out, false);  // out = a @ I
  EXPECT_TRUE(testing::tensor_near(out, {2, 2}, {1, 2, 3, 4}, 0));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        raw::matmul_out(a, b, zeros({3, 2}));
      },
      {"matmul_out", "(2, 2)", "(3, 2)"}));
  EXPECT_TRUE(
      testing::throws_error([&] { raw::matmul_out(a, b, a); }, {"matmul_out", "share storage"}));
}

// The epilogue (+ bias along rows, as the GEMM stores each tile) is bit for bit the product
// followed by the separate add, through Tensor ops: on few rows (no micro-kernel), small serial
// products, threaded ones cut by rows or columns, a weight gradient cut along K, edge tiles, K
// over several KC blocks, transposed operands, and 1, 2 or 3 threads. (GemmPlans below holds
// every split, the shared packed B among them, to the same with the epilogue.)
TEST(MatmulEpilogue, EqualsMatmulThenAddBitForBit) {
  const int before = num_threads();
  Generator g(9);
  struct Case {
    int64_t M, K, N;
    bool ta, tb;
  };
  for (Case c : {Case{3, 20, 50, false, false}, Case{13, 7, 33, true, false},
                 Case{2048, 128, 512, false, true}, Case{128, 2048, 512, true, false},
                 Case{301, 500, 97, false, false}, Case{601, 401, 301, true, false}}) {
    const Tensor a = c.ta ? raw::transpose(randn({c.K, c.M}, &g), 0, 1) : randn({c.M, c.K}, &g);
    const Tensor b = c.tb ? raw::transpose(randn({c.N, c.K}, &g), 0, 1) : randn({c.K, c.N}, &g);
    const Tensor bias = randn({c.N}, &g);
    const Tensor product = raw::matmul(a, b);
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      const std::string where = std::to_string(c.M) + "x" + std::to_string(c.K) + "x" +
                                std::to_string(c.N) + " on " + std::to_string(threads);
      EXPECT_TRUE(testing::tensor_equal(raw::matmul_epilogue(a, b, bias), raw::add(product, bias)))
          << "bias, " << where;
    }
  }
  set_num_threads(before);
  // K = 0: the product is zeros, and the epilogue still runs.
  EXPECT_TRUE(testing::tensor_equal(
      raw::matmul_epilogue(zeros({4, 0}), zeros({0, 3}), tensor({1.0f, 2.0f, 3.0f})),
      raw::add(zeros({4, 3}), tensor({1.0f, 2.0f, 3.0f}))));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        raw::matmul_epilogue(zeros({2, 3}), zeros({3, 4}), zeros({3}));
      },
      {"matmul_epilogue", "bias of shape (4,)", "got (3,)"}));
  EXPECT_TRUE(testing::throws_error(
      [&] {
        raw::matmul_epilogue(zeros({2, 3}), zeros({2, 4}), zeros({4}));
      },
      {"matmul_epilogue", "(2, 3) and (2, 4)"}));
}

// ---- The plan: when each split runs, and that every split gives the same bits ----------------

// The planner's specification, as a table: a product (its sizes, whether A is transposed and how
// far apart its k steps then are, how many products of the batch) on a CPU of 1 or 2 threads
// with the default tuning table (GemmTuning), and the plan it gets. The CPU's kernel is this
// build's, said to read A in place (NEON's does not; the rule is the same). Thresholds:
// parallel_min_work 2^19 multiply-adds, few_rows 4 (counted as 16 rows of work), shared_b_min_work
// 2^31, hand_out_max_b 2^20 floats, k_chunk 1024 (at most 4), A transposed in place up to 512.
TEST(GemmPlanner, ChoosesEachSplitAsTheTableSays) {
  struct Row {
    const char* what;
    int64_t M, N, K;
    int64_t a_ld;  // 0: A row-major; else A transposed, its k steps a_ld floats apart
    int64_t batches;
    int threads;
    GemmSplit split;
    bool a_in_place;
    int64_t k_chunks = 1;
  };
  using S = GemmSplit;
  const Row table[] = {
      {"64^3: under parallel_min_work", 64, 64, 64, 0, 1, 2, S::one_thread, true},
      {"512^3 on one thread", 512, 512, 512, 0, 1, 1, S::one_thread, true},
      {"an empty product", 0, 64, 64, 0, 1, 2, S::one_thread, true},
      {"x W^T decoding one token", 1, 768, 768, 0, 1, 2, S::few_row_columns, true},
      {"one token, small W: 16 x 40 x 512 < 2^19", 1, 40, 512, 0, 1, 2, S::one_thread, true},
      {"12 heads' q k^T at one query", 1, 50, 64, 0, 12, 2, S::batch_split, true},
      {"dW = dY^T X over 2048 tokens", 128, 512, 2048, 128, 1, 2, S::k_chunks, true, 2},
      {"the same on one thread: chunks all the same", 128, 512, 2048, 128, 1, 1, S::k_chunks, true,
       2},
      {"dW over 8192 tokens: at most 4 chunks", 128, 512, 8192, 128, 1, 2, S::k_chunks, true, 4},
      {"dW with K < 2 k_chunk: not cut", 512, 512, 1024, 512, 1, 2, S::columns_handed_out, true},
      {"2048^3: B shared", 2048, 2048, 2048, 0, 1, 2, S::shared_b, true},
      {"2048^3 on one thread", 2048, 2048, 2048, 0, 1, 1, S::one_thread, true},
      {"tiny GPT's fc: M >= 2N, B packs in 2^20", 2048, 512, 128, 0, 1, 2, S::rows_handed_out,
       true},
      {"GPT-2's M = 512: columns", 512, 768, 768, 0, 1, 2, S::columns_handed_out, true},
      {"A packed (k steps 1024 apart), M >= N: rows", 1024, 768, 768, 1024, 1, 2,
       S::rows_handed_out, false},
      {"A packed, M < N: columns", 600, 1400, 300, 600 * 2, 1, 2, S::columns_handed_out, false},
      {"M >= 2N, B past hand_out_max_b, under 2^31: cut statically", 2000, 1000, 1050, 0, 1, 2,
       S::batch_split, true},
      {"64 attention products of 256 x 256 x 32", 256, 256, 32, 0, 64, 2, S::batch_split, true},
  };
  for (const Row& r : table) {
    GemmCpu cpu{gemm_detail::fast_kernel(), r.threads, gemm_detail::GemmTuning{}};
    cpu.kernel.reads_a_in_place = true;
    cpu.tuning.transposed_a_in_place_max_ld = 512;
    const float dummy = 0.0f;
    const MatrixRef A = r.a_ld ? MatrixRef{&dummy, 1, r.a_ld} : MatrixRef{&dummy, r.K, 1};
    const MatrixRef B{&dummy, r.N, 1};
    GemmBatch batch;
    GemmProblem p{r.M, r.N, r.K, A, B, nullptr, r.N};
    if (r.batches > 1) {
      batch.a.assign(static_cast<size_t>(r.batches), &dummy);
      batch.b.assign(static_cast<size_t>(r.batches), &dummy);
      batch.c.assign(static_cast<size_t>(r.batches), nullptr);
      p.batch = &batch;
    }
    const GemmPlan plan = plan_gemm(p, cpu);
    EXPECT_EQ(plan.split, r.split) << r.what << ": " << to_string(plan);
    EXPECT_EQ(plan.a_in_place, r.a_in_place) << r.what << ": " << to_string(plan);
    EXPECT_EQ(plan.k_chunks, r.k_chunks) << r.what << ": " << to_string(plan);
    EXPECT_EQ(plan.threads, r.split == GemmSplit::one_thread ? 1 : r.threads) << r.what;
  }
  // The CPU quirks: rows outer only where the tuning gives a chunk, and the panel is wider than
  // two of them; the wide tile's rows over an A read in place as the tuning says.
  GemmCpu intel{gemm_detail::fast_kernel(), 2, gemm_detail::GemmTuning{}};
  intel.kernel.reads_a_in_place = intel.kernel.reads_short_a_in_place = true;
  intel.tuning.rows_outer_chunk = 512;
  const float dummy = 0.0f;
  const GemmProblem wide{2048, 1536, 256, {&dummy, 256, 1}, {&dummy, 1536, 1}, nullptr, 1536};
  const GemmProblem narrow{2048, 1024, 256, {&dummy, 256, 1}, {&dummy, 1024, 1}, nullptr, 1024};
  EXPECT_TRUE(plan_gemm(wide, intel).rows_outer) << to_string(plan_gemm(wide, intel));
  EXPECT_FALSE(plan_gemm(narrow, intel).rows_outer) << to_string(plan_gemm(narrow, intel));
  intel.tuning.rows_outer_chunk = 0;
  EXPECT_FALSE(plan_gemm(wide, intel).rows_outer);
  // A plan reads as a line: the kernel, where A and B come from, the split and the blocks.
  intel.tuning.rows_outer_chunk = 512;
  const std::string line = to_string(plan_gemm(wide, intel));
  for (const char* part : {intel.kernel.name, "A in place", "B packed", "rows outer under 512",
                           "columns handed out on 2 threads", "MC 96 KC 384 NC 4096"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " in: " << line;
}

// Every plan the planner can make, run on awkward shapes (1, 7, 33, 129 and others that are no
// multiple of MR, NR, MC or KC), A and B each row-major and transposed, C stored and added to,
// with and without a bias epilogue, on 1, 2 and 3 threads: the bits of step 5 (gemm_threaded,
// the bias added after), but for the two splits that sum in orders of their own, which must give
// the bits of their own on every thread count: a few rows (M <= 4) where fast_loops runs them
// (one thread, the few-row columns, columns handed out, the batch split), and K in chunks.
TEST(GemmPlans, EveryPlanGivesStepFivesBitsOnOneTwoAndThreeThreads) {
  const int before = num_threads();
  const GemmSplit splits[] = {GemmSplit::one_thread,      GemmSplit::k_chunks,
                              GemmSplit::few_row_columns, GemmSplit::shared_b,
                              GemmSplit::rows_handed_out, GemmSplit::columns_handed_out,
                              GemmSplit::batch_split};
  for (const Dims d : {Dims{1, 33, 129}, Dims{3, 129, 7}, Dims{7, 129, 33}, Dims{33, 7, 129},
                       Dims{129, 33, 1}, Dims{97, 200, 385}, Dims{200, 130, 7}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool accumulate : {false, true})
          for (bool bias : {false, true}) {
            const Operand a = make(d.M, d.K, ta, 51), b = make(d.K, d.N, tb, 52);
            const Operand bias_values = make(1, d.N, false, 53);
            Generator g(54);
            const std::vector<float> start =
                randn({std::max<int64_t>(d.M * d.N, 1)}, &g).to_vector();
            std::vector<float> step5 = start;
            gemm_threaded(d.M, d.N, d.K, a.ref, b.ref, step5.data(), d.N, accumulate);
            if (bias)
              for (int64_t i = 0; i < d.M; ++i)
                for (int64_t j = 0; j < d.N; ++j)
                  step5[static_cast<size_t>(i * d.N + j)] +=
                      bias_values.data[static_cast<size_t>(j)];
            const auto run = [&](GemmSplit split, int threads) {
              set_num_threads(threads);
              std::vector<float> c = start;
              GemmProblem p{d.M, d.N, d.K, a.ref, b.ref, c.data(), d.N, accumulate};
              if (bias) p.epilogue = {bias_values.data.data()};
              GemmPlan plan = plan_gemm(p, this_cpu());
              plan.split = split;
              plan.threads = threads;
              plan.k_chunks = split == GemmSplit::k_chunks ? 2 : 1;
              run_gemm(p, plan);
              return c;
            };
            for (GemmSplit split : splits) {
              const std::vector<float> one = run(split, 1);
              const bool own_order =
                  split == GemmSplit::k_chunks ||
                  (d.M <= gemm_detail::GemmTuning{}.few_rows && split != GemmSplit::shared_b &&
                   split != GemmSplit::rows_handed_out);
              const std::string where = std::to_string(d.M) + "x" + std::to_string(d.N) + "x" +
                                        std::to_string(d.K) + " ta " + std::to_string(ta) + " tb " +
                                        std::to_string(tb) + " accumulate " +
                                        std::to_string(accumulate) + " bias " +
                                        std::to_string(bias) + ", " + to_string(split);
              if (own_order)
                EXPECT_TRUE(testing::values_near(std::vector<double>(one.begin(), one.end()),
                                                 std::vector<double>(step5.begin(), step5.end()),
                                                 1e-5 * (d.K + 1) * 4, 1e-5))
                    << where;
              else
                EXPECT_EQ(one, step5) << where << " on 1 thread";
              for (int threads : {2, 3})
                EXPECT_EQ(run(split, threads), one) << where << " on " << threads;
            }
          }
  set_num_threads(before);
  // A split of one product cannot run a batch.
  const float x = 1.0f;
  float y[2] = {};
  GemmBatch two{{&x, &x}, {&x, &x}, {y, y + 1}};
  GemmProblem batch{1, 1, 1, {&x, 1, 1}, {&x, 1, 1}, y, 1, false};
  batch.batch = &two;
  GemmPlan plan = plan_gemm(batch, this_cpu());
  plan.split = GemmSplit::shared_b;
  EXPECT_TRUE(testing::throws_error([&] { run_gemm(batch, plan); },
                                    {"run_gemm", "B shared", "a batch of 2"}));
}

// QKV_GEMM=ladder (set_gemm_path) runs every product on step 5, and the epilogue after it: a
// product, a batch and one with a bias give step 5's bits.
TEST(GemmPath, LadderRunsStepFiveForEveryProduct) {
  const Operand a = make(200, 130, false, 61), b = make(130, 97, true, 62);
  const Operand bias = make(1, 97, false, 63);
  std::vector<float> step5(200 * 97), ladder(200 * 97), with_bias(200 * 97);
  gemm_threaded(200, 97, 130, a.ref, b.ref, step5.data(), 97, false);
  EXPECT_EQ(gemm_path(), GemmPath::production);
  set_gemm_path(GemmPath::ladder);
  gemm(200, 97, 130, a.ref, b.ref, ladder.data(), 97, false);
  gemm_epilogue(200, 97, 130, a.ref, b.ref, with_bias.data(), 97, false, {bias.data.data()});
  set_gemm_path(GemmPath::production);
  EXPECT_EQ(ladder, step5);
  for (size_t i = 0; i < step5.size(); ++i) step5[i] += bias.data[i % 97];
  EXPECT_EQ(with_bias, step5);
}

}  // namespace
}  // namespace qkv
