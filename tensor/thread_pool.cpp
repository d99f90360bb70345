// thread_pool.cpp: persistent workers that wait for jobs: first spinning briefly, then asleep on
// a condition variable.
//
// Why spin: a training step of a small model is hundreds of short parallel regions (a GEMM of
// 512 x 64 x 256 is a fraction of a millisecond). Waking a sleeping thread costs tens of
// microseconds, so a worker that just finished keeps checking for the next job a while (with
// the CPU's pause
// hint, and a yield of the core every few microseconds in case the thread it waits for is
// queued behind it) before it goes to sleep, and the caller is told to skip the wake-up call
// when nobody sleeps.
#include "tensor/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "tensor/error.h"

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>  // _mm_pause
#elif defined(_MSC_VER) && defined(_M_ARM64)
#include <intrin.h>  // __yield
#endif
#if defined(__SSE__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 1)
#include <xmmintrin.h>  // _mm_getcsr, _mm_setcsr
#define QKV_HAS_MXCSR 1
#endif

namespace qkv {
namespace {

int default_threads() {
  if (const char* env = std::getenv("QKV_NUM_THREADS")) {
    // Digits only: strtol alone would also take " 5" and "+5".
    const std::string text = env;
    const long n = text.empty() || text.size() > 4 ||
                           text.find_first_not_of("0123456789") != std::string::npos
                       ? 0
                       : std::strtol(env, nullptr, 10);
    check(n >= 1 && n <= 1024, "QKV_NUM_THREADS", "an integer in [1, 1024], got \"", env, "\"");
    return static_cast<int>(n);
  }
  if (!kCanStartThreads) return 1;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

thread_local bool inside_parallel_region = false;

// set_flush_denormal's setting, applied by every thread of the pool as it starts.
#ifdef QKV_HAS_MXCSR
std::atomic<bool> flush_denormal{false};
#endif
void apply_flush_denormal() {
#ifdef QKV_HAS_MXCSR
  constexpr unsigned kFtzDaz = 0x8040;  // MXCSR bit 15: flush to zero; bit 6: denormals are zero
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(flush_denormal.load() ? csr | kFtzDaz : csr & ~kFtzDaz);
#endif
}

// Tells the core this is a spin loop: it saves power, and lets the other hardware thread of the
// same core run. x86's pause (GCC and Clang name it __builtin_ia32_pause, MSVC _mm_pause),
// ARM's yield; other targets spin without a hint.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(_M_X64) || defined(_M_IX86)
  _mm_pause();
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("yield");
#elif defined(_M_ARM64)
  __yield();
#endif
}

// ---- Per-thread scratch (thread_pool.h says why it is freed by hand).
constexpr int kSlots = static_cast<int>(Scratch::count);
struct ScratchSet {
  float* data[kSlots] = {};
  int64_t floats[kSlots] = {};
};
thread_local ScratchSet* my_scratch = nullptr;  // trivially destructible: nothing runs at exit

// Every thread's set, so that memory of a thread that ended without freeing it stays reachable
// (leak checkers see it) until the process ends. Never destroyed: a worker may still be
// freeing its set while static objects are torn down at exit.
struct ScratchRegistry {
  std::mutex m;
  std::vector<ScratchSet*> sets;
};
ScratchRegistry& scratch_registry() {
  static ScratchRegistry* registry = new ScratchRegistry;
  return *registry;
}

class Pool {
 public:
  Pool() { resize(default_threads()); }
  ~Pool() { stop_workers(); }

  int size() const { return size_; }

  void resize(int n) {
    check(n >= 1, "set_num_threads", "at least 1 thread, got ", n);
    stop_workers();
    size_ = n;
    if (!kCanStartThreads) return;  // the parts run on the calling thread (thread_pool.h)
    stopping_.store(false);
    // New workers start from the current job count, so they wait for the next job instead of
    // mistaking the last finished one for new work.
    const uint64_t current = generation_.load();
    for (int t = 1; t < n; ++t)
      workers_.emplace_back([this, t, current] {
        apply_flush_denormal();
        work(t, current);
        release_thread_scratch();
      });
  }

