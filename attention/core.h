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
// Grouped-query attention: k and v may have fewer heads than q, q (..., H, T_q, D) against
// k, v (..., H_kv, T_k, D) with H a multiple of H_kv; query head h then reads key and value
// head h / (H / H_kv). H_kv = 1 is multi-query attention, H_kv = H plain multi-head.
#pragma once

#include <optional>

#include "attention/positions.h"
#include "nn/all.h"

namespace qkv::attention {

// Every member has an initializer, so a designated initializer such as {.mask = keep} names only
// what it changes (GCC 12 warns, -Wmissing-field-initializers, about members without one).
struct AttentionOptions {
  // bool: true where a query may attend to a key (torch's attn_mask convention); float: added to
  // the scores (0 to keep, -inf to hide). Broadcasts to (..., T_q, T_k). Mind the opposite
  // meaning of masked_fill's mask, true where it fills (as in torch): the mask that hides the
  // future for masked_fill is logical_not(causal_mask(T)). Given that one here instead, the
  // weights change completely (a query sees only its future), and the last query, whose every
  // key is then hidden, gets weights and output of zero (below).
  Tensor mask{};
  // Query i sees keys j <= i + (T_k - T_q): the usual lower triangle when T_q == T_k, and the
  // right alignment for a query block that comes after cached keys (T_q < T_k).
  bool causal = false;
  // Sliding window (with causal): query i sees only its last `window` keys, itself included:
  // i' - window < j <= i' with i' = i + (T_k - T_q). 0: no limit; a window >= T_k is causal.
  int64_t window = 0;
  // Multiplies the scores; unset: divide by sqrt(D), as the papers and articles write it.
  std::optional<double> scale{};
  // Dropout on the weights (1 / (1 - p) scaling); the caller passes 0 outside training.
  double dropout_p = 0.0;
  Generator* generator = nullptr;  // for the dropout draws; default: the global generator
  // RoPE (positions.h): rotate q at positions (T_k - T_q) + i and k at positions j before the
  // scores, so the scores depend on relative positions.
  bool rope = false;
  double rope_base = 10000.0;
  // ALiBi (positions.h): one slope per query head; q is (..., H, T_q, D) with H = the number of
  // slopes, and head h's scores get -slope_h * |i' - j|.
  std::vector<float> alibi_slopes{};
  // Logit soft-capping (Gemma 2, Grok): scores <- cap * tanh(scores / cap) after scaling, so
  // no score leaves (-cap, cap) and no single key can take all the weight. Unset: none.
  std::optional<double> softcap{};
  // Attention sinks (gpt-oss): one logit per query head, shape (H,), that joins every row's
  // softmax as an extra key with no value: weight_j = e^s_j / (e^sink + sum_k e^s_k), so a row
  // may give its weight to nothing. Differentiable (a learned parameter in the modules).
  Tensor sinks{};
  // Flash attention (tensor/flash_attention.h): the same output computed in tiles with an
  // online softmax, O(T * D) memory instead of O(T_q * T_k); the weights are never built, so
  // AttentionOutput::weights is undefined. Works with causal, window, scale, rope, ALiBi and
  // grouped heads; a mask, dropout, softcap or sinks need the standard path (an error says so).
  bool flash = false;
};

struct AttentionOutput {
  Tensor output;   // (..., T_q, D_v)
  Tensor weights;  // (..., T_q, T_k): the weights used (after dropout, if any), with history;
                   // undefined with flash, which never builds them; from the fused kernel
                   // (below), to look at only: a backward through them throws
};

// A query row with no key it may see (every score -inf) has weights of zero and an output of
// zero, with zero gradient, where torch.softmax would give NaN: a padded query position should
// contribute nothing, not poison the loss.
//
// Fast paths (tensor/fused.h), chosen inside when fused paths are on, each with the numbers of
// the composed ops it stands for: plain self-attention (q, k, v (B, H, T, D) of one shape, no
// mask, window, scale, dropout, ALiBi, soft-cap or sinks; causal or not) runs the fused
// multi-head kernel (tensor/fused_attention.h), as the tiny GPT's training does; otherwise a
// plain causal mask runs the one-kernel causal softmax (autograd/ops.h). set_fused_enabled(false)
// or QKV_FUSED=0 runs the composed ops for every call.
AttentionOutput scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options = {});

// ---- the heads: one tensor per head group, and back ----------------------------------------
// (B, T, H * D) -> (B, H, T, D): head h is the D-wide slice h of every token's vector; a view.
Tensor split_heads(const Tensor& x, int64_t num_heads);
// (B, H, T, D) -> (B, T, H * D): the heads side by side again (a view when the heads are
// already stored as (B, T, H, D), as the fused path stores them; else one copy).
Tensor merge_heads(const Tensor& x);

// ---- masks: bool, true where attention is allowed ------------------------------------------
// These keep: true = may attend, the meaning of scaled_dot_product_attention's mask and of
// torch's attn_mask. masked_fill's mask fills (hides) where true: to hide with one of these,
// pass logical_not(mask), as lesson 12 shows.

// (T_q, T_k): key j is visible to query i when j <= i + (T_k - T_q).
Tensor causal_mask(int64_t T_q, int64_t T_k);
inline Tensor causal_mask(int64_t T) {
  return causal_mask(T, T);
}

// (B, 1, 1, T): key j of sequence b is real (j < lengths[b]), not padding. Broadcasts against
// (B, H, T_q, T) scores; combine with a causal mask by logical and (raw::mul of bools works).
Tensor padding_mask(const Tensor& lengths, int64_t T);

// (T_q, T_k): causal, and at most `window` keys back: i' - window < j <= i', i' = i + T_k - T_q.
Tensor sliding_window_mask(int64_t T_q, int64_t T_k, int64_t window);
inline Tensor sliding_window_mask(int64_t T, int64_t window) {
  return sliding_window_mask(T, T, window);
}

// Packed sequences: several documents laid end to end in one row of T tokens, with doc_ids
// naming each token's document. Query i sees key j only within its own document (and, with
// causal, only j <= i): block-diagonal. doc_ids (T,) gives (T, T); (B, T) gives (B, 1, T, T).
Tensor document_mask(const Tensor& doc_ids, bool causal = true);

// Prefix LM (T5's, PaliGemma's): the first `prefix` positions see each other both ways (an
// encoder over the prompt); every later position sees the prefix and itself and what came
// before it (a decoder): key j is visible to query i when j <= i or j < prefix. (T, T).
Tensor prefix_lm_mask(int64_t T, int64_t prefix);

}  // namespace qkv::attention
