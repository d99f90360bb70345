// kv_cache.h: the keys and values of the tokens so far, kept for incremental decoding.
//
// A language model generates one token at a time, and each new token attends to every token
// before it. Without a cache, step t recomputes the keys and values of all t tokens, though
// only the newest is new: O(t) projections per step, O(T^2) for T tokens. With the cache,
// step t projects one token, appends its key and value, and attends with the one query:
//
//   prefill:  x (B, T_0, C)  -> k, v (B, H_kv, T_0, D)    kept
//   step:     x (B, 1, C)    -> k, v (B, H_kv, 1, D)      appended: T_0 + 1, T_0 + 2, ...
//             the query attends to all cached keys (causal alignment: queries come last)
//
// Its size is what grouped-query attention shrinks: 2 * B * H_kv * T * D floats per layer.
#pragma once

#include "nn/all.h"

namespace qkv::attention {

struct KVCache {
  Tensor k, v;  // (B, H_kv, T_so_far, D) and (B, H_kv, T_so_far, D_v); undefined when empty

  int64_t length() const { return k.defined() ? k.size(-2) : 0; }  // positions cached so far
  // Appends keys and values of new positions (B, H_kv, T_new, D) along T.
  void append(const Tensor& k_new, const Tensor& v_new);
  void clear() { k = v = Tensor(); }
  size_t bytes() const;  // floats held, in bytes
};

}  // namespace qkv::attention
