// test_errors.cpp: bad input meets a qkv::Error naming the operation and what it saw.
#include <cstdint>
#include <functional>

#include "tensor/checked.h"
#include "tests/testing.h"

namespace qkv {
namespace {

struct BadInput {
  const char* name;
  std::function<void()> call;
  std::vector<std::string> message_parts;
};

const std::vector<BadInput> kBadInputs = {
    {"add_shapes_do_not_broadcast",
     [] {
       raw::add(zeros({2, 3}), zeros({4}));
     },
     {"add: shapes that broadcast, got (2, 3) and (4,)"}},
    {"mul_shapes_do_not_broadcast",
     [] {
       raw::mul(zeros({2, 3}), zeros({3, 2}));
     },
     {"mul", "(2, 3)", "(3, 2)"}},
    {"matmul_inner_dims",
     [] {
       raw::matmul(zeros({2, 3}), zeros({4, 5}));
     },
     {"matmul: inner dimensions must match, got a (2, 3) and b (4, 5)"}},
    {"matmul_scalar", [] { raw::matmul(scalar_tensor(1), zeros({2})); }, {"matmul", "()"}},
    {"matmul_batch_broadcast",
     [] {
       raw::matmul(zeros({2, 2, 3}), zeros({3, 3, 4}));
     },
     {"matmul", "(2,)", "(3,)"}},
    {"transpose_dim_out_of_range",
     [] {
       raw::transpose(zeros({2, 3}), 0, 2);
     },
     {"transpose: dim must be in range [-2, 1], got 2"}},
    {"sum_dim_out_of_range",
     [] {
       raw::sum(zeros({2, 3}), -3);
     },
     {"sum", "[-2, 1]", "-3"}},
    {"softmax_dim_out_of_range", [] { raw::softmax(zeros({4}), 1); }, {"softmax", "got 1"}},
    {"select_index_out_of_range",
     [] {
       raw::select(zeros({2, 3}), 1, 3);
     },
     {"select", "[-3, 2]", "(2, 3)", "got 3"}},
    {"at_index_out_of_range",
     [] {
       zeros({2, 3}).at({2, 0});
     },
     {"at", "(2, 3)", "got 2"}},
    {"at_wrong_rank",
     [] {
       zeros({2, 3}).at({1});
     },
     {"at", "1 indices", "(2, 3)"}},
    {"negative_size",
     [] {
       zeros({2, -1});
     },
     {"non-negative", "(2, -1)"}},
    {"view_bad_numel",
     [] {
       raw::view(zeros({2, 3}), {4});
     },
     {"view", "(4,)", "size 6"}},
    {"view_two_minus_ones",
     [] {
       raw::view(zeros({2, 3}), {-1, -1});
     },
     {"view", "-1"}},
    {"view_strides_cannot_express",
     [] {
       raw::view(raw::transpose(zeros({2, 3}), 0, 1), {6});
     },
     {"view", "strides", "(3, 2)"}},
    {"expand_mismatch",
     [] {
       raw::expand(zeros({2, 3}), {2, 4});
     },
     {"expand", "(2, 3)", "(2, 4)"}},
    {"expand_fewer_dims",
     [] {
       raw::expand(zeros({2, 3}), {3});
     },
     {"expand", "(2, 3)"}},
    {"permute_repeats",
     [] {
       raw::permute(zeros({2, 3}), {0, 0});
     },
     {"permute", "(0, 0)"}},
    {"narrow_past_end",
     [] { raw::narrow(zeros({4}), 0, 2, 3); },
     {"narrow", "start 2", "length 3"}},
    {"cat_mismatched",
     [] {
       raw::cat({zeros({2, 3}), zeros({2, 4})}, 0);
     },
     {"cat", "(2, 3)", "(2, 4)"}},
    {"cat_nothing", [] { raw::cat({}, 0); }, {"cat", "none"}},
    {"stack_mismatched",
     [] {
       raw::stack({zeros({2}), zeros({3})});
     },
     {"stack", "(2,)", "(3,)"}},
    {"split_zero", [] { raw::split(zeros({4}), 0); }, {"split", "got 0"}},
    {"chunk_zero", [] { raw::chunk(zeros({4}), 0); }, {"chunk", "chunks > 0", "got 0"}},
    {"chunk_0d", [] { raw::chunk(scalar_tensor(1.0f), 2); }, {"chunk", "at least one dim"}},
    {"index_out_of_range",
     [] {
       raw::index_select(zeros({3, 2}), 0, from_vector(std::vector<int64_t>{3}, {1}));
     },
     {"index_select", "(3, 2)", "got 3"}},
    {"index_wrong_dtype",
     [] {
       raw::index_select(zeros({3, 2}), 0, zeros({1}));
     },
     {"index_select", "torch.float32"}},
    {"embedding_id_too_big",
     [] {
       raw::embedding(zeros({5, 2}), from_vector(std::vector<int64_t>{1, 5}, {2}));
     },
     {"embedding", "[0, 4]", "got 5"}},
    {"embedding_negative_id",
     [] {
       raw::embedding(zeros({5, 2}), from_vector(std::vector<int64_t>{-1}, {1}));
     },
     {"embedding", "got -1"}},
    {"masked_fill_float_mask",
     [] { raw::masked_fill(zeros({2}), zeros({2}), 1); },
     {"masked_fill", "bool", "torch.float32"}},
    {"masked_fill_mask_too_big",
     [] {
       raw::masked_fill(zeros({2}), zeros({3, 2}, Dtype::boolean), 1);
     },
     {"masked_fill", "(2,)", "(3, 2)"}},
    {"exp_of_ints", [] { raw::exp(arange(3)); }, {"exp", "float32", "torch.int64"}},
    {"tril_of_vector", [] { raw::tril(zeros({3})); }, {"tril", "2 dims", "(3,)"}},
    {"item_of_many", [] { zeros({2}).item(); }, {"item", "(2,)"}},
    {"data_ptr_wrong_type", [] { zeros({2}).data_ptr<int64_t>(); }, {"data_ptr", "torch.int64"}},
    {"ragged_rows",
     [] {
       tensor({{1., 2.}, {3.}});
     },
     {"tensor", "length"}},
    {"from_vector_size",
     [] {
       from_vector(std::vector<float>{1, 2, 3}, {2, 2});
     },
     {"from_vector", "(2, 2)", "got 3"}},
    {"arange_zero_step", [] { arange(0.0, 1.0, 0.0); }, {"arange", "non-zero step"}},
    {"arange_wrong_direction", [] { arange(5, 0, 1); }, {"arange", "start 5"}},
    {"randint_empty_range", [] { randint(3, 3, {2}); }, {"randint", "low 3", "high 3"}},
    {"clamp_min_above_max", [] { raw::clamp(zeros({1}), 2.0f, 1.0f); }, {"clamp", "min <= max"}},
    {"undefined_tensor", [] { Tensor().shape(); }, {"undefined"}},
    // shape_of(t) in a message: the shape of a defined tensor, a word for an undefined one.
    {"matmul_epilogue_undefined_a",
     [] {
       raw::matmul_epilogue(Tensor(), zeros({3, 4}), zeros({4}));
     },
     {"matmul_epilogue: float32 matrices (M, K) and (K, N), got undefined and (3, 4)"}},
    {"matmul_epilogue_bias_shape",
     [] {
       raw::matmul_epilogue(zeros({2, 3}), zeros({3, 4}), zeros({3}));
     },
     {"matmul_epilogue: a float32 bias of shape (4,), got (3,)"}},
    {"absurd_size",
     [] {
       zeros({int64_t{1} << 30, int64_t{1} << 30});
     },
     {"too large"}},
    // Sizes whose sums or products do not fit: a qkv::Error naming the op and the values.
    {"narrow_length_overflows",
     [] {
       raw::narrow(zeros({4}), 0, 2, INT64_MAX);
     },
     {"narrow", "sum fits in int64", "2 + 9223372036854775807"}},
    {"expand_past_the_size_limit",
     [] {
       raw::expand(zeros({1}), {int64_t{1} << 62, int64_t{1} << 62});
     },
     {"expand", "too large"}},
    {"arange_too_many_values",
     [] {
       arange(int64_t{0}, INT64_MAX, int64_t{1});
     },
     {"arange", "at most 2^40 values"}},
    {"arange_float_span_overflows",
     [] {
       arange(-1e308, 1e308, 1.0);
     },
     {"arange", "at most 2^40 values"}},
    {"view_product_too_large",
     [] {
       raw::view(zeros({4}), {int64_t{1} << 40, int64_t{1} << 40, -1});
     },
     {"view", "too large"}},
    {"empty_beyond_the_byte_limit",
     [] {
       zeros({int64_t{1} << 39});
     },
     {"empty", "max_tensor_bytes()", "(549755813888,)", "2199023255552 bytes"}},
};

class BadInputs : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputs, ThrowAQkvErrorThatNamesTheProblem) {
  EXPECT_TRUE(testing::throws_error(GetParam().call, GetParam().message_parts));
}

INSTANTIATE_TEST_SUITE_P(Table, BadInputs, ::testing::ValuesIn(kBadInputs),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Errors, QkvErrorIsAStdException) {
  try {
    raw::add(zeros({2}), zeros({3}));
    FAIL() << "no throw";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()), "add: shapes that broadcast, got (2,) and (3,)");
  }
}

}  // namespace
}  // namespace qkv

