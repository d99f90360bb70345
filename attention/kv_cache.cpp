// kv_cache.cpp: appending to the cache (see kv_cache.h).
#include "attention/kv_cache.h"

namespace qkv::attention {

void KVCache::append(const Tensor& k_new, const Tensor& v_new) {
  check(k_new.defined() && v_new.defined() && k_new.dim() == 4 && v_new.dim() == 4 &&
            k_new.size(0) == v_new.size(0) && k_new.size(1) == v_new.size(1) &&
            k_new.size(2) == v_new.size(2),
        "KVCache::append", "keys and values (B, H_kv, T_new, D) with the same B, H_kv, T_new, got ",
        shape_of(k_new), " and ", shape_of(v_new));
  check(keep_first >= 0 && window >= 0, "KVCache::append", "keep_first and window >= 0, got ",
        keep_first, " and ", window);
  position += k_new.size(2);
  if (!k.defined()) {
    k = k_new;
    v = v_new;
  } else {
    check(k_new.size(0) == k.size(0) && k_new.size(1) == k.size(1) && k_new.size(3) == k.size(3) &&
              v_new.size(3) == v.size(3),
          "KVCache::append",
          "new keys and values shaped like the cached ones (B, H_kv, *, D) = ", k.shape(), ", got ",
          k_new.shape(), " and ", v_new.shape());
    k = cat({k, k_new}, 2);
    v = cat({v, v_new}, 2);
  }
  const int64_t T = k.size(2);
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
