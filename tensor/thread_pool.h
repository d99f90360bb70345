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

#include <algorithm>
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

// Runs body(begin, end) over [0, units) in one contiguous range per thread (at most one per
// unit), or as one range on the calling thread when the work is not worth waking the pool
// for. Which range a unit lands in depends on the thread count, so body must give each unit
// the same result whichever range holds it: units are rows, columns, blocks or pairs whose
// outputs are their own.
template <class Body>
void parallel_ranges(int64_t units, bool worth_it, Body body) {
  const int64_t parts = worth_it ? std::min<int64_t>(num_threads(), units) : 1;
  if (parts <= 1) return body(int64_t{0}, units);
  parallel_for(parts, [&](int64_t p) { body(units * p / parts, units * (p + 1) / parts); });
}

// Elementwise work over [0, n), split once there are kParallelElements elements.
template <class Body>
void parallel_chunks(int64_t n, Body body) {
  parallel_ranges(n, n >= kParallelElements, body);
}

}  // namespace qkv
