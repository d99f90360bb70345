// loops.cpp: step 5's loop nest on one thread, with the production GEMM's refinements: the
// panels of A and B read in place where the kernel can take them, the wide tile, the band's
// terms only, the epilogue on the last KC block, and rows outer (block_rows, packed_loops);
// and fast_loops, which sends a product of a few rows to few_rows.cpp instead.
#include <algorithm>

#include "tensor/gemm/internal.h"
#include "tensor/thread_pool.h"

namespace qkv::gemm_detail {

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
                GemmBand band, float* ap) {
  const FastKernel& kernel = plan.kernel;
  const int64_t b_chunk = plan.tuning.rows_outer_chunk;
  // Whether the micro-panels at jr and jr + NR go as one wide tile: both whole and read alike
  // (both in place, or both packed and before column `end`).
  const auto wide_at = [&](int64_t jr, int64_t end) {
    return kernel.wide && jr + 2 * kNR <= (jr < b.in_place_to ? b.in_place_to : end);
  };
  // The tile of C's rows [row, row + rows) and NR (or, wide, 2 NR) columns from jr, its rows of
  // A at `a` (term 0 of the block; A[i, k] at a[i * a_rs + k * a_ks]).
  const auto tile = [&](int64_t row, int64_t rows, const float* a, int64_t a_rs, int64_t a_ks,
                        int64_t jr, bool wide) {
    const bool b_here = jr < b.in_place_to;  // read in place
    const float* b_panel = b_here ? b.rows + jr : b.packed + (jr - b.in_place_to) * kc;
    const int64_t b_ks = b_here ? b.ld : kNR, b_half = b_here ? kNR : kc * kNR;
    const auto [k0, k1] = band_range(band, row, rows, kc, K);  // the terms it needs
    const GemmEpilogue tile_ep = ep.at(jr);
    const GemmEpilogue* tile_ep_or_null = ep.any() ? &tile_ep : nullptr;
    float* c_tile = C + row * ldc + jr;
    // Two panels of B read in place are a small product's (packed_loops), whose C is small and
    // in cache: no prefetching there.
    if (wide)
      kernel.wide(k1 - k0, a + k0 * a_ks, a_rs, a_ks, b_panel + k0 * b_ks, b_half, b_ks, c_tile,
                  ldc, add, /*prefetch_c=*/!b_here, rows, tile_ep_or_null);
    else
      kernel.fn(k1 - k0, a + k0 * a_ks, a_rs, a_ks, b_panel + k0 * b_ks, b_ks, c_tile, ldc, add,
                rows, std::min(kNR, nc - jr), tile_ep_or_null);
  };
  const bool in_place = a_in_place(kernel, plan.tuning, A);
  if (goes_rows_outer(kernel, plan.tuning, M, nc, in_place)) {
    for (int64_t j0 = 0; j0 < nc; j0 += b_chunk) {
      const int64_t j1 = std::min(nc, j0 + b_chunk);
      for (int64_t row = 0; row < M; row += kMR)
        for (int64_t jr = j0; jr < j1;) {
          const bool wide = wide_at(jr, j1);
          tile(row, std::min(kMR, M - row), A.p + row * A.row_stride, A.row_stride, A.col_stride,
               jr, wide);
          jr += wide ? 2 * kNR : kNR;
        }
    }
    return;
  }
  for (int64_t ic = 0; ic < M; ic += kMC) {
    const int64_t mc = std::min(kMC, M - ic);
    const float* a_block = A.p + ic * A.row_stride;
    // Rows [0, packed_from) are read in place; rows from there on are packed into ap.
    int64_t packed_from = 0;
    if (in_place) packed_from = kernel.reads_short_a_in_place ? mc : mc / kMR * kMR;
    if (packed_from < mc)
      pack_a(mc - packed_from, kc,
             {a_block + packed_from * A.row_stride, A.row_stride, A.col_stride}, ap,
             band.at(ic + packed_from), K);
    for (int64_t jr = 0; jr < nc;) {
      const bool wide = wide_at(jr, nc);
      const int64_t tile_rows = wide && packed_from == mc ? plan.tuning.wide_rows_in_place : kMR;
      for (int64_t ir = 0; ir < mc; ir += tile_rows) {
        const int64_t rows = std::min(tile_rows, mc - ir);
        if (ir < packed_from)
          tile(ic + ir, rows, a_block + ir * A.row_stride, A.row_stride, A.col_stride, jr, wide);
        else
          tile(ic + ir, rows, ap + (ir - packed_from) * kc, 1, kMR, jr, wide);
      }
      jr += wide ? 2 * kNR : kNR;
    }
  }
}

