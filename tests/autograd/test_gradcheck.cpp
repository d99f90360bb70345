// test_gradcheck.cpp: every differentiable op held to finite differences (gradcheck.h), on
// several shapes, broadcasting included. Each row is one ctest test under the label gradcheck.
#include <functional>

#include "autograd/all.h"
#include "tests/testing.h"

namespace qkv {
namespace {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
enum class Domain { any, positive, away_from_zero };

struct Case {
  const char* name;
  std::vector<Shape> shapes;
  Fn f;
  Domain domain = Domain::any;
};

Tensor ids(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return from_vector(v, {n});
}

// Inputs: standard normals, moved into the op's domain (and away from its kinks).
std::vector<Tensor> make_inputs(const Case& c, uint64_t seed) {
  Generator g(seed);
  std::vector<Tensor> xs;
  for (const Shape& s : c.shapes) {
    Tensor x = randn(s, &g);
    if (c.domain == Domain::positive) x = raw::add(raw::abs(x), 0.5f);
    if (c.domain == Domain::away_from_zero) x = raw::add(x, raw::mul(raw::sign(x), 0.2f));
    xs.push_back(x);
  }
  return xs;
}

Tensor causal_mask(int64_t T) {
  return raw::triu(ones({T, T}, Dtype::boolean), 1);
}

const std::vector<Case> kCases = {
    {"add_same_shape", {{2, 3}, {2, 3}}, [](auto& x) { return x[0] + x[1]; }},
    {"add_broadcast_row", {{2, 3}, {3}}, [](auto& x) { return x[0] + x[1]; }},
    {"add_broadcast_both", {{4, 1, 3}, {2, 3}}, [](auto& x) { return x[0] + x[1]; }},
    {"sub_broadcast_column", {{3, 4}, {3, 1}}, [](auto& x) { return x[0] - x[1]; }},
    {"mul_same_shape", {{5}, {5}}, [](auto& x) { return x[0] * x[1]; }},
    {"mul_broadcast_scalar_tensor", {{2, 3}, {}}, [](auto& x) { return x[0] * x[1]; }},
    {"mul_reused_input", {{3, 2}}, [](auto& x) { return x[0] * x[0] * x[0]; }},
    {"div_broadcast", {{2, 3}, {3}}, [](auto& x) { return x[0] / x[1]; }, Domain::positive},
    {"pow_tensor_exponent",
     {{2, 3}, {2, 3}},
     [](auto& x) { return pow(x[0], x[1]); },
     Domain::positive},
    {"pow_number", {{4}}, [](auto& x) { return pow(x[0], 3.0f); }},
    {"square", {{2, 2}}, [](auto& x) { return pow(x[0], 2.0f); }},
    {"numbers_on_both_sides",
     {{3}},
     [](auto& x) { return (2.0f * x[0] + 1.0f) / 3.0f - (1.0f - x[0]) * 0.5f; }},
    {"number_over_tensor", {{3}}, [](auto& x) { return 2.5f / x[0]; }, Domain::positive},
    {"reciprocal", {{3}}, [](auto& x) { return reciprocal(x[0]); }, Domain::positive},
    {"neg", {{2, 3}}, [](auto& x) { return -x[0]; }},
    {"exp", {{2, 3}}, [](auto& x) { return exp(x[0]); }},
    {"log", {{2, 3}}, [](auto& x) { return log(x[0]); }, Domain::positive},
    {"sqrt", {{2, 3}}, [](auto& x) { return sqrt(x[0]); }, Domain::positive},
    {"abs", {{2, 3}}, [](auto& x) { return abs(x[0]); }, Domain::away_from_zero},
    {"tanh", {{2, 3}}, [](auto& x) { return tanh(x[0]); }},
    {"sigmoid", {{2, 3}}, [](auto& x) { return sigmoid(x[0]); }},
    {"relu", {{3, 4}}, [](auto& x) { return relu(x[0]); }, Domain::away_from_zero},
    {"gelu_erf", {{3, 4}}, [](auto& x) { return gelu(x[0]); }},
    {"gelu_tanh", {{3, 4}}, [](auto& x) { return gelu(x[0], GeluApproximation::tanh); }},
    {"clamp", {{3, 4}}, [](auto& x) { return clamp(x[0], -0.5f, 0.5f); }, Domain::away_from_zero},
    {"maximum_broadcast", {{2, 3}, {3}}, [](auto& x) { return maximum(x[0], x[1]); }},
    {"minimum", {{2, 3}, {2, 3}}, [](auto& x) { return minimum(x[0], x[1]); }},
    {"where_broadcast",
     {{2, 3}, {3}},
     [](auto& x) {
       return where(from_vector(std::vector<bool>{true, false, true, false, false, true}, {2, 3}),
                    x[0], x[1]);
     }},
    {"masked_fill_causal",
     {{4, 4}},
     [](auto& x) { return masked_fill(x[0], causal_mask(4), -1e9f); }},
    {"tril", {{3, 3}}, [](auto& x) { return tril(x[0]); }},
    {"triu_batched", {{2, 3, 3}}, [](auto& x) { return triu(x[0], 1); }},
    {"sum_all", {{2, 3}}, [](auto& x) { return sum(x[0]); }},
    {"sum_dim", {{2, 3, 4}}, [](auto& x) { return sum(x[0], 1); }},
    {"sum_dims_keepdim",
     {{2, 3, 4}},
     [](auto& x) {
       return sum(x[0], {0, -1}, true);
     }},
    {"mean_all", {{7}}, [](auto& x) { return mean(x[0]); }},
    {"mean_dim_keepdim", {{3, 5}}, [](auto& x) { return mean(x[0], -1, true); }},
    {"var_dim", {{3, 5}}, [](auto& x) { return var(x[0], 1); }},
    {"var_dim_keepdim_population", {{4, 3}}, [](auto& x) { return var(x[0], 0, true, 0); }},
    {"max_all", {{3, 4}}, [](auto& x) { return max(x[0]); }},
    {"max_dim", {{3, 4}}, [](auto& x) { return max(x[0], 1).values; }},
    {"min_dim_keepdim", {{3, 4}}, [](auto& x) { return min(x[0], 0, true).values; }},
    {"softmax_last_dim", {{3, 5}}, [](auto& x) { return softmax(x[0], -1); }},
    {"softmax_first_dim", {{4, 3}}, [](auto& x) { return softmax(x[0], 0); }},
    {"log_softmax", {{3, 5}}, [](auto& x) { return log_softmax(x[0], 1); }},
    {"cross_entropy",
     {{4, 6}},
     [](auto& x) {
       return cross_entropy(x[0], ids({0, 5, 2, 2}));
     }},
    {"cross_entropy_ignore_index",
     {{4, 6}},
     [](auto& x) {
       return cross_entropy(x[0], ids({1, -100, 3, -100}));
     }},
    {"view",
     {{2, 6}},
     [](auto& x) {
       return view(x[0], {3, 4}) * view(x[0], {3, 4});
     }},
    {"reshape_of_transpose",
     {{2, 3}},
     [](auto& x) { return reshape(transpose(x[0], 0, 1), {6}) * arange(0.0, 6.0); }},
    {"transpose", {{2, 3, 4}}, [](auto& x) { return transpose(x[0], 0, 2); }},
    {"permute",
     {{2, 3, 4}},
     [](auto& x) {
       return permute(x[0], {2, 0, 1});
     }},
    {"unsqueeze_squeeze_flatten",
     {{3, 4}},
     [](auto& x) { return flatten(squeeze(unsqueeze(x[0], 1), 1)); }},
    {"expand",
     {{1, 3}},
     [](auto& x) {
       return expand(x[0], {4, 3}) * raw::view(arange(0.0, 12.0), {4, 3});
     }},
    {"narrow", {{5, 3}}, [](auto& x) { return narrow(x[0], 0, 1, 3); }},
    {"slice_with_step", {{7, 2}}, [](auto& x) { return slice(x[0], 0, 1, 7, 2); }},
    {"select", {{3, 4}}, [](auto& x) { return select(x[0], 1, -1); }},
    {"contiguous_of_view", {{3, 4}}, [](auto& x) { return contiguous(transpose(x[0], 0, 1)); }},
    {"cat",
     {{2, 3}, {2, 1}},
     [](auto& x) {
       return cat({x[0], x[1]}, 1);
     }},
    {"stack",
     {{2, 3}, {2, 3}},
     [](auto& x) {
       return stack({x[0], x[1]}, 1);
     }},
    {"split",
     {{5, 2}},
     [](auto& x) {
       auto p = split(x[0], 2);
       return p[0] * 2.0f + sum(p[2]);
     }},
    {"chunk",
     {{2, 6}},
     [](auto& x) {
       auto p = chunk(x[0], 3, 1);
       return p[0] * p[2];
     }},
    {"index_select_repeated",
     {{4, 3}},
     [](auto& x) {
       return index_select(x[0], 0, ids({2, 0, 2}));
     }},
    {"embedding_repeated_ids",
     {{5, 3}},
     [](auto& x) {
       return embedding(x[0], from_vector(std::vector<int64_t>{1, 4, 1, 1}, {2, 2}));
     }},
    {"matmul_2d", {{3, 4}, {4, 2}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_awkward", {{7, 33}, {33, 5}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_batched_broadcast",
     {{2, 1, 3, 4}, {3, 4, 2}},
     [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_vector_matrix", {{3}, {3, 2}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_matrix_vector", {{2, 3}, {3}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_dot", {{4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_batch_times_weight", {{2, 3, 4}, {4, 5}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"causal_softmax_fused",
     {{2, 4, 6}},
     [](auto& x) { return causal_softmax(x[0], 1.0f, 1.7f, 2); }},
    {"layer_norm_fused",
     {{2, 3, 6}, {6}, {6}},
     [](auto& x) { return layer_norm(x[0], x[1], x[2], 1e-5); }},
    {"matmul_batch_times_weight_t",
     {{2, 3, 4}, {3, 5}},
     [](auto& x) { return matmul(transpose(x[0], 1, 2), x[1]); }},
    {"matmul_batched_vector", {{2, 3, 4}, {4}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_vector_batched", {{4}, {2, 4, 3}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"matmul_matrix_batched", {{2, 4}, {3, 4, 2}}, [](auto& x) { return matmul(x[0], x[1]); }},
    {"linear_fused", {{2, 3, 4}, {5, 4}, {5}}, [](auto& x) { return linear(x[0], x[1], x[2]); }},
    {"linear_fused_no_bias_vector", {{4}, {3, 4}}, [](auto& x) { return linear(x[0], x[1]); }},
    {"linear_fused_transposed_input",
     {{2, 4, 3}, {5, 4}, {5}},
     [](auto& x) { return linear(transpose(x[0], 1, 2), x[1], x[2]); }},
    {"matmul_transposed_view",
     {{3, 4}, {5, 4}},
     [](auto& x) { return matmul(x[0], transpose(x[1], 0, 1)); }},
    {"fused_attention_causal",
     {{2, 2, 5, 6}, {2, 2, 5, 6}, {2, 2, 5, 6}},
     [](auto& x) { return fused_attention(x[0], x[1], x[2], true).output; }},
    {"fused_attention_full",
     {{1, 1, 4, 3}, {1, 1, 4, 3}, {1, 1, 4, 3}},
     [](auto& x) { return fused_attention(x[0], x[1], x[2], false).output; }},
    {"fused_attention_strided_heads",
     {{2, 4, 9}},
     [](auto& x) {
       // q, k, v as the heads of one (B, T, 3C) tensor, the way the tiny GPT's Linears make them
       auto heads = [&](int64_t part) {
         return transpose(view(narrow(x[0], -1, part * 3, 3), {2, 4, 1, 3}), 1, 2);
       };
       return fused_attention(heads(0), heads(1), heads(2), true).output;
     }},
    {"causal_attention",
     {{5, 4}, {4, 2}, {4, 2}, {4, 3}},
     [](auto& x) {
       const Tensor q = matmul(x[0], x[1]), k = matmul(x[0], x[2]), v = matmul(x[0], x[3]);
       const Tensor scores = matmul(q, transpose(k, 0, 1)) / std::sqrt(2.0f);
       return matmul(softmax(masked_fill(scores, causal_mask(5), -INFINITY), -1), v);
     }},
};

class Gradcheck : public ::testing::TestWithParam<Case> {};

TEST_P(Gradcheck, AnalyticEqualsFiniteDifferences) {
  const Case& c = GetParam();
  for (uint64_t seed : {1, 2}) {
    const GradcheckResult r = gradcheck(c.f, make_inputs(c, seed), {.seed = seed});
    EXPECT_TRUE(r.ok) << c.name << " seed " << seed << "\n" << r.summary;
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, Gradcheck, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// gradcheck itself must fail on a wrong formula: a "square" whose backward forgets the 2.
TEST(GradcheckCatches, AWrongBackwardFormula) {
  auto wrong_square = [](const std::vector<Tensor>& x) {
    const Tensor a = x[0];
    return record("WrongSquareBackward", raw::mul(a, a), {a},
                  [a = SavedTensor(a)](const Tensor& dout) -> Grads {
                    return {raw::mul(dout, a.get())};  // should be 2 * a
                  });
  };
  const GradcheckResult r = gradcheck(wrong_square, {tensor({0.5f, -1.0f, 2.0f})});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.summary.find("FAILED"), std::string::npos) << r.summary;
  EXPECT_GT(r.inputs[0].max_abs_error, 0.1);
}

}  // namespace
}  // namespace qkv
