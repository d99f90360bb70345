// test_view.cpp: views share storage and only change shape, strides and offset.
#include "tests/testing.h"

namespace qkv {
namespace {

Tensor iota(const Shape& shape) {
  return raw::reshape(arange(0.0, static_cast<double>(shape_numel(shape))), shape);
}

TEST(View, ViewSharesStorageAndInfersMinusOne) {
  Tensor a = iota({2, 6});
  Tensor v = raw::view(a, {3, -1});
  EXPECT_EQ(v.shape(), (Shape{3, 4}));
  EXPECT_TRUE(v.shares_storage(a));
  v.at({2, 3}) = 100.0f;  // writes through to the base
  EXPECT_EQ(a.at({1, 5}), 100.0f);
}

TEST(View, ViewOfATransposeNeedsACopyButReshapeMakesOne) {
  Tensor t = raw::transpose(iota({2, 3}), 0, 1);  // (3, 2), strides (1, 3)
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(testing::throws_error([&] { raw::view(t, {6}); }, {"view", "(3, 2)", "(1, 3)"}));
  Tensor r = raw::reshape(t, {6});
  EXPECT_FALSE(r.shares_storage(t));
  EXPECT_EQ(r.to_vector(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // Splitting a dim of a transposed tensor is still a view.
  Tensor s = raw::view(raw::transpose(iota({4, 3}), 0, 1), {3, 2, 2});
  EXPECT_EQ(s.strides(), (Shape{1, 6, 3}));
}

TEST(View, TransposeAndPermuteSwapStrides) {
  Tensor a = iota({2, 3, 4});
  Tensor t = raw::transpose(a, -1, 0);
  EXPECT_EQ(t.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 4, 12}));
  EXPECT_EQ(t.at({3, 1, 1}), a.at({1, 1, 3}));
  Tensor p = raw::permute(a, {1, 2, 0});
  EXPECT_EQ(p.shape(), (Shape{3, 4, 2}));
  EXPECT_EQ(p.at({2, 3, 1}), a.at({1, 2, 3}));
}

TEST(View, UnsqueezeSqueeze) {
  Tensor a = iota({3});
  EXPECT_EQ(raw::unsqueeze(a, 0).shape(), (Shape{1, 3}));
  EXPECT_EQ(raw::unsqueeze(a, -1).shape(), (Shape{3, 1}));
  Tensor b = iota({1, 3, 1});
  EXPECT_EQ(raw::squeeze(b).shape(), (Shape{3}));
  EXPECT_EQ(raw::squeeze(b, 0).shape(), (Shape{3, 1}));
  EXPECT_EQ(raw::squeeze(b, 1).shape(), (Shape{1, 3, 1}));  // size 3: unchanged, as torch
}

TEST(View, ExpandReadsOneRowManyTimes) {
  Tensor row = iota({1, 3});
  Tensor e = raw::expand(row, {4, 3});
  EXPECT_EQ(e.strides(), (Shape{0, 1}));
  EXPECT_EQ(e.at({3, 2}), 2.0f);
  Tensor f = raw::expand(iota({3}), {2, -1});
  EXPECT_EQ(f.shape(), (Shape{2, 3}));
  EXPECT_EQ(raw::contiguous(f).to_vector(), (std::vector<float>{0, 1, 2, 0, 1, 2}));
}

TEST(View, NarrowSliceSelectMoveTheOffset) {
  Tensor a = iota({4, 5});
  Tensor n = raw::narrow(a, 1, 1, 3);
  EXPECT_EQ(n.shape(), (Shape{4, 3}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_EQ(n.at({2, 0}), 11.0f);
  Tensor s = raw::slice(a, 0, 1, 100, 2);  // a[1::2], end clamped like Python
  EXPECT_EQ(s.shape(), (Shape{2, 5}));
  EXPECT_EQ(s.at({1, 4}), 19.0f);
  Tensor neg = raw::slice(a, -1, -2, 5);  // a[:, -2:]
  EXPECT_EQ(raw::contiguous(raw::select(neg, 0, 0)).to_vector(), (std::vector<float>{3, 4}));
  Tensor sel = raw::select(a, 1, -1);
  EXPECT_EQ(sel.to_vector(), (std::vector<float>{4, 9, 14, 19}));
}

TEST(View, FlattenAndContiguousCopy) {
  Tensor a = iota({2, 3, 4});
  EXPECT_EQ(raw::flatten(a, 1).shape(), (Shape{2, 12}));
  EXPECT_EQ(raw::flatten(a).shape(), (Shape{24}));
  Tensor c = raw::contiguous(a);
  EXPECT_TRUE(c.shares_storage(a));  // already contiguous: no copy
  Tensor t = raw::contiguous(raw::transpose(a, 1, 2));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.at({1, 3, 2}), a.at({1, 2, 3}));
}

// A large copy is cut into one slab of dim 0 per thread: every element lands where the
// element-by-element walk puts it, on any thread count, broadcast sources included.
TEST(View, LargeCopiesAreTheSameOnOneAndThreeThreads) {
  Generator g(3);
  const Tensor a = randn({7, 64, 4, 33}, &g);  // 59k elements, above the parallel threshold
  const Tensor t = raw::transpose(a, 1, 2);
  const int saved = num_threads();
  set_num_threads(3);
  const Tensor three = raw::contiguous(t);
  Tensor rows = Tensor::empty({5, 300, 41});
  raw::copy_(rows, arange(0.0, 41.0));  // a broadcast row, float32
  set_num_threads(1);
  const Tensor one = raw::contiguous(t);
  set_num_threads(saved);
  EXPECT_TRUE(testing::tensor_equal(one, three));
  const auto got = three.to_vector(), src = a.to_vector();
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t s = 0; s < 64; ++s)
        for (int64_t d = 0; d < 33; ++d)
          ASSERT_EQ(got[static_cast<size_t>(((i * 4 + h) * 64 + s) * 33 + d)],
                    src[static_cast<size_t>(((i * 64 + s) * 4 + h) * 33 + d)]);
  const auto r = rows.to_vector();
  for (size_t i = 0; i < r.size(); ++i) ASSERT_EQ(r[i], static_cast<float>(i % 41));
}

TEST(View, CopyAndFillWriteThroughViews) {
  Tensor a = zeros({3, 3});
  raw::fill_(raw::select(a, 1, 1), 7.0);                // a[:, 1] = 7
  raw::copy_(raw::select(a, 0, 2), tensor({1., 2., 3.}));  // a[2] = [1, 2, 3]
  EXPECT_EQ(a.to_vector(), (std::vector<float>{0, 7, 0, 0, 7, 0, 1, 2, 3}));
}

}  // namespace
}  // namespace qkv
