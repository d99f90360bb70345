// allocator.cpp: a size-class cache of large blocks in front of operator new (see allocator.h).
#include "tensor/allocator.h"

#include <atomic>
#include <bit>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define QKV_NO_BLOCK_CACHE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define QKV_NO_BLOCK_CACHE 1
#endif
#endif

namespace qkv {
namespace {

// (Unused under AddressSanitizer, which needs every block to go through new and delete.)
[[maybe_unused]] constexpr size_t kMinCached = size_t{1}
                                               << 20;  // 1 MiB: smaller blocks go straight to new
[[maybe_unused]] constexpr size_t kMaxCache = size_t{1} << 30;  // 1 GiB of idle blocks at most
constexpr std::align_val_t kAlign{64};  // a cache line; what the GEMM's loads like

// Rounds a large size up to one of four classes per power of two (2^k, 1.25, 1.5, 1.75 x 2^k),
// so a block serves requests up to 25% smaller than itself, and sizes that differ by a few
// bytes (a (B, T, T) tensor for T and T + 1) still share a class.
[[maybe_unused]] size_t size_class(size_t nbytes) {
  const size_t step = std::bit_floor(nbytes) / 4;
  return (nbytes + step - 1) / step * step;
}

struct BlockCache {
  std::mutex mutex;
  std::map<size_t, std::vector<std::byte*>> free_blocks;  // by size class
  size_t bytes = 0;
};

// Never destroyed: tensors that outlive main's statics may still free into it.
BlockCache& cache() {
  static BlockCache* c = new BlockCache;
  return *c;
}

std::atomic<size_t> g_allocated{0}, g_peak{0};

void count_allocation(size_t nbytes) {
  const size_t now = g_allocated.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

MemoryStats memory_stats() {
  return {g_allocated.load(std::memory_order_relaxed), g_peak.load(std::memory_order_relaxed)};
}

void reset_peak_memory() {
  g_peak.store(g_allocated.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

std::byte* allocate_bytes(size_t nbytes) {
  if (nbytes == 0) nbytes = 64;  // a valid pointer keeps data_ptr() of an empty tensor harmless
  count_allocation(nbytes);
#ifndef QKV_NO_BLOCK_CACHE
  if (nbytes >= kMinCached) {
    const size_t cls = size_class(nbytes);
    BlockCache& c = cache();
    {
      std::lock_guard<std::mutex> lock(c.mutex);
      auto it = c.free_blocks.find(cls);
      if (it != c.free_blocks.end() && !it->second.empty()) {
        std::byte* block = it->second.back();
        it->second.pop_back();
        c.bytes -= cls;
        return block;
      }
    }
    return static_cast<std::byte*>(::operator new(cls, kAlign));
  }
#endif
  return static_cast<std::byte*>(::operator new(nbytes, kAlign));
}

void free_bytes(std::byte* data, size_t nbytes) {
  if (nbytes == 0) nbytes = 64;
  g_allocated.fetch_sub(nbytes, std::memory_order_relaxed);
#ifndef QKV_NO_BLOCK_CACHE
  if (nbytes >= kMinCached) {
    const size_t cls = size_class(nbytes);
    BlockCache& c = cache();
    std::vector<std::byte*> evicted;
    {
      std::lock_guard<std::mutex> lock(c.mutex);
      if (cls > kMaxCache) {
        evicted.push_back(data);
      } else {
        // Full: make room by evicting idle blocks of other classes, largest first. The block
        // just freed is the working set (the next step will ask for it again); blocks left
        // from an earlier, different workload would otherwise hold the cache forever and
        // send every new size back to the OS and its page faults.
        for (auto it = c.free_blocks.rbegin();
             c.bytes + cls > kMaxCache && it != c.free_blocks.rend(); ++it)
          while (c.bytes + cls > kMaxCache && !it->second.empty()) {
            evicted.push_back(it->second.back());
            it->second.pop_back();
            c.bytes -= it->first;
          }
        c.free_blocks[cls].push_back(data);
        c.bytes += cls;
      }
    }
    for (std::byte* b : evicted) ::operator delete(b, kAlign);  // outside the lock
    return;
  }
#endif
  ::operator delete(data, kAlign);
}

void empty_cache() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [cls, blocks] : c.free_blocks)
    for (std::byte* b : blocks) ::operator delete(b, kAlign);
  c.free_blocks.clear();
  c.bytes = 0;
}

size_t cached_bytes() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.bytes;
}

}  // namespace qkv
