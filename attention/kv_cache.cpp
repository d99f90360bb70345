// kv_cache.cpp: appending to the cache (see kv_cache.h).
#include "attention/kv_cache.h"

namespace qkv::attention {

void KVCache::append(const Tensor& k_new, const Tensor& v_new) {
  check(k_new.defined() && v_new.defined() && k_new.dim() == 4 && v_new.dim() == 4 &&
            k_new.size(0) == v_new.size(0) && k_new.size(1) == v_new.size(1) &&
            k_new.size(2) == v_new.size(2),
        "KVCache::append", "keys and values (B, H_kv, T_new, D) with the same B, H_kv, T_new, got ",
        shape_of(k_new), " and ", shape_of(v_new));
  check(keep_first >= 0 && window >= 0 && capacity >= 0, "KVCache::append",
        "keep_first, window and capacity >= 0, got ", keep_first, ", ", window, " and ", capacity);
  check(!k.defined() || (k_new.size(0) == k.size(0) && k_new.size(1) == k.size(1) &&
                         k_new.size(3) == k.size(3) && v_new.size(3) == v.size(3)),
        "KVCache::append", "new keys and values shaped like the cached ones (B, H_kv, *, D) = ",
        k.defined() ? k.shape() : Shape{}, ", got ", k_new.shape(), " and ", v_new.shape());
  position += k_new.size(2);
  const int64_t kept = length(), T = kept + k_new.size(2);
  if (capacity >= T && window == 0 && !is_grad_enabled()) {  // in place, into the room
    if (!k_room.defined()) {  // the first append in place: make the room, move in what is kept
      k_room = Tensor::empty({k_new.size(0), k_new.size(1), capacity, k_new.size(3)});
      v_room = Tensor::empty({v_new.size(0), v_new.size(1), capacity, v_new.size(3)});
      if (kept > 0) {
        copy_(narrow(k_room, 2, 0, kept), k);
        copy_(narrow(v_room, 2, 0, kept), v);
      }
    }
    copy_(narrow(k_room, 2, kept, T - kept), k_new);
    copy_(narrow(v_room, 2, kept, T - kept), v_new);
    k = narrow(k_room, 2, 0, T);
    v = narrow(v_room, 2, 0, T);
    return;
  }
  k_room = v_room = Tensor();  // from here on, k and v are tensors of their own
  k = kept == 0 ? k_new : cat({k, k_new}, 2);
  v = kept == 0 ? v_new : cat({v, v_new}, 2);
  if (window > 0 && T > keep_first + window) {  // roll: first keep_first, then the last window
    auto roll = [&](const Tensor& t) {
      return keep_first > 0
                 ? cat({narrow(t, 2, 0, keep_first), narrow(t, 2, T - window, window)}, 2)
                 : narrow(t, 2, T - window, window);
    };
    k = roll(k);
    v = roll(v);
  }
}

size_t KVCache::bytes() const {
  return k.defined() ? static_cast<size_t>(k.numel() + v.numel()) * sizeof(float) : 0;
}

}  // namespace qkv::attention
