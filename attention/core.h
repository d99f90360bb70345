// core.h: scaled dot-product attention, the one function every attention module is built on,
// and the masks it takes.
//
// Legend: B batch, H heads, T_q queries, T_k keys (= values), D query/key width, D_v value width.
//
//   scores  = q @ k^T / sqrt(D)                  (..., T_q, T_k)   how well each query matches each
//   key scores  = scores masked to -inf where a query may not look (or + an additive float mask)
//   weights = softmax(scores, dim=-1)            each row sums to 1: how much of each value to take
//   output  = weights @ v                        (..., T_q, D_v)
//
// Any leading dims broadcast (a (T, D) query against (B, H, T, D) keys is fine), so one
// function serves a single sentence, a batch, and every head of a batch at once.
#pragma once

#include <optional>

#include "nn/all.h"

namespace qkv::attention {

struct AttentionOptions {
  // bool: true where a query may attend to a key (torch's attn_mask convention); float: added to
  // the scores (0 to keep, -inf to hide). Broadcasts to (..., T_q, T_k).
  Tensor mask;
  // Query i sees keys j <= i + (T_k - T_q): the usual lower triangle when T_q == T_k, and the
  // right alignment for a query block that comes after cached keys (T_q < T_k).
  bool causal = false;
  // Multiplies the scores; unset: divide by sqrt(D), as the papers and articles write it.
  std::optional<double> scale;
  // Dropout on the weights (1 / (1 - p) scaling); the caller passes 0 outside training.
  double dropout_p = 0.0;
  Generator* generator = nullptr;  // for the dropout draws; default: the global generator
};

struct AttentionOutput {
  Tensor output;   // (..., T_q, D_v)
  Tensor weights;  // (..., T_q, T_k): the weights used (after dropout, if any), with history
};

// A query row with no key it may see (every score -inf) has weights of zero and an output of
// zero, with zero gradient, where torch.softmax would give NaN: a padded query position should
// contribute nothing, not poison the loss.
AttentionOutput scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options = {});

// ---- masks: bool, true where attention is allowed ------------------------------------------

// (T_q, T_k): key j is visible to query i when j <= i + (T_k - T_q).
Tensor causal_mask(int64_t T_q, int64_t T_k);
inline Tensor causal_mask(int64_t T) {
  return causal_mask(T, T);
}

// (B, 1, 1, T): key j of sequence b is real (j < lengths[b]), not padding. Broadcasts against
// (B, H, T_q, T) scores; combine with a causal mask by logical and (raw::mul of bools works).
Tensor padding_mask(const Tensor& lengths, int64_t T);

// (T, T): causal, and at most `window` keys back: i - window < j <= i.
Tensor sliding_window_mask(int64_t T, int64_t window);

}  // namespace qkv::attention
