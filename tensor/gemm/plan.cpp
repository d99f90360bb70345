// plan.cpp: the production GEMM's plan (plan.h): when each split runs, from the tuning table
// (kernel.h); the switches QKV_GEMM and QKV_GEMM_VERBOSE; and the entry points of gemm.h, which
// plan each product and run it (execute.cpp), or run it on the ladder's step 5.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tensor/gemm/internal.h"
#include "tensor/thread_pool.h"

namespace qkv {

namespace gemm_detail {
// The static split's rule (internal.h says why).
bool cut_rows(int64_t M, int64_t N, bool a_packed) {
  return a_packed ? M >= N : M >= 2 * N;
}
}  // namespace gemm_detail

using namespace gemm_detail;

namespace {

// The work of `batches` products of M x K by K x N, against tuning.parallel_min_work. A product
// of a few rows (few_rows) is limited by reading B, which takes about as long as
// few_rows_as_rows rows' worth of multiply-adds, so it counts as that many rows: decoding's
// attention products (12 heads of one query against L cached keys, GPT-2 small's shape) are
// split between the threads from L = 43, not from L = 683.
int64_t gemm_work(const GemmTuning& t, int64_t batches, int64_t M, int64_t N, int64_t K) {
  return batches * (M <= t.few_rows ? std::max(M, t.few_rows_as_rows) : M) * N * K;
}

// Whether hand_out_rows (execute.cpp) takes a product: one product of more than a few rows,
// which split would cut by rows, with all of B packed (every KC block of it) within
// tuning.hand_out_max_b.
bool hands_out_rows(const GemmTuning& t, int64_t batches, int64_t M, int64_t N, int64_t K,
                    bool a_packed) {
  return batches == 1 && M > t.few_rows && cut_rows(M, N, a_packed) && N <= kNC &&
         K * packed_width(N) <= t.hand_out_max_b;
}

// How many K chunks a product is summed in (k_split_loops, execute.cpp): 1 (no cut) unless it
// looks like a weight gradient: one product, A transposed (dY^T), at least two chunks of depth,
// more than a few rows (those read B in place) and below the shared-B size. n depends on K
// alone, never on the thread count.
int64_t k_chunks(const GemmTuning& t, int64_t batches, int64_t M, int64_t N, int64_t K,
                 int64_t a_cs) {
  if (batches != 1 || a_cs == 1 || M <= t.few_rows || M * N * K < t.parallel_min_work ||
      M * N * K >= t.shared_b_min_work)
    return 1;
  return std::max<int64_t>(1, std::min(t.max_k_chunks, K / t.k_chunk));
}

}  // namespace

// ---- the plan: when each split runs -----------------------------------------------------------

GemmCpu this_cpu() {
  static const GemmTuning tuning = tuning_for(fast_kernel());
  return {fast_kernel(), num_threads(), tuning};
}

GemmPlan plan_gemm(const GemmProblem& p, const GemmCpu& cpu) {
  const GemmTuning& t = cpu.tuning;
  GemmPlan plan{cpu.kernel, t};
  plan.threads = std::max(1, cpu.threads);
  const int64_t batches = p.batches();
  plan.a_in_place = a_in_place(cpu.kernel, t, p.A);
  plan.few_rows = p.M <= t.few_rows;
  plan.rows_outer = goes_rows_outer(cpu.kernel, t, p.M, std::min(p.N, kNC), plan.a_in_place);
  const auto split = [&](GemmSplit s) {
    plan.split = s;
    if (s == GemmSplit::one_thread) {
      plan.threads = 1;
      plan.b_in_place = b_in_place(t, p.M, p.N, p.K, p.B);
    }
    return plan;
  };
  // A weight gradient's K is cut whatever the threads (its bits depend on the chunks alone).
  if (const int64_t chunks = k_chunks(t, batches, p.M, p.N, p.K, p.A.col_stride); chunks > 1) {
    plan.k_chunks = chunks;
    return split(GemmSplit::k_chunks);
  }
  // Small: no split, no wake-ups.
  if (plan.threads <= 1 || gemm_work(t, batches, p.M, p.N, p.K) < t.parallel_min_work)
    return split(GemmSplit::one_thread);
  if (batches == 1 && plan.few_rows) return split(GemmSplit::few_row_columns);
  if (batches == 1 && p.M * p.N * p.K >= t.shared_b_min_work && p.M / kMR >= plan.threads)
    return split(GemmSplit::shared_b);
  if (hands_out_rows(t, batches, p.M, p.N, p.K, !plan.a_in_place))
    return split(GemmSplit::rows_handed_out);
  if (batches == 1 && !cut_rows(p.M, p.N, !plan.a_in_place))
    return split(GemmSplit::columns_handed_out);
  return split(GemmSplit::batch_split);
}

const char* to_string(GemmSplit split) {
  switch (split) {
    case GemmSplit::one_thread:
      return "one thread";
    case GemmSplit::k_chunks:
      return "K in chunks";
    case GemmSplit::few_row_columns:
      return "few rows, columns handed out";
    case GemmSplit::shared_b:
      return "B shared, rows handed out";
    case GemmSplit::rows_handed_out:
      return "rows handed out";
    case GemmSplit::columns_handed_out:
      return "columns handed out";
    case GemmSplit::batch_split:
      return "batch split";
  }
  return "?";
}

std::string to_string(const GemmPlan& plan) {
  std::string s = plan.kernel.name;
  if (plan.kernel.wide) {
    s += " (wide tiles, ";
    s += std::to_string(plan.tuning.wide_rows_in_place);
    s += " rows over A in place)";
  }
  s += plan.few_rows ? ", B read in place (few rows)"
                     : (plan.a_in_place ? ", A in place" : ", A packed");
  if (!plan.few_rows) {
    if (plan.split == GemmSplit::shared_b)
      s += ", B packed once and shared";
    else
      s += plan.b_in_place ? ", B in place" : ", B packed";
  }
  if (plan.rows_outer) {
    s += ", rows outer under ";
    s += std::to_string(plan.tuning.rows_outer_chunk);
    s += " columns";
  }
  s += ", ";
  s += to_string(plan.split);
  if (plan.split == GemmSplit::k_chunks) {
    s += " (";
    s += std::to_string(plan.k_chunks);
    s += ")";
  }
  if (plan.threads > 1) {
    s += " on ";
    s += std::to_string(plan.threads);
    s += " threads";
  }
  s += ", MC ";
  s += std::to_string(kMC);
  s += " KC ";
  s += std::to_string(kKC);
  s += " NC ";
  s += std::to_string(kNC);
  return s;
}

// ---- QKV_GEMM and QKV_GEMM_VERBOSE
// ----------------------------------------------------------------

namespace {
std::atomic<int> g_gemm_path{[] {
  const char* v = std::getenv("QKV_GEMM");
  return v && std::strcmp(v, "ladder") == 0 ? 1 : 0;
}()};
std::atomic<bool> g_gemm_verbose{[] {
  const char* v = std::getenv("QKV_GEMM_VERBOSE");
  return v && std::strcmp(v, "1") == 0;
}()};
}  // namespace

GemmPath gemm_path() {
  return g_gemm_path.load(std::memory_order_relaxed) == 1 ? GemmPath::ladder : GemmPath::production;
}
void set_gemm_path(GemmPath path) {
  g_gemm_path.store(path == GemmPath::ladder ? 1 : 0, std::memory_order_relaxed);
}
bool gemm_verbose() {
  return g_gemm_verbose.load(std::memory_order_relaxed);
}
void set_gemm_verbose(bool on) {
  g_gemm_verbose.store(on, std::memory_order_relaxed);
}

// ---- the entry points (gemm.h) --------------------------------------------------------------

namespace {
// Every product of the library comes through here: on the ladder's step 5 (QKV_GEMM=ladder),
// or planned and run.
void gemm_problem(const GemmProblem& p) {
  if (gemm_path() == GemmPath::ladder) {
    for (int64_t b = 0; b < p.batches(); ++b) {
      const Product one = product(p, b);
      gemm_threaded(p.M, p.N, p.K, one.A, one.B, one.C, p.ldc, p.accumulate);
      finish_all(p.M, p.N, one.C, p.ldc, p.epilogue);
    }
    if (gemm_verbose())
      std::fprintf(stderr, "qkv gemm %lld x %lld x %lld (x %lld): ladder step 5\n",
                   static_cast<long long>(p.M), static_cast<long long>(p.N),
                   static_cast<long long>(p.K), static_cast<long long>(p.batches()));
    return;
  }
  const GemmPlan plan = plan_gemm(p, this_cpu());
  if (gemm_verbose())
    std::fprintf(stderr, "qkv gemm %lld x %lld x %lld (x %lld): %s\n", static_cast<long long>(p.M),
                 static_cast<long long>(p.N), static_cast<long long>(p.K),
                 static_cast<long long>(p.batches()), to_string(plan).c_str());
  run_gemm(p, plan);
}
}  // namespace

void gemm(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
          bool accumulate) {
  gemm_problem({M, N, K, A, B, C, ldc, accumulate});
}

void gemm_epilogue(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate, const GemmEpilogue& epilogue) {
  gemm_problem({M, N, K, A, B, C, ldc, accumulate, epilogue});
}

void gemm_band(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
               bool accumulate, GemmBand band) {
  gemm_problem({M, N, K, A, B, C, ldc, accumulate, {}, band});
}

void gemm_batched(int64_t M, int64_t N, int64_t K, int64_t a_rs, int64_t a_cs, int64_t b_rs,
                  int64_t b_cs, const GemmBatch& batch, int64_t ldc, bool accumulate,
                  const GemmEpilogue& epilogue) {
  if (batch.c.empty()) return;
  gemm_problem({M,
                N,
                K,
                {batch.a[0], a_rs, a_cs},
                {batch.b[0], b_rs, b_cs},
                batch.c[0],
                ldc,
                accumulate,
                epilogue,
                {},
                &batch});
}

}  // namespace qkv