  void run(int64_t parts, const std::function<void(int64_t)>& fn) {
    const int used = static_cast<int>(std::min<int64_t>(parts, size_));
    if (used <= 1 || inside_parallel_region || !kCanStartThreads) {
      for (int64_t p = 0; p < parts; ++p) fn(p);
      return;
    }
    std::unique_lock<std::mutex> lock(run_mutex_);  // one parallel region at a time
    {
      std::lock_guard<std::mutex> g(m_);
      job_ = &fn;
      parts_ = parts;
      used_ = used;
      pending_.store(used - 1, std::memory_order_relaxed);
      error_ = nullptr;
      // Publishes the job: a worker that sees the new generation also sees the fields above.
      generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
    run_parts(0);
    // Wait for the workers: spin first (they are usually almost done), then sleep.
    if (!spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> g(m_);
      done_.wait(g, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    std::lock_guard<std::mutex> g(m_);
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Checks `ready` for a while (a couple of milliseconds' worth of pauses). True if it became
  // true.
  template <class Ready>
  static bool spin_until(Ready ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(2000);
    for (int i = 0;; ++i) {
      if (ready()) return true;
      cpu_relax();
      if ((i & 255) == 255) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        // Let another runnable thread have this core: when more threads than cores are busy
        // (two multi-threaded programs at once, as ctest -j2 runs them), the thread we wait
        // for may be queued behind us. Nearly free when nothing else wants the core.
        std::this_thread::yield();
      }
    }
  }

  void run_parts(int t) {
    inside_parallel_region = true;
    try {
      for (int64_t p = t; p < parts_; p += used_) (*job_)(p);
    } catch (...) {
      std::lock_guard<std::mutex> g(m_);
      if (!error_) error_ = std::current_exception();
    }
    inside_parallel_region = false;
  }

  void work(int t, uint64_t seen) {
    while (true) {
      const auto new_job = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!spin_until([&] { return new_job() || stopping_.load(std::memory_order_acquire); })) {
        std::unique_lock<std::mutex> g(m_);
        sleeping_.fetch_add(
            1, std::memory_order_acq_rel);  // under m_: run() sees it or we see the job
        wake_.wait(g, [&] { return stopping_.load(std::memory_order_acquire) || new_job(); });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      }
      if (stopping_.load(std::memory_order_acquire)) return;
      // The job and how many threads it uses, read together under the lock that run() writes
      // them under: a worker the job does not use is not waited for, so run() may already be
      // writing the next job's count while this one reads it (a pool of 3 threads running
      // jobs of 2, 3 and 5 parts, as GemmThreads.HandOutRangesPerPartNamesTheThreadsOwnPart
      // does under the tsan preset), and a count paired with the wrong job would run a part
      // twice.
      int used;
      {
        std::lock_guard<std::mutex> g(m_);
        seen = generation_.load(std::memory_order_acquire);
        used = used_;
      }
      if (t >= used) continue;  // this job needs fewer threads
      run_parts(t);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> g(m_);  // the caller may be asleep: wake it under the lock
        done_.notify_one();
      }
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> g(m_);
      stopping_.store(true, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& w : workers_) w.join();
    workers_.clear();
  }

  int size_ = 1;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_, m_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t parts_ = 0;
  int used_ = 0;
  std::atomic<int> pending_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int> sleeping_{0};  // workers blocked on wake_
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

float* thread_scratch(Scratch slot, int64_t floats) {
  check(floats >= 0 && slot != Scratch::count, "thread_scratch",
        "a slot and a size of at least 0 floats, got ", floats);
  if (!my_scratch) {
    my_scratch = new ScratchSet;
    ScratchRegistry& r = scratch_registry();
    std::lock_guard<std::mutex> g(r.m);
    r.sets.push_back(my_scratch);
  }
  const int s = static_cast<int>(slot);
  if (floats > my_scratch->floats[s]) {
    if (my_scratch->data[s]) ::operator delete (my_scratch->data[s], std::align_val_t{64});
    my_scratch->data[s] = static_cast<float*>(
        ::operator new (sizeof(float) * static_cast<size_t>(floats), std::align_val_t{64}));
    my_scratch->floats[s] = floats;
  }
  return my_scratch->data[s];
}

void release_thread_scratch() {
  if (!my_scratch) return;
  {
    ScratchRegistry& r = scratch_registry();
    std::lock_guard<std::mutex> g(r.m);
    r.sets.erase(std::find(r.sets.begin(), r.sets.end(), my_scratch));
  }
  for (float* p : my_scratch->data)
    if (p) ::operator delete (p, std::align_val_t{64});
  delete my_scratch;
  my_scratch = nullptr;
}

int64_t threads_with_scratch() {
  ScratchRegistry& r = scratch_registry();
  std::lock_guard<std::mutex> g(r.m);
  return static_cast<int64_t>(r.sets.size());
}

int num_threads() {
  return pool().size();
}
void set_num_threads(int n) {
  pool().resize(n);
}
bool set_flush_denormal(bool on) {
#ifdef QKV_HAS_MXCSR
  flush_denormal.store(on);
  // Parts as many as threads: part t runs on thread t (the caller's is part 0), so each thread
  // sets its own MXCSR once.
  parallel_for(num_threads(), [](int64_t) { apply_flush_denormal(); });
  return true;
#else
  (void)on;
  return false;
#endif
}
void parallel_for(int64_t parts, const std::function<void(int64_t)>& fn) {
  pool().run(parts, fn);
}

// ---- hand_out_ranges (thread_pool.h): parallel_ranges' pieces, and the GEMM's (tensor/gemm/execute.cpp).
//
// Why not one range per thread: the two halves of a region do not end together on a shared
// host, where one core often runs slower than the other, and a region ends when its slower
// half does. So each part's range is taken in pieces, from a counter of its own: half
// of what is left, down to a 32nd of the range, so the first pieces are large (few claims)
// and the last ones short (the threads finish close together). A thread works through its own
// part's pieces, then through the others' in turn (bench/notes/2026-12-06-memory-and-threads.md).
namespace {
struct alignas(64) Part {  // a cache line each: the threads claim from different parts
  std::atomic<int64_t> next;
  int64_t end, min_piece;
};

// Claims the next piece of `part` as [begin, end); false when none is left.
bool claim(Part& part, int64_t& begin, int64_t& end) {
  int64_t at = part.next.load(std::memory_order_relaxed);
  while (at < part.end) {
    const int64_t to = std::min(part.end, at + std::max(part.min_piece, (part.end - at) / 2));
    if (part.next.compare_exchange_weak(at, to, std::memory_order_relaxed)) {
      begin = at;
      end = to;
      return true;
    }
  }
  return false;
}
}  // namespace

void hand_out_ranges_per_part(int64_t units, int64_t parts, int64_t min_piece,
                              const std::function<void(int64_t, int64_t, int64_t)>& body) {
  check(units >= 0 && parts >= 1, "hand_out_ranges", "at least 0 units on at least 1 part, got ",
        units, " units on ", parts, " parts");
  const std::unique_ptr<Part[]> part(new Part[static_cast<size_t>(parts)]);
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t lo = units * p / parts, hi = units * (p + 1) / parts;
    part[p].next.store(lo, std::memory_order_relaxed);
    part[p].end = hi;
    part[p].min_piece = std::max<int64_t>({1, min_piece, (hi - lo) / 32});
  }
  parallel_for(parts, [&](int64_t p) {
    for (int64_t q = 0; q < parts; ++q)  // its own part first, then the others'
      for (int64_t begin, end; claim(part[(p + q) % parts], begin, end);) body(p, begin, end);
  });
}

void hand_out_ranges(int64_t units, int64_t parts, int64_t min_piece,
                     const std::function<void(int64_t, int64_t)>& body) {
  hand_out_ranges_per_part(units, parts, min_piece,
                           [&](int64_t, int64_t begin, int64_t end) { body(begin, end); });
}

}  // namespace qkv
