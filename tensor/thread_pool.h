// thread_pool.h: the one pool of worker threads the whole library shares.
//
// Kernels split their work into a fixed number of parts up front (a static split), and
// parallel_for runs part t on thread t; the calling thread runs part 0 itself, so a pool of N
// threads starts N - 1 workers. Results never depend on timing: an output's arithmetic is the
// same whichever thread computes it. With a static split, who computes which output is decided
// by the part index; the GEMM also hands the rows of some products to whichever thread is free
// first (tensor/gemm_fast.cpp, hand_out_rows), which changes who computes a row, never how.
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

// Subnormal floats (below 1.2e-38 in size) flushed to zero, as torch.set_flush_denormal(True):
// on x86, the FTZ and DAZ bits of MXCSR, set on the calling thread and on every thread of the
// pool, now and when set_num_threads starts new ones. An x86 core runs a multiply-add that meets
// a subnormal operand many times slower: a GPT-2 training step whose gradients held some took
// 2.4-3.9 times as long (bench/README.md). Off by default, as in PyTorch: results keep their
// subnormals. Call it from the main thread, between parallel regions. Returns false, and changes
// nothing, on other CPUs.
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
