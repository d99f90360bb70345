// allocator.cpp: a size-class cache of large blocks in front of operator new (see allocator.h).
#include "tensor/allocator.h"

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "tensor/error.h"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>  // sysconf: the size of physical memory
#endif
#if defined(__linux__)
#include <sys/mman.h>
#define QKV_HUGE_PAGES 1
#else
#define QKV_HUGE_PAGES 0
#endif

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
// 64 KiB: smaller blocks go straight to new. From here to 1 MiB (a weight's gradient: 64-256
// KiB in the larger tiny GPT) they are cached too, as operator new's blocks at their class
// size: the C library hands memory of that size back to the system when it is freed (it trims
// the top of its heap, or unmaps it), and the next step would fault the pages in again.
[[maybe_unused]] constexpr size_t kMinCached = size_t{64} << 10;
[[maybe_unused]] constexpr size_t kMinHuge = size_t{1} << 20;   // huge-page blocks from 1 MiB
[[maybe_unused]] constexpr size_t kMaxCache = size_t{1} << 30;  // 1 GiB of idle blocks at most
constexpr std::align_val_t kAlign{64};  // a cache line; what the GEMM's loads like

// Rounds a large size up to one of four classes per power of two (2^k, 1.25, 1.5, 1.75 x 2^k),
// so a block serves requests up to a quarter smaller than itself, and sizes that differ by a few
// bytes (a (B, T, T) tensor for T and T + 1) still share a class.
[[maybe_unused]] size_t size_class(size_t nbytes) {
  const size_t step = std::bit_floor(nbytes) / 4;
  return (nbytes + step - 1) / step * step;
}

// Huge pages (Linux). A 4 KiB page covers 1024 floats, so walking a 1 MiB activation takes
// 256 entries of the TLB, the cache of address translations, and a training step streams
// ~100 MB of them. So a cached block of 1 MiB or more is its own mapping, aligned to 2 MiB and
// a whole number of 2 MiB long, and asks the kernel for transparent huge pages (madvise
// MADV_HUGEPAGE): one TLB entry per 2 MiB, so the walks over activations stop missing in the
// TLB (bench/notes/2026-12-06-memory-and-threads.md). The price is memory: a 1 MiB tensor takes a
// 2 MiB page. Where the
// kernel has huge pages switched off ("[never]" in /sys/kernel/mm/transparent_hugepage/enabled), or
// on other systems, blocks come from operator new at their class size.
[[maybe_unused]] constexpr size_t kHugePage = size_t{2} << 20;

[[maybe_unused]] bool huge_pages_on() {
#if QKV_HUGE_PAGES
  static const bool on = [] {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    return std::getline(f, modes) && modes.find("[never]") == std::string::npos;
  }();
  return on;
#else
  return false;
#endif
}

// The size of the block that serves a request of nbytes (>= kMinCached): its class, rounded
// up to whole huge pages from kMinHuge on where there are huge pages.
[[maybe_unused]] size_t block_size(size_t nbytes) {
  const size_t cls = size_class(nbytes);
  return huge_pages_on() && nbytes >= kMinHuge ? (cls + kHugePage - 1) / kHugePage * kHugePage
                                               : cls;
}

// Whether a block of this size is a huge-page mapping: those are whole 2 MiB pages, and the
// others serve requests under 1 MiB, so their class is at most 1 MiB: the sizes never meet.
[[maybe_unused]] bool is_huge_block(size_t bytes) {
  return huge_pages_on() && bytes >= kHugePage;
}

[[maybe_unused]] std::byte* new_block(size_t bytes) {
#if QKV_HUGE_PAGES
  if (is_huge_block(bytes)) {
    // Map 2 MiB more than needed, keep the aligned part, give the ends back.
    void* mapped = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(mapped);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) munmap(mapped, aligned - start);
    if (start + kHugePage > aligned)
      munmap(reinterpret_cast<void*>(aligned + bytes), start + kHugePage - aligned);
    madvise(reinterpret_cast<void*>(aligned), bytes, MADV_HUGEPAGE);  // a request, not a must
    return reinterpret_cast<std::byte*>(aligned);
  }
#endif
  return static_cast<std::byte*>(::operator new(bytes, kAlign));
}

