// plan.h: the production GEMM as a plan and an executor. gemm() (gemm.h) describes a
// product as a GemmProblem, asks plan_gemm() how to run it on this CPU, and run_gemm() runs
// that plan: step 5 of the ladder (ladder.cpp), with the packing, the reading in place and the
// split over threads that the plan names (execute.cpp, loops.cpp, few_rows.cpp). Every choice reads
// its threshold from one table, GemmTuning (tuning.h); the tests pass plans in directly
// (tests/tensor/test_gemm.cpp), and QKV_GEMM_VERBOSE=1 prints each product's plan as it runs.
//
// Legend: C (M, N) = A (M, K) @ B (K, N); MR x NR the register tile, MC x KC a block of A,
// KC x NC a panel of B (BLIS's names, ladder.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "tensor/gemm.h"
#include "tensor/gemm/kernel.h"
#include "tensor/gemm/tuning.h"

namespace qkv {

// One product, or a batch of products of one shape and one set of strides, and what to do with
// its C: C = A @ B, or C += A @ B (accumulate), then the epilogue; a band says which terms the
// rows need (gemm.h).
struct GemmProblem {
  int64_t M = 0, N = 0, K = 0;
  MatrixRef A{}, B{};  // a batch: the strides of every product, and the first product's p
  float* C = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
  GemmEpilogue epilogue{};
  GemmBand band{};
  const GemmBatch* batch = nullptr;  // many products: their A, B and C pointers (null: one)
  int64_t batches() const { return batch ? static_cast<int64_t>(batch->c.size()) : 1; }
  int64_t multiply_adds() const { return batches() * M * N * K; }
};

// How a plan spreads a product over the threads (execute.cpp has each one's loops):
enum class GemmSplit {
  one_thread,          // the calling thread runs step 5's loop nest, product after product
  k_chunks,            // a weight gradient's long K in chunks, one a thread, then added in order
  few_row_columns,     // a product of a few rows: B's micro-panels handed out one at a time
  shared_b,            // one packed B for all threads; row ranges owned, then taken
  rows_handed_out,     // B packed whole by each thread; row ranges owned, then taken
  columns_handed_out,  // B's micro-panels in ranges owned, then taken, each over all of A
  batch_split,         // many products: whole products per thread, or each cut in parts
};
const char* to_string(GemmSplit split);

// What this machine brings to a plan: its micro-kernel, its threads and its tuning table.
struct GemmCpu {
  gemm_detail::FastKernel kernel;
  int threads = 1;
  gemm_detail::GemmTuning tuning;
};
// This machine: the fastest kernel it runs (gemm_detail::fast_kernel), the thread pool's size,
// and the tuning table for that kernel on this CPU model (gemm_detail::tuning_for).
GemmCpu this_cpu();

// A plan: everything run_gemm needs to know beyond the problem. Printable (to_string).
struct GemmPlan {
  gemm_detail::FastKernel kernel;  // the micro-kernel (and its wide twin, if any)
  gemm_detail::GemmTuning tuning;  // what the loops beneath read
  GemmSplit split = GemmSplit::one_thread;
  int threads = 1;          // parts the work is cut into (the pool runs them)
  int64_t k_chunks = 1;     // k_chunks: how many
  bool a_in_place = false;  // A's MR-row panels read where they lie (else packed)
  bool b_in_place = false;  // one_thread: B's micro-panels read where they lie (else packed)
  bool rows_outer = false;  // tiles go rows outer under chunks of B's columns (block_rows)
  bool few_rows = false;    // M <= tuning.few_rows: B read in place as rows or dot products
};
// "6 x 32 AVX-512 (+ wide, 6 rows in place), A in place, B packed, rows handed out on 2
// threads, MC 96 KC 384 NC 4096": what the plan does, in one line.
std::string to_string(const GemmPlan& plan);

// The plan for this problem on this CPU: the policy, in one function, reading every threshold
// from cpu.tuning.
GemmPlan plan_gemm(const GemmProblem& problem, const GemmCpu& cpu);

// Runs a plan. Any plan plan_gemm makes for a problem gives the same bits on 1, 2 or N
// threads; every split but k_chunks and few rows gives step 5's (gemm_threaded's) bits.
// A qkv::Error for a plan that cannot run the problem (a split of one product, given a batch).
void run_gemm(const GemmProblem& problem, const GemmPlan& plan);

// The GEMM that QKV_GEMM names: production (the default: plan_gemm, then run_gemm) or ladder
// (every product on step 5, gemm_threaded, then the epilogue as a pass of its own: what the
// ladder lesson builds, for any program). check_environment() rejects any other value.
enum class GemmPath { production, ladder };
GemmPath gemm_path();
void set_gemm_path(GemmPath path);
// Whether QKV_GEMM_VERBOSE=1 asked for each product's plan on stderr (0 or unset: no).
bool gemm_verbose();
void set_gemm_verbose(bool on);

}  // namespace qkv
