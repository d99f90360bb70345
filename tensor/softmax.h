// softmax.h: the numerically stable softmax and log_softmax over any dim.
//
// softmax(x)_i = e^(x_i - m) / sum_j e^(x_j - m), with m = max_j x_j.
// Subtracting m changes nothing mathematically (it cancels) but keeps e^(...) <= 1, so a logit
// of 100 does not overflow float32's e^88 limit. A row that is all -inf (every key masked)
// gives NaN, exactly as torch.softmax does; the attention core decides what that row means.
#pragma once

#include <algorithm>

#include "tensor/tensor.h"

namespace qkv::raw {

Tensor softmax(const Tensor& a, int64_t dim);
// log_softmax(x)_i = x_i - m - log(sum_j e^(x_j - m)): never takes the log of a rounded-to-0
// probability, which is why cross-entropy is built on it rather than on log(softmax(x)).
Tensor log_softmax(const Tensor& a, int64_t dim);
// The two numbers log_softmax takes from a row of n: its max m and log(sum_j e^(x_j - m)),
// computed as log_softmax computes them, so x_i - m - log_sum (in that order, in float) is
// log_softmax's value bit for bit. e^(x - m) is written to `scratch` (n floats) on the way.
// cross_entropy takes these per row instead of writing every log-probability out.
struct LogSumExp {
  float max, log_sum;
};
LogSumExp log_sum_exp_row(const float* x, int64_t n, float* scratch);
// Attention's causal softmax in one kernel, over the last dim of x (..., T_q, T_k):
//   softmax(x * scale_mul / scale_div) where key j <= query i + offset, exactly 0 elsewhere
// (a row with no such key is all 0). Bit-identical to dividing, masking to -inf with
// masked_fill, then softmax, which is what it replaces.
Tensor causal_softmax(const Tensor& x, float scale_mul, float scale_div, int64_t offset);
// Its backward: (s * (dout - sum(dout * s))) * scale_mul / scale_div.
Tensor causal_softmax_backward(const Tensor& s, const Tensor& dout, float scale_mul,
                               float scale_div);
// softmax's backward: s * (dout - sum(dout * s)) along dim, given the softmax output s.
Tensor softmax_backward(const Tensor& s, const Tensor& dout, int64_t dim);

// The row kernels behind causal_softmax and the backwards, for kernels that walk their own rows
// (tensor/fused_attention.cpp). One row of n keys of which the first `visible` are seen:
//   y = softmax(x * scale_mul / scale_div) over keys [0, visible), 0 after (all 0 if none).
// It reads x's keys up to `visible` rounded up to whole chunks of kCausalRowChunk (or n), the
// count causal_row_keys_read gives: the hidden ones among those are read, then replaced by
// -inf, so their values do not matter, but a caller that computes only part of a row must
// compute at least that much of it.
constexpr int64_t kCausalRowChunk = 16;
constexpr int64_t causal_row_keys_read(int64_t n, int64_t visible) {
  return std::min(n, (visible + kCausalRowChunk - 1) / kCausalRowChunk * kCausalRowChunk);
}
void causal_softmax_row(const float* x, float* y, int64_t n, int64_t visible, float scale_mul,
                        float scale_div);
//   out = s * (dout - sum(dout * s)) * scale_mul / scale_div (out may be dout).
void softmax_backward_row(const float* s, const float* dout, float* out, int64_t n,
                          float scale_mul = 1.0f, float scale_div = 1.0f);

}  // namespace qkv::raw