namespace qkv {
namespace {

TEST(CheckedSizes, TheByteLimitCanBeSetAndIsSaidInTheError) {
  const size_t before = max_tensor_bytes();
  set_max_tensor_bytes(size_t{1} << 20);  // 1 MiB
  EXPECT_EQ(zeros({1 << 18}).numel(), 1 << 18);  // exactly 1 MiB of floats: allowed
  EXPECT_TRUE(testing::throws_error([] { zeros({(1 << 18) + 1}); },
                                    {"empty", "max_tensor_bytes() = 1048576", "1048580 bytes"}));
  set_max_tensor_bytes(before);
  EXPECT_TRUE(testing::throws_error([] { set_max_tensor_bytes(0); }, {"set_max_tensor_bytes"}));
}

TEST(CheckedSizes, ExtremeButValidArgumentsGiveTheRightShapes) {
  const Tensor x = arange(int64_t{0}, int64_t{5}, int64_t{1});
  // A step beyond every size: one element (x[0:5:huge] in Python), no wrapped stride.
  const Tensor every = raw::slice(x, 0, 0, 5, INT64_MAX);
  EXPECT_EQ(every.shape(), Shape({1}));
  EXPECT_EQ(every.to_vector<int64_t>(), std::vector<int64_t>{0});
  EXPECT_EQ(raw::slice(x, 0, 1, 5, 3).to_vector<int64_t>(), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(raw::split(x, INT64_MAX, 0).size(), 1u);
  EXPECT_EQ(raw::split(x, 2, 0).size(), 3u);
  // arange over the whole int64 range in three steps, as Python's range would give.
  EXPECT_EQ(arange(INT64_MIN, INT64_MAX, INT64_MAX).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN, -1, INT64_MAX - 1}));
  EXPECT_EQ(arange(int64_t{5}, int64_t{-5}, int64_t{-4}).to_vector<int64_t>(),
            (std::vector<int64_t>{5, 1, -3}));
  // randint over the whole range: every draw in it, no overflow on the way.
  for (const int64_t v : randint(INT64_MIN, INT64_MAX, {64}).to_vector<int64_t>())
    EXPECT_TRUE(v >= INT64_MIN && v < INT64_MAX);
}

TEST(CheckedSizes, AddAndMultiplyNameTheOpAndTheValues) {
  EXPECT_EQ(checked_add(INT64_MAX - 1, 1, "t"), INT64_MAX);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31, "t"), int64_t{1} << 62);
  EXPECT_TRUE(testing::throws_error([] { checked_add(INT64_MAX, 1, "op"); },
                                    {"op", "9223372036854775807 + 1"}));
  EXPECT_TRUE(testing::throws_error([] { checked_add(INT64_MIN, -1, "op"); }, {"op"}));
  EXPECT_TRUE(testing::throws_error([] { checked_mul(int64_t{1} << 32, int64_t{1} << 31, "op"); },
                                    {"op", "4294967296 * 2147483648"}));
  EXPECT_TRUE(testing::throws_error([] { checked_mul(-1, INT64_MIN, "op"); }, {"op"}));
}

}  // namespace
}  // namespace qkv
