// thread_pool.h: the one pool of worker threads the whole library shares.
//
// parallel_for runs a fixed number of parts, part t on thread t (a static split); the calling
// thread runs part 0 itself, so a pool of N threads starts N - 1 workers. parallel_ranges, on
// top of it, gives each thread a range of its own and hands the pieces left to whichever
// thread is free, and so do the GEMM's threaded loops for some products (tensor/gemm/execute.cpp,
// hand_out_rows and shared_b_loops). Results never
// depend on timing: an output's arithmetic is the same whichever thread computes it, so
// handing work out changes who computes an output, never how.
//
// The size comes from the environment variable QKV_NUM_THREADS, else the number of hardware
// threads; set_num_threads changes it (between parallel regions, from the main thread).
//
// A build that cannot start threads (WebAssembly without Emscripten's pthreads: the browser
// explorer's) has a pool with no workers. It keeps its size all the same, so the work is cut
// into the same parts as on that many threads, and runs the parts on the calling thread, one
// after another: the results are those of that many threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

namespace qkv {

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
inline constexpr bool kCanStartThreads = false;
#else
inline constexpr bool kCanStartThreads = true;
#endif

int num_threads();
void set_num_threads(int n);

// Subnormal floats (below 1.2e-38 in size) flushed to zero, as torch.set_flush_denormal(True):
// on x86, the FTZ and DAZ bits of MXCSR, set on the calling thread and on every thread of the
// pool, now and when set_num_threads starts new ones. An x86 core runs a multiply-add that meets
// a subnormal operand many times slower, through a microcode assist
// (bench/notes/2026-12-06-memory-and-threads.md). Off by default, as in PyTorch: results keep
// their subnormals. Call it from the main thread, between parallel regions. Returns false, and
// changes nothing, on other CPUs.
bool set_flush_denormal(bool on);

// Runs fn(part) for part in [0, parts) on up to num_threads() threads and returns when all are
// done. Parts are handed out statically: thread t runs parts t, t + T, t + 2T, ... Exceptions
// thrown by fn are rethrown on the calling thread (the first one). Not reentrant: a call from
// inside fn runs its parts serially on that thread.
void parallel_for(int64_t parts, const std::function<void(int64_t)>& fn);

// Scratch memory for kernels, one block per thread and slot (the GEMM's packing buffers, the
// fused attention's rows of scores): 64-byte aligned, contents left from the last use, grown to
// the largest size asked for and kept for the next call, so a training loop does not allocate
// for every matmul. Two threads never share one, and on one thread each slot has one user at a
// time (a GEMM inside the attention takes other slots than the attention's own).
//
// Why not a thread_local object with a destructor: on MinGW-w64, such destructors can run after
// the thread's storage is gone, and a program then crashes as its threads end. So the only
// thread-local is a plain pointer, and the memory is freed explicitly: a pool worker frees its
// own as it exits (so set_num_threads can be called any number of times), and any other
// thread's stays allocated, and reachable, until the process ends, unless that thread calls
// release_thread_scratch() first.
enum class Scratch { gemm_a, gemm_b, gemm_shared_b, gemm_k_split, attention, count };
float* thread_scratch(Scratch slot, int64_t floats);
void release_thread_scratch();
// How many threads hold scratch memory now (the tests check that workers give theirs back).
int64_t threads_with_scratch();

// Below this many elements of cheap per-element work, waking the pool costs more than it saves.
constexpr int64_t kParallelElements = int64_t{1} << 15;

// Runs body(begin, end) over [0, units) on `parts` threads of the pool. Each thread starts on
// a contiguous range of its own ([0, units) cut in `parts` parts) and takes it a piece at a
// time: half of what is left, down to a 32nd of the range or min_piece units, whichever is
// more; a thread done with its own range takes the pieces left in the others'. So a region
// ends when its work does, not when the slower thread does, and each thread still works mostly
// where it did in the region before (its cache holds that). Which range a unit lands in
// depends on timing, so body must give each unit the same result whichever range holds it.
// Negative units or fewer than 1 part is a qkv::Error; min_piece below 1 is taken as 1.
void hand_out_ranges(int64_t units, int64_t parts, int64_t min_piece,
                     const std::function<void(int64_t, int64_t)>& body);
// The same with body(part, begin, end): `part` is the part whose thread runs the piece (its own
// part, whichever range the piece came from), for a caller that keeps something per thread:
// the GEMM packs B once per thread that gets rows (tensor/gemm/execute.cpp, hand_out_rows).
void hand_out_ranges_per_part(int64_t units, int64_t parts, int64_t min_piece,
                              const std::function<void(int64_t, int64_t, int64_t)>& body);

// Runs body(begin, end) over [0, units) on the pool, one part per thread and at most one per
// unit, in pieces down to a 32nd of a part (hand_out_ranges), or as one range on the calling
// thread when the work is not worth waking the pool for. Units are rows, columns, blocks or
// pairs whose outputs are their own; which range a unit lands in depends on the thread count
// and on timing.
template <class Body>
void parallel_ranges(int64_t units, bool worth_it, Body body) {
  const int64_t parts = worth_it ? std::min<int64_t>(num_threads(), units) : 1;
  if (parts <= 1) return body(int64_t{0}, units);
  hand_out_ranges(units, parts, 1, [&](int64_t begin, int64_t end) { body(begin, end); });
}

// Elementwise work over [0, n), split once there are kParallelElements elements.
template <class Body>
void parallel_chunks(int64_t n, Body body) {
  parallel_ranges(n, n >= kParallelElements, body);
}

}  // namespace qkv
