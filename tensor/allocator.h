// allocator.h: where a tensor's bytes come from, and why large blocks are kept for reuse.
//
// A large allocation (a few MB and up) is served by the operating system with fresh pages,
// and each page is zeroed the first time it is touched: a page fault and a page of zeros for
// every 4 KiB before a single useful float is written, which can take longer than the softmax
// that fills it (bench/notes/2026-12-06-memory-and-threads.md). Attention makes several (B, H, T,
// T) tensors per step, so the same sizes are freed and requested again every step. Blocks of 64 KiB
// or more are therefore not returned when their tensor dies but kept, by size class, and handed to
// the next request of that class (already-touched pages: no faults). Up to 1 GiB is kept; when
// full, idle blocks of other sizes (largest first) make room for the one just freed, so the cache
// follows the current workload. empty_cache() returns it all. On Linux the cached blocks of 1 MiB
// and up are also 2 MiB-aligned mappings, a whole number of 2 MiB long, that ask for transparent
// huge pages: fewer misses of the TLB, at the price of a 1 MiB tensor taking 2 MiB (allocator.cpp
// says why). Under AddressSanitizer nothing is cached, so use-after-free is still caught.
#pragma once

#include <cstddef>

namespace qkv {

std::byte* allocate_bytes(size_t nbytes);         // 64-byte aligned, never null
void free_bytes(std::byte* data, size_t nbytes);  // nbytes as given to allocate_bytes
void empty_cache();                               // frees every cached block
size_t cached_bytes();                            // bytes held in the cache right now
bool huge_page_blocks();  // whether blocks of 1 MiB and up are 2 MiB huge-page mappings here

// Bytes handed out to tensors and not yet freed (the cache's idle blocks not counted), and the
// most there ever were at once since the last reset_peak_memory(): what a computation needs,
// as torch.cuda.max_memory_allocated reports it. The benchmarks read it to compare paths.
struct MemoryStats {
  size_t allocated = 0;
  size_t peak = 0;
};
MemoryStats memory_stats();
void reset_peak_memory();  // peak := allocated now

// The most bytes one tensor may take: the machine's physical memory where the system tells it,
// else 1 TiB; the environment variable QKV_MAX_TENSOR_BYTES, or set_max_tensor_bytes, sets it.
// Making a larger tensor is a qkv::Error naming the shape, the bytes and this limit, instead of
// the operating system's bad_alloc, or its out-of-memory killer a minute later.
size_t max_tensor_bytes();
void set_max_tensor_bytes(size_t bytes);

}  // namespace qkv
