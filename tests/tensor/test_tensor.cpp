// test_tensor.cpp: the handle, its geometry, element access and the factories.
#include "tests/testing.h"

namespace qkv {
namespace {

TEST(Tensor, ContiguousStridesAreRowMajor) {
  Tensor t = zeros({2, 3, 4});
  EXPECT_EQ(t.shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(t.strides(), (Shape{12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_TRUE(t.is_contiguous());
}

TEST(Tensor, CopyingTheHandleAliasesTheTensor) {
  Tensor a = zeros({2});
  Tensor b = a;  // like `b = a` in Python: the same tensor
  b.at({1}) = 5.0f;
  EXPECT_EQ(a.at({1}), 5.0f);
  EXPECT_TRUE(a.shares_storage(b));
}

TEST(Tensor, AtAcceptsNegativeIndices) {
  Tensor t = arange(0.0, 6.0);
  Tensor m = raw::view(t, {2, 3});
  EXPECT_EQ(m.at({-1, -1}), 5.0f);
  EXPECT_EQ(m.at({1, 0}), 3.0f);
}

TEST(Tensor, ItemAndToVectorConvert) {
  EXPECT_EQ(scalar_tensor(2.5f).item(), 2.5f);
  EXPECT_EQ(full({1, 1}, 7, Dtype::int64).item<int64_t>(), 7);
  EXPECT_EQ(tensor({1.5f, 2.0f}).to_vector<double>(), (std::vector<double>{1.5, 2.0}));
  EXPECT_EQ(raw::to(tensor({1.9f, -2.5f}), Dtype::int64).to_vector<int64_t>(),
            (std::vector<int64_t>{1, -2}));  // truncation toward zero, as torch's .long()
  // A contiguous float tensor is copied as it lies, any other walked element by element: a row
  // (contiguous, at an offset) and a column (strided) of the same matrix, and a transpose.
  const Tensor m = raw::reshape(arange(0.0, 12.0, 1.0), {3, 4});
  EXPECT_EQ(raw::select(m, 0, 1).to_vector(), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(raw::select(m, 1, 2).to_vector(), (std::vector<float>{2, 6, 10}));
  EXPECT_EQ(raw::transpose(m, 0, 1).to_vector(),
            (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(raw::select(m, 0, 2).to_vector<double>(), (std::vector<double>{8, 9, 10, 11}));
}

TEST(Factory, FilledTensors) {
  EXPECT_EQ(ones({2, 2}).to_vector(), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(full({3}, -2.5).to_vector(), (std::vector<float>{-2.5, -2.5, -2.5}));
  EXPECT_EQ(zeros({2}, Dtype::boolean).to_vector<bool>(), (std::vector<bool>{false, false}));
  EXPECT_EQ(zeros_like(ones({2, 5})).shape(), (Shape{2, 5}));
  EXPECT_EQ(scalar_tensor(1.0f).dim(), 0);
}

TEST(Factory, ArangeIntegerAndFloating) {
  Tensor i = arange(5);
  EXPECT_EQ(i.dtype(), Dtype::int64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(int64_t{10}, int64_t{0}, int64_t{-3}).to_vector<int64_t>(),
            (std::vector<int64_t>{10, 7, 4, 1}));
  Tensor f = arange(0.0, 1.0, 0.25);
  EXPECT_EQ(f.dtype(), Dtype::float32);
  EXPECT_EQ(f.to_vector(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(arange(0.0, 1.0, 0.3).numel(), 4);  // ceil((1 - 0) / 0.3)
  EXPECT_EQ(arange(3, 3).numel(), 0);
}

TEST(Factory, EyeTrilTriu) {
  EXPECT_EQ(eye(2, 3).to_vector(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  Tensor o = ones({3, 3});
  EXPECT_EQ(raw::tril(o).to_vector(), (std::vector<float>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(raw::triu(o, 1).to_vector(), (std::vector<float>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(raw::tril(o, -1).to_vector(), (std::vector<float>{0, 0, 0, 1, 0, 0, 1, 1, 0}));
  // Batched: every matrix of the last two dims.
  Tensor b = raw::tril(ones({2, 2, 2}, Dtype::boolean));
  EXPECT_EQ(b.to_vector<bool>(),
            (std::vector<bool>{true, false, true, true, true, false, true, true}));
}

TEST(Factory, NestedBracesAndVectors) {
  Tensor t = tensor({{1., 2., 3.}, {4., 5., 6.}});
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.at({1, 2}), 6.0f);
  Tensor c = tensor({{{1., 2.}, {3., 4.}}, {{5., 6.}, {7., 8.}}});
  EXPECT_EQ(c.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(c.at({1, 0, 1}), 6.0f);
  Tensor ids = from_vector(std::vector<int64_t>{3, 1}, {2});
  EXPECT_EQ(ids.dtype(), Dtype::int64);
  EXPECT_EQ(from_vector(std::vector<bool>{true, false}, {2}).to_vector<bool>(),
            (std::vector<bool>{true, false}));
}

TEST(Allocator, AFullCacheEvictsIdleBlocksOfOtherSizesForTheOneJustFreed) {
  empty_cache();
  {  // four idle 256 MiB blocks fill the 1 GiB cache (never touched: no pages are faulted in)
    std::vector<Tensor> big;
    for (int i = 0; i < 4; ++i) big.push_back(Tensor::empty({int64_t{1} << 26}));
  }
  if (cached_bytes() == 0) GTEST_SKIP() << "no block cache in this build (AddressSanitizer)";
  EXPECT_EQ(cached_bytes(), size_t{1} << 30);
  { const Tensor small = Tensor::empty({1 << 19}); }  // a 2 MiB block of the new workload
  // One 256 MiB block made room; the 2 MiB block is kept for its next use.
  EXPECT_EQ(cached_bytes(), (size_t{3} << 28) + (size_t{1} << 21));
  empty_cache();
  EXPECT_EQ(cached_bytes(), 0u);
}

TEST(Allocator, LargeBlocksAreWholeHugePagesWhereTheSystemHasThem) {
  empty_cache();
  if (!huge_page_blocks()) {
    // Blocks at their size class, 64-byte aligned (the cache itself may be off: ASan).
    const Tensor t = Tensor::empty({1 << 18});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
    GTEST_SKIP() << "no huge-page blocks on this system or build";
  }
  const size_t huge = size_t{2} << 20;
  {
    const Tensor a = Tensor::empty({1 << 18});  // 1 MiB: a block of one 2 MiB page
    const Tensor b = Tensor::empty({3 << 18});  // 3 MiB: two pages
    for (const Tensor* t : {&a, &b}) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data_ptr()) % huge, 0u);
      std::fill(t->data_ptr(), t->data_ptr() + t->numel(), 1.0f);  // every byte writable
    }
  }
  EXPECT_EQ(cached_bytes(), huge + 2 * huge);
  {  // 1.5 MiB asks for the same 2 MiB block size, and gets the idle block back
    const Tensor c = Tensor::empty({3 << 17});
    EXPECT_EQ(cached_bytes(), 2 * huge);
  }
  empty_cache();
  EXPECT_EQ(cached_bytes(), 0u);
}

// From 64 KiB to 1 MiB (a weight's gradient) blocks are kept too, at their class size and not
// as huge pages, and handed back to the next request of their class; smaller ones are not kept.
TEST(Allocator, BlocksFrom64KiBAreKeptAtTheirClassSize) {
  empty_cache();
  { const Tensor big = Tensor::empty({1 << 19}); }  // 2 MiB: kept wherever there is a cache
  if (cached_bytes() == 0) GTEST_SKIP() << "no block cache in this build (AddressSanitizer)";
  empty_cache();
  uintptr_t first = 0;
  {
    const Tensor g = Tensor::empty({1 << 16});  // 256 KiB
    first = reinterpret_cast<uintptr_t>(g.data_ptr());
  }
  EXPECT_EQ(cached_bytes(), size_t{256} << 10);  // its class, not a 2 MiB page
  {
    const Tensor h = Tensor::empty({(1 << 16) - 1000});  // 252 KiB: the same class
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h.data_ptr()), first);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(h.data_ptr()) % 64, 0u);
    EXPECT_EQ(cached_bytes(), 0u);
  }
  { const Tensor s = Tensor::empty({1 << 13}); }  // 32 KiB: not kept
  EXPECT_EQ(cached_bytes(), size_t{256} << 10);
  empty_cache();
  EXPECT_EQ(cached_bytes(), 0u);
}

TEST(Allocator, MemoryStatsCountLiveBytesAndThePeak) {
  const size_t base = memory_stats().allocated;
  reset_peak_memory();
  {
    const Tensor a = Tensor::empty({1 << 19});  // 2 MiB: through the block cache
    const Tensor b = Tensor::empty({100});      // 400 bytes: straight from new
    EXPECT_EQ(memory_stats().allocated, base + (size_t{1} << 21) + 400);
  }
  // Freed (a's block kept by the cache for reuse does not count as allocated).
  EXPECT_EQ(memory_stats().allocated, base);
  EXPECT_EQ(memory_stats().peak, base + (size_t{1} << 21) + 400);
  reset_peak_memory();
  EXPECT_EQ(memory_stats().peak, base);
}

TEST(FmaPeak, HighestReadingNeverFallsBelowAnEarlierOne) {
  if (!kCanStartThreads) {
    EXPECT_TRUE(testing::throws_error([] { fma_peak_gflops(3, 1); }, {"fma_peak_gflops", "got 3"}));
    GTEST_SKIP() << "this build cannot start threads (thread_pool.h)";
  }
  // Three threads (no other test here probes with three) on short probes, which read unevenly on
  // 2 cores: a helper that returned its latest reading, or the lowest, would fall in 8 calls.
  constexpr int64_t kIterations = int64_t{1} << 14;  // short, for the emulated and sanitized legs
  double earlier = 0;
  for (int i = 0; i < 8; ++i) {
    const double highest = highest_fma_peak_gflops(3, kIterations);
    EXPECT_GT(highest, 0.0);
    EXPECT_GE(highest, earlier);
    earlier = highest;
  }
}

}  // namespace
}  // namespace qkv