// Step 5's loop nest on one thread, with its refinements: the epilogue on the last KC block,
// the band's terms only, and the MR-row panels of a row-major A read where they lie instead of
// packed (the kernel takes A's strides, except NEON's); the short last panel too where the
// kernel reads only the rows it is given (reads_short_a_in_place), else it is packed, for its
// zero rows. B is read in place when it is row-major and either
//  - exactly one micro-panel (NR columns) wide, with few row tiles to read it (M <= 2 MC):
//    attention's per-head products with a head size of 32 (P v, dS k, dS^T q, P^T dout), where
//    copying B cost as much as a fifth of the work; or
//  - the product is small (under tuning.parallel_min_work, one thread's), where packing B is
//    a large part of the work.
// Each in-place micro-panel is B's own rows, ldb apart; a short last panel is packed. Large
// products keep packing B: many tiles reading its rows ldb apart crowd each other out of L1.
// Whether packed_loops reads B's micro-panels in place for this product (above).
bool b_in_place(const GemmTuning& tuning, int64_t M, int64_t N, int64_t K, MatrixRef B) {
  return B.col_stride == 1 && ((N == kNR && M <= 2 * kMC) || M * N * K < tuning.parallel_min_work);
}

void packed_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue,
                  GemmBand band) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    prepare_c(M, N, C, ldc, accumulate);
    return finish_all(M, N, C, ldc, epilogue);
  }
  const bool b_here = b_in_place(plan.tuning, M, N, K, B);
  const int64_t round_n = packed_width(std::min(N, kNC));
  const int64_t round_m = packed_height(std::min(M, kMC));
  float* bp = thread_scratch(Scratch::gemm_b, std::min(K, kKC) * round_n);
  float* ap = thread_scratch(Scratch::gemm_a, std::min(K, kKC) * round_m);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      // Columns [0, in_place_to) are read in place; the rest are packed into bp.
      const int64_t in_place_to = b_here ? nc / kNR * kNR : 0;
      if (in_place_to < nc)
        pack_b(kc, nc - in_place_to,
               {B.p + pc * B.row_stride + (jc + in_place_to) * B.col_stride, B.row_stride,
                B.col_stride},
               bp);
      const bool add = accumulate || pc > 0;  // the first K block stores, later ones add
      const bool last = pc + kc == K;         // the epilogue, on the finished sums
      block_rows(plan, M, nc, kc, K, {A.p + pc * A.col_stride, A.row_stride, A.col_stride},
                 {B.p + pc * B.row_stride + jc, B.row_stride, in_place_to, bp}, C + jc, ldc, add,
                 last ? epilogue.at(jc) : GemmEpilogue{}, band, ap);
    }
  }
}

// Step 5's work on one thread: few rows read in place, everything else packed.
void fast_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue,
                GemmBand band) {
  if (M <= plan.tuning.few_rows && M > 0 && N > 0) {
    few_rows(M, N, K, A, B, C, ldc, accumulate);
    return finish_all(M, N, C, ldc, epilogue);
  }
  packed_loops(M, N, K, A, B, C, ldc, accumulate, plan, epilogue, band);
}

}  // namespace qkv::gemm_detail
