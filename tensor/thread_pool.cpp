// thread_pool.cpp: persistent workers that sleep on a condition variable between jobs.
#include "tensor/thread_pool.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tensor/error.h"

namespace qkv {
namespace {

int default_threads() {
  if (const char* env = std::getenv("QKV_NUM_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    check(end != env && *end == '\0' && n >= 1 && n <= 1024, "QKV_NUM_THREADS",
          "an integer in [1, 1024], got \"", env, "\"");
    return static_cast<int>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

thread_local bool inside_parallel_region = false;

class Pool {
 public:
  Pool() { resize(default_threads()); }
  ~Pool() { stop_workers(); }

  int size() const { return size_; }

  void resize(int n) {
    check(n >= 1, "set_num_threads", "at least 1 thread, got ", n);
    stop_workers();
    size_ = n;
    stopping_ = false;
    // New workers start from the current job count, so they wait for the next job instead of
    // mistaking the last finished one for new work.
    const uint64_t current = generation_;
    for (int t = 1; t < n; ++t) workers_.emplace_back([this, t, current] { work(t, current); });
  }

  void run(int64_t parts, const std::function<void(int64_t)>& fn) {
    const int used = static_cast<int>(std::min<int64_t>(parts, size_));
    if (used <= 1 || inside_parallel_region) {
      for (int64_t p = 0; p < parts; ++p) fn(p);
      return;
    }
    std::unique_lock<std::mutex> lock(run_mutex_);  // one parallel region at a time
    {
      std::lock_guard<std::mutex> g(m_);
      job_ = &fn;
      parts_ = parts;
      used_ = used;
      pending_ = used - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_parts(0);
    std::unique_lock<std::mutex> g(m_);
    done_.wait(g, [this] { return pending_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
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
      {
        std::unique_lock<std::mutex> g(m_);
        wake_.wait(g, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (t >= used_) continue;  // this job needs fewer threads
      }
      run_parts(t);
      std::lock_guard<std::mutex> g(m_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  void stop_workers() {
    {
      std::lock_guard<std::mutex> g(m_);
      stopping_ = true;
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
  int used_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int num_threads() {
  return pool().size();
}
void set_num_threads(int n) {
  pool().resize(n);
}
void parallel_for(int64_t parts, const std::function<void(int64_t)>& fn) {
  pool().run(parts, fn);
}

}  // namespace qkv
