// internal.h: what the production GEMM's files share (tensor/gemm/): the units of its loops,
// a panel of B as the kernel reads it, step 5's loop nest on one thread with its refinements
// (loops.cpp), the few-row products (few_rows.cpp), and how a product's rows or columns are cut
// (plan.cpp, execute.cpp). Internal to the tensor floor.
#pragma once

#include <cstdint>

#include "tensor/gemm.h"
#include "tensor/gemm/kernel.h"
#include "tensor/gemm/plan.h"

namespace qkv::gemm_detail {

// Whether the kernel reads the panels of A where they lie, through A's strides: a kernel that
// takes them (all but NEON's), and A row-major (its rows' elements contiguous) or transposed with
// its k steps close (tuning.transposed_a_in_place_max_ld). A transposed A (a weight gradient's
// dY^T, attention's P^T and dS^T) holds each k's values of all rows side by side, one row of dY:
// a panel's 6 values of one k sit in one cache line, and the next k's a row of dY further on.
// Read there in place, a step of k loads a new line; that pays while those rows are close. From
// 1024 floats (4 KiB) apart, every step of k falls in the same set of L1's lines (48 KiB in 12
// ways: 4 KiB a way), and the panel evicts itself, so those are packed.
inline bool a_in_place(const FastKernel& kernel, const GemmTuning& tuning, MatrixRef A) {
  return kernel.reads_a_in_place &&
         (A.col_stride == 1 ||
          (A.row_stride == 1 && A.col_stride <= tuning.transposed_a_in_place_max_ld));
}

// How many NR-column micro-panels n columns of B make (the last may be short): the unit in
// which B is packed by all threads together and a few-row product's columns are handed out.
inline int64_t col_tiles(int64_t n) {
  return (n + kNR - 1) / kNR;
}
// The width of n columns of B once packed: rounded up to whole micro-panels of NR columns.
inline int64_t packed_width(int64_t n) {
  return col_tiles(n) * kNR;
}
// How many MR-row tiles m rows of C make (the last may be short): the unit in which the
// threaded loops below hand out rows.
inline int64_t row_tiles(int64_t m) {
  return (m + kMR - 1) / kMR;
}
// The height of m rows of A once packed: rounded up to whole panels of MR rows.
inline int64_t packed_height(int64_t m) {
  return row_tiles(m) * kMR;
}

// Whether block_rows takes the tiles rows outer over this panel: the tuning gives a chunk, the
// panel (nc columns) is more than two chunks wide, and all of A (M rows) is read in place.
inline bool goes_rows_outer(const FastKernel& kernel, const GemmTuning& tuning, int64_t M,
                            int64_t nc, bool a_here) {
  return tuning.rows_outer_chunk > 0 && nc > 2 * tuning.rows_outer_chunk && a_here &&
         (kernel.reads_short_a_in_place || M % kMR == 0);
}

// A KC x NC panel of B as the kernel reads it: the micro-panels of columns [0, in_place_to)
// are B's own rows (ld apart, from `rows`); the others were packed into `packed`, kc x NR each.
struct BPanel {
  const float* rows;
  int64_t ld, in_place_to;
  const float* packed;
};

// One KC block of rows [0, M) of C against a panel of B, tile by tile, in BLIS's order or rows
// outer (loops.cpp says how).
void block_rows(const GemmPlan& plan, int64_t M, int64_t nc, int64_t kc, int64_t K, MatrixRef A,
                const BPanel& b, float* C, int64_t ldc, bool add, const GemmEpilogue& ep,
                GemmBand band, float* ap);

// Whether packed_loops reads B's micro-panels in place for this product (loops.cpp says when).
bool b_in_place(const GemmTuning& tuning, int64_t M, int64_t N, int64_t K, MatrixRef B);
// Step 5's loop nest on one thread, with the refinements of loops.cpp.
void packed_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue = {},
                  GemmBand band = {});

// A product of a few rows, B read where it lies (few_rows.cpp says how).
void few_rows(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
              bool accumulate);

// Step 5's work on one thread: few rows read in place, everything else packed.
void fast_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue,
                GemmBand band = {});

// The static split: cut each product into row (or column) ranges, aligned to the register tile
// so that every thread sees whole tiles, until there is a part per thread. Which element lands
// in which part never changes its arithmetic (same KC blocks, same kernel), so the result is
// bit-identical on 1, 2 or N threads. It runs batches of products, and single products cut by
// rows whose B is too large to pack once per thread; a single product's rows otherwise, or
// columns, are handed out (hand_out_rows, hand_out_columns: execute.cpp), on the same cut_rows.
//
// Which way to cut: every part packs the B columns of its range, and the A rows of its range
// unless A is read in place. Cut rows and every part packs all of B; cut columns and every
// part packs all of A. When A is packed (transposed, with its steps of k far apart:
// a_in_place), cut the longer side, so each part packs the least. When A is read in place, a
// column cut has every part read all of A where it lies, which costs less than every part
// copying all of B, so rows are cut only where there are at least twice as many rows as
// columns (the tiny GPT's M = 2048 products).
bool cut_rows(int64_t M, int64_t N, bool a_packed);

// Product b of a problem: its A, B and C.
struct Product {
  MatrixRef A, B;
  float* C;
};
inline Product product(const GemmProblem& p, int64_t b) {
  if (!p.batch) return {p.A, p.B, p.C};
  return {{p.batch->a[static_cast<size_t>(b)], p.A.row_stride, p.A.col_stride},
          {p.batch->b[static_cast<size_t>(b)], p.B.row_stride, p.B.col_stride},
          p.batch->c[static_cast<size_t>(b)]};
}

}  // namespace qkv::gemm_detail