// (bytes is needed only to unmap a huge-page block.)
[[maybe_unused]] void delete_block(std::byte* block, [[maybe_unused]] size_t bytes) {
#if QKV_HUGE_PAGES
  if (is_huge_block(bytes)) {
    munmap(block, bytes);
    return;
  }
#endif
  ::operator delete(block, kAlign);
}

struct BlockCache {
  std::mutex mutex;
  std::map<size_t, std::vector<std::byte*>> free_blocks;  // by block size
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

bool huge_page_blocks() {
#ifdef QKV_NO_BLOCK_CACHE
  return false;
#else
  return huge_pages_on();
#endif
}

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
    const size_t cls = block_size(nbytes);
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
    return new_block(cls);
  }
#endif
  return static_cast<std::byte*>(::operator new(nbytes, kAlign));
}

void free_bytes(std::byte* data, size_t nbytes) {
  if (nbytes == 0) nbytes = 64;
  g_allocated.fetch_sub(nbytes, std::memory_order_relaxed);
#ifndef QKV_NO_BLOCK_CACHE
  if (nbytes >= kMinCached) {
    const size_t cls = block_size(nbytes);
    BlockCache& c = cache();
    std::vector<std::pair<std::byte*, size_t>> evicted;
    {
      std::lock_guard<std::mutex> lock(c.mutex);
      if (cls > kMaxCache) {
        evicted.emplace_back(data, cls);
      } else {
        // Full: make room by evicting idle blocks of other classes, largest first. The block
        // just freed is the working set (the next step will ask for it again); blocks left
        // from an earlier, different workload would otherwise hold the cache forever and
        // send every new size back to the OS and its page faults.
        for (auto it = c.free_blocks.rbegin();
             c.bytes + cls > kMaxCache && it != c.free_blocks.rend(); ++it)
          while (c.bytes + cls > kMaxCache && !it->second.empty()) {
            evicted.emplace_back(it->second.back(), it->first);
            it->second.pop_back();
            c.bytes -= it->first;
          }
        c.free_blocks[cls].push_back(data);
        c.bytes += cls;
      }
    }
    for (const auto& [b, size] : evicted) delete_block(b, size);  // outside the lock
    return;
  }
#endif
  ::operator delete(data, kAlign);
}

void empty_cache() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (auto& [cls, blocks] : c.free_blocks)
    for (std::byte* b : blocks) delete_block(b, cls);
  c.free_blocks.clear();
  c.bytes = 0;
}

size_t cached_bytes() {
  BlockCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return c.bytes;
}

// ---- the size limit --------------------------------------------------------------------------

namespace {
// A count of bytes as a size_t, at most SIZE_MAX: a 32-bit target (WebAssembly, 32-bit ARM)
// cannot hold more in one block, whatever the machine or the environment says.
size_t addressable(unsigned long long bytes) {
  return bytes > std::numeric_limits<size_t>::max() ? std::numeric_limits<size_t>::max()
                                                     : static_cast<size_t>(bytes);
}

size_t physical_memory() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    return addressable(static_cast<unsigned long long>(pages) *
                       static_cast<unsigned long long>(page));
#endif
  return addressable(1ull << 40);
}

std::atomic<size_t>& limit() {
  static std::atomic<size_t> bytes{[] {
    if (const char* env = std::getenv("QKV_MAX_TENSOR_BYTES")) {
      // Digits only (strtoull alone would take " 5", "+5" and "-5"), and no overflow.
      const std::string text = env;
      errno = 0;
      const unsigned long long n = std::strtoull(env, nullptr, 10);
      check(!text.empty() && text.size() <= 20 &&
                text.find_first_not_of("0123456789") == std::string::npos && errno != ERANGE &&
                n > 0,
            "QKV_MAX_TENSOR_BYTES", "a positive whole number of bytes, got \"", env, "\"");
      return addressable(n);
    }
    return physical_memory();
  }()};
  return bytes;
}
}  // namespace

size_t max_tensor_bytes() { return limit().load(); }

void set_max_tensor_bytes(size_t bytes) {
  check(bytes > 0, "set_max_tensor_bytes", "a positive number of bytes, got 0");
  limit().store(bytes);
}

}  // namespace qkv
