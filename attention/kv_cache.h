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
//
// A rolling cache (StreamingLLM, Xiao et al. 2023) bounds it: with window w and keep_first n,
// only the first n tokens (the "attention sinks" that softmax keeps leaning on) and the last w
// are kept; the ones between are dropped as new tokens arrive. A query then sees the first n
// tokens and the last w, however long the stream. Keys keep the RoPE angle of their original
// position (they are rotated before caching).
//
// Appending by concatenation copies the whole cache every step: O(T^2) bytes for T tokens,
// and a fresh allocation each time. Generation knows how long it will run, so it sets
// `capacity`: the cache then allocates room for that many positions once, and appends write
// into the room in place, k and v being views of its first T positions (llm.c and Hugging
// Face's static cache keep one buffer the same way). Decoding 256 tokens at GPT-2 small's
// size, the copies and fresh allocations took 9% of the time (bench/README.md). In place is
// only taken with grad mode off: a write in place would not be recorded by autograd, so with
// grad mode on, or past the capacity, or when the cache rolls, appends concatenate as above.
#pragma once

#include "nn/all.h"

namespace qkv::attention {

struct KVCache {
  Tensor k, v;           // (B, H_kv, T_kept, D) and (B, H_kv, T_kept, D_v); undefined when empty
  int64_t position = 0;  // tokens appended so far: the position of the next one
  // Rolling: keep at most keep_first + window positions (window 0: keep everything).
  int64_t keep_first = 0, window = 0;
  // Positions to make room for on the first append (0: none, every append concatenates).
  int64_t capacity = 0;
  // The room: (B, H_kv, capacity, D) and (B, H_kv, capacity, D_v), of which k and v are the
  // first T_kept positions while appends go in place; undefined otherwise.
  Tensor k_room, v_room;

  KVCache() = default;
  // A copy holds the same keys and values but no room: its next append makes a room of its
  // own. Copies sharing one room (two continuations of one prompt) would each write their next
  // position into the same place, and one would silently read the other's keys. (Every field
  // but k_room and v_room is copied: a field added above belongs in this list.)
  KVCache(const KVCache& other)
      : k(other.k),
        v(other.v),
        position(other.position),
        keep_first(other.keep_first),
        window(other.window),
        capacity(other.capacity) {}
  KVCache& operator=(const KVCache& other) { return *this = KVCache(other); }
  KVCache(KVCache&&) = default;
  KVCache& operator=(KVCache&&) = default;

  int64_t length() const { return k.defined() ? k.size(-2) : 0; }  // positions kept now
  // Appends keys and values of new positions (B, H_kv, T_new, D) along T, then drops the
  // middle if the cache rolls.
  void append(const Tensor& k_new, const Tensor& v_new);
  void clear() {
    k = v = k_room = v_room = Tensor();
    position = 0;
  }
  // The kept keys and values, in bytes (a room's positions beyond them are not counted).
  size_t bytes() const;
};

}  // namespace qkv::attention
