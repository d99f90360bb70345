// ops.h: the differentiable operations, under PyTorch's names.
//
// Each one computes with the raw kernel of the tensor floor and, when an input requires grad,
// records a Node whose backward is written right under the forward in the .cpp files:
//   ops_elementwise.cpp  arithmetic, activations, masks
//   ops_reduce.cpp       reductions, softmax, log_softmax, cross_entropy
//   ops_norm.cpp         layer_norm (fused)
//   ops_view.cpp         views, joins, index_select, embedding
//   ops_matmul.cpp       matmul
// With no input requiring grad (or inside a NoGradGuard) they cost what the raw kernel costs.
#pragma once

#include <optional>
#include <vector>

#include "autograd/engine.h"
#include "tensor/elementwise.h"
#include "tensor/flash_attention.h"
#include "tensor/reduce.h"
#include "tensor/view.h"

namespace qkv {

// ---- elementwise (broadcasting) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor add(const Tensor& a, float b);
Tensor sub(const Tensor& a, float b);
Tensor sub(float a, const Tensor& b);
Tensor mul(const Tensor& a, float b);
Tensor div(const Tensor& a, float b);
Tensor div(float a, const Tensor& b);  // reciprocal(b) * a, as torch computes it
Tensor reciprocal(const Tensor& a);
Tensor pow(const Tensor& a, float exponent);
Tensor neg(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
Tensor gelu(const Tensor& a, GeluApproximation approximate = GeluApproximation::none);
Tensor clamp(const Tensor& a, std::optional<float> min, std::optional<float> max);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
// Fills where mask is true (what to replace), as torch's; attention's masks mean "may see".
Tensor masked_fill(const Tensor& a, const Tensor& mask, float value);
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor triu(const Tensor& a, int64_t diagonal = 0);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, float b);
Tensor operator+(float a, const Tensor& b);
Tensor operator-(const Tensor& a, float b);
Tensor operator-(float a, const Tensor& b);
Tensor operator*(const Tensor& a, float b);
Tensor operator*(float a, const Tensor& b);
Tensor operator/(const Tensor& a, float b);
Tensor operator/(float a, const Tensor& b);

// ---- reductions, softmax, losses ----
Tensor sum(const Tensor& a);
Tensor sum(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim = false);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor var(const Tensor& a, int64_t dim, bool keepdim = false, int64_t correction = 1);
Tensor max(const Tensor& a);  // every element; ties share the gradient equally, as torch
Tensor min(const Tensor& a);
raw::ValuesIndices max(const Tensor& a, int64_t dim, bool keepdim = false);
raw::ValuesIndices min(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor softmax(const Tensor& a, int64_t dim);
// softmax(a * scale_mul / scale_div) over the last dim where key j <= query i + offset (rows
// are the second-to-last dim), exactly 0 elsewhere: attention's causal softmax, fused. Equal
// bit for bit to dividing, masked_fill with -inf, then softmax (tests/attention).
Tensor causal_softmax(const Tensor& a, float scale_mul, float scale_div, int64_t offset);
Tensor log_softmax(const Tensor& a, int64_t dim);
// Attention of q (N, T_q, D) over k (N_kv, T_k, D) and v (N_kv, T_k, D_v) in tiles, never
// building the (T_q, T_k) weights (tensor/flash_attention.h); its backward recomputes them
// tile by tile. The attention core's flash option (attention/core.h) is the way in.
Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                       const raw::FlashAttentionParams& params);
// Multi-head attention over q, k, v (B, H, T, D) of one shape, causal or not, with no mask,
// in one node (tensor/fused_attention.h): the same numbers as the attention core's composed
// ops (matmul, causal softmax, matmul), and a fast path the core chooses (attention/core.h).
// The output is (B, H, T, D); the weights (B, H, T, T) are there to be looked at: a backward
// that reaches them throws (the node's backward goes through the output alone).
struct FusedAttention {
  Tensor output, weights;
};
FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal);
// cross_entropy: mean over the targets that are not ignore_index of
// -log_softmax(logits)[target]. logits (N, V), targets (N,) int64.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100);

// layer_norm over the last dim, fused (ops_norm.cpp): (x - mean) / sqrt(var + eps) * w + b,
// var the population variance; weight and bias of shape (C,).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

// ---- views and joins (gradients flow back to the base) ----
Tensor view(const Tensor& a, const Shape& shape);
Tensor reshape(const Tensor& a, const Shape& shape);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor expand(const Tensor& a, const Shape& shape);
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor contiguous(const Tensor& a);
Tensor clone(const Tensor& a);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
Tensor embedding(const Tensor& weight, const Tensor& ids);

// ---- without a gradient ----
// Comparisons and masks (bool results), argmax (indices), dtype conversion and in-place writes
// have no derivative to record: they are the raw kernels (tensor/), here under torch's names
// so that a program reads the same with or without history. copy_ and fill_ write outside the
// graph, as torch's p.copy_(x) under torch.no_grad().
using raw::argmax;
using raw::copy_;
using raw::eq;
using raw::fill_;
using raw::ge;
using raw::gt;
using raw::isfinite;
using raw::le;
using raw::logical_and;
using raw::logical_not;
using raw::logical_or;
using raw::lt;
using raw::ne;
using raw::to;

// ---- matmul ----
Tensor matmul(const Tensor& a, const Tensor& b);
// linear: x W^T + b as one node, what nn::Linear runs (torch.nn.functional.linear). x (..., in),
// weight (out, in), bias (out,) or undefined. The same numbers as matmul(x, transpose(W)) + b;
// the backward makes the incoming gradient contiguous once and takes dx, dW and db from it.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace qkv
