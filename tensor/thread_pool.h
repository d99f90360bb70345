// thread_pool.h: the one pool of worker threads the whole library shares.
//
// Kernels split their work into a fixed number of parts up front (a static split), and
// parallel_for runs part t on thread t; the calling thread runs part 0 itself, so a pool of N
// threads starts N - 1 workers. A static split is what makes results independent of timing:
// who computes which output is decided by the part index, never by which thread is free first.
//
// The size comes from the environment variable QKV_NUM_THREADS, else the number of hardware
// threads; set_num_threads changes it (between parallel regions, from the main thread).
#pragma once

#include <cstdint>
#include <functional>

namespace qkv {

int num_threads();
void set_num_threads(int n);

// Runs fn(part) for part in [0, parts) on up to num_threads() threads and returns when all are
// done. Parts are handed out statically: thread t runs parts t, t + T, t + 2T, ... Exceptions
// thrown by fn are rethrown on the calling thread (the first one). Not reentrant: a call from
// inside fn runs its parts serially on that thread.
void parallel_for(int64_t parts, const std::function<void(int64_t)>& fn);

// Below this many elements of cheap per-element work, waking the pool costs more than it saves.
constexpr int64_t kParallelElements = int64_t{1} << 15;

// Runs body(begin, end) over [0, n): on the calling thread for small n, else in one contiguous
// chunk per thread. For work where no element depends on another, so the result is the same on
// any number of threads.
template <class Body>
void parallel_chunks(int64_t n, Body body) {
  const int64_t parts = n >= kParallelElements ? num_threads() : 1;
  if (parts <= 1) return body(int64_t{0}, n);
  parallel_for(parts, [&](int64_t p) { body(n * p / parts, n * (p + 1) / parts); });
}

}  // namespace qkv
