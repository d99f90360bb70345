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

// A KC x NC panel of B as the kernel reads it: the micro-panels of columns [0, in_place_to)
// are B's own rows (ld apart, from `rows`); the others were packed into `packed`, kc x NR each.
struct BPanel {
  const float* rows;
  int64_t ld, in_place_to;
  const float* packed;
};

// One KC block (kc terms; A starts at the block's first term) of rows [0, M) of C against a
// panel of B (nc columns), tile by tile: every MR x NR tile, two at a time as one MR x 2 NR tile
// where the kernel has a wide one and both micro-panels are whole and read alike (both in place
// or both packed). `add`: add to C rather than store; `ep`: the epilogue for the panel's
// columns, on the last KC block only; `band`: the terms each tile needs (K fits one KC block),
// rows counted from this call's row 0. The tiles go in one of two orders:
//  - BLIS's (the ladder's step 5): A's MC-row blocks, each read in place (its MR-row panels
//    where they lie, when the kernel can; the short last one only if it reads just the rows it
//    is given) or packed into `ap`; in a block, each micro-panel of B (or pair) in turn, under
//    which all the block's row tiles pass, so that the block of A stays in L2 and the
//    micro-panel in L1. The wide tile takes tuning.wide_rows_in_place rows where the block
//    is all read in place (4 with AVX-512 on a Zen 4).
//  - rows outer, where the tuning asks for it (rows_outer_chunk), the panel is more than two
//    chunks wide and all of A is read in place: B's columns in chunks of b_chunk, and in a
//    chunk each MR-row tile of A in turn, under which the chunk's micro-panels pass. In BLIS's
//    order the whole panel of B (KC x N: 3 MiB at N = 2048) streams from L3 for every block of
//    A once it is larger than L2, and AVX-512's pair of micro-panels (KC x 64, 96 KiB), twice
//    an L1 cache, from L2 for every row tile. Rows outer, a tile's rows of A (6 x KC, 9 KiB)
//    stay in L1 and a chunk of B (KC x 512, 768 KiB) in L2 for all the rows of the call. Where
//    the panel fits L2 there is nothing to win, and rows outer measured slower at some of those
//    shapes (bench/notes/2026-12-06-gemm.md).
// Either order gives each tile the same terms in the same kernel: the same bits.
void block_rows(const GemmPlan& plan, int64_t M, int64_t nc, int64_t kc, int64_t K, MatrixRef A,
                const BPanel& b, float* C, int64_t ldc, bool add, const GemmEpilogue& ep,
                GemmBand band, float* ap);

// Step 5's loop nest on one thread, with its refinements: the epilogue on the last KC block,
// the band's terms only, and the MR-row panels of a row-major A read where they lie instead of
// packed (the kernel takes A's strides, except NEON's); the short last panel too where the
// kernel reads only the rows it is given (reads_short_a_in_place), else it is packed, for its
// zero rows. B is read in place when it is row-major and either
//  - exactly one micro-panel (NR columns) wide, with few row tiles to read it (M <= 2 MC):
//    attention's per-head products with a head size of 32 (P v, dS k, dS^T q, P^T dout), where
//    copying B cost as much as a fifth of the work; or
//  - the product is small (under tuning.parallel_min_work, one thread's), where packing B is a
//  large
//    part of the work.
// Each in-place micro-panel is B's own rows, ldb apart; a short last panel is packed. Large
// products keep packing B: many tiles reading its rows ldb apart crowd each other out of L1.
// Whether packed_loops reads B's micro-panels in place for this product (above).
bool b_in_place(const GemmTuning& tuning, int64_t M, int64_t N, int64_t K, MatrixRef B);

void packed_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue = {},
                  GemmBand band = {});

// A product with few rows (decoding one token: M = 1) gains nothing from packing: packing B
// copies all K x N of it to use each element only M times, which costs as much as the product
// itself. Such products read B where it lies: as rows (C[i, :] += A[i, k] * B[k, :]) when B's
// rows are contiguous, as dot products of A's row with B's columns when those are (x @ W^T,
// as Linear computes it; dot_column and dot_four_columns, dot.cpp), in 16 independent sums
// so the compiler vectorises them.
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
// columns, are handed out (hand_out_rows, hand_out_columns, below), on the same cut_rows.
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
