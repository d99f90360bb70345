// gemm_fast.cpp: the production GEMM, beneath the ladder (gemm.cpp). `gemm` is step 5 (the
// SIMD kernel, the thread pool, packed blocks: gemm_threaded) with the refinements below, each
// chosen by the shape of the product and none changing what a product means. The tests hold
// every path to step 1 on awkward shapes (tests/tensor/test_gemm.cpp); what each was measured
// to gain, and on which CPU, is in bench/notes/2026-12-06-gemm.md.
//
// refinement          what it removes
// in-place panels     the copy of a panel of A (row-major, or transposed with its k steps close)
//                     and of a B one micro-panel wide or in a small product: the kernel reads
//                     them through their strides (packed_loops, block_rows)
// short panels        the rows of zeros of A's last panel: the kernel computes only its rows
// band (GemmBand)     the multiply-adds with causal attention's zeros above the diagonal
// epilogue            the separate pass over C that adds a Linear's bias
// few rows            packing all of B to use each element M <= 4 times (decoding one token)
// batches             idle threads in many small products: one pool of work (split, run_tiles)
// shared B            one packed copy of B per thread in a large product: one, packed by all
// K chunks            each thread packing all of a weight gradient's long K: each packs its part
// wide tile           half of the broadcasts of A: two micro-panels of B under one tile
// four-row wide tile  on a Zen 4, the L2 traffic the 6-row wide tile asks of one 512-bit FMA
// rows, columns       a thread waiting at the end of a product for the slower one: pieces
// handed out          handed to whichever is free, each thread's own range first
// four columns at     one stream of W per thread in x W^T with one row: four, each a quarter of
// a time              N apart, so that the prefetcher follows four long runs
//
// Every path is bit for bit the arithmetic of step 5 except the K chunks and the few rows' dot
// products (x W^T, in 16 sums per column, each term a product and a sum rounded apart:
// gemm_dot.cpp), which sum in fixed orders of their own, the same on any thread count.
#include <algorithm>
#include <atomic>
#include <vector>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tensor/error.h"
#include "tensor/gemm.h"
#include "tensor/gemm_kernel.h"
#include "tensor/gemm_plan.h"
#include "tensor/thread_pool.h"

namespace qkv {

using namespace gemm_detail;

namespace {

// Whether the kernel reads the panels of A where they lie, through A's strides: a kernel that
// takes them (all but NEON's), and A row-major (its rows' elements contiguous) or transposed with
// its k steps close (tuning.transposed_a_in_place_max_ld). A transposed A (a weight gradient's
// dY^T, attention's P^T and dS^T) holds each k's values of all rows side by side, one row of dY:
// a panel's 6 values of one k sit in one cache line, and the next k's a row of dY further on.
// Read there in place, a step of k loads a new line; that pays while those rows are close. From
// 1024 floats (4 KiB) apart, every step of k falls in the same set of L1's lines (48 KiB in 12
// ways: 4 KiB a way), and the panel evicts itself, so those are packed.
bool a_in_place(const FastKernel& kernel, const GemmTuning& tuning, MatrixRef A) {
  return kernel.reads_a_in_place &&
         (A.col_stride == 1 ||
          (A.row_stride == 1 && A.col_stride <= tuning.transposed_a_in_place_max_ld));
}

// How many NR-column micro-panels n columns of B make (the last may be short): the unit in
// which B is packed by all threads together and a few-row product's columns are handed out.
int64_t col_tiles(int64_t n) {
  return (n + kNR - 1) / kNR;
}
// The width of n columns of B once packed: rounded up to whole micro-panels of NR columns.
int64_t packed_width(int64_t n) {
  return col_tiles(n) * kNR;
}
// How many MR-row tiles m rows of C make (the last may be short): the unit in which the
// threaded loops below hand out rows.
int64_t row_tiles(int64_t m) {
  return (m + kMR - 1) / kMR;
}
// The height of m rows of A once packed: rounded up to whole panels of MR rows.
int64_t packed_height(int64_t m) {
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
  if (b_chunk > 0 && nc > 2 * b_chunk && in_place &&
      (kernel.reads_short_a_in_place || M % kMR == 0)) {
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
//  - the product is small (under tuning.parallel_min_work, one thread's), where packing B is a
//  large
//    part of the work.
// Each in-place micro-panel is B's own rows, ldb apart; a short last panel is packed. Large
// products keep packing B: many tiles reading its rows ldb apart crowd each other out of L1.
// Whether packed_loops reads B's micro-panels in place for this product (above).
bool b_in_place(const GemmTuning& tuning, int64_t M, int64_t N, int64_t K, MatrixRef B) {
  return B.col_stride == 1 && ((N == kNR && M <= 2 * kMC) || M * N * K < tuning.parallel_min_work);
}

void packed_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                  bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue = {},
                  GemmBand band = {}) {
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

// A product with few rows (decoding one token: M = 1) gains nothing from packing: packing B
// copies all K x N of it to use each element only M times, which costs as much as the product
// itself. Such products read B where it lies: as rows (C[i, :] += A[i, k] * B[k, :]) when B's
// rows are contiguous, as dot products of A's row with B's columns when those are (x @ W^T,
// as Linear computes it; dot_column and dot_four_columns, gemm_dot.cpp), in 16 independent sums
// so the compiler vectorises them.
void few_rows(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
              bool accumulate) {
  prepare_c(M, N, C, ldc, accumulate);
  std::vector<float> a_row(static_cast<size_t>(K));
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * ldc;
    for (int64_t k = 0; k < K; ++k) a_row[static_cast<size_t>(k)] = A.at(i, k);
    const float* a = a_row.data();
    if (B.col_stride == 1) {
      for (int64_t k = 0; k < K; ++k) {
        const float aik = a[k];
        const float* b = B.p + k * B.row_stride;
        for (int64_t j = 0; j < N; ++j) c[j] += aik * b[j];
      }
    } else if (B.row_stride == 1) {
      // The four columns of a group are a quarter of N apart: columns j, j + q, j + 2 q and
      // j + 3 q. Each stream then walks a quarter of W's rows in order, one long run of memory
      // that the hardware prefetcher follows; four neighbouring rows would be four runs of
      // K floats each, restarting every group (bench/notes/2026-12-06-gemm.md).
      const int64_t q = N / 4;
      for (int64_t j = 0; j < q; ++j)
        dot_four_columns(a, B.p + j * B.col_stride, q * B.col_stride, K, c + j, q);
      for (int64_t j = 4 * q; j < N; ++j) c[j] += dot_column(a, B.p + j * B.col_stride, K);
    } else {
      for (int64_t j = 0; j < N; ++j) {
        float sum = 0.0f;
        for (int64_t k = 0; k < K; ++k) sum += a[k] * B.at(k, j);
        c[j] += sum;
      }
    }
  }
}

// Step 5's work on one thread: few rows read in place, everything else packed.
void fast_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue,
                GemmBand band = {}) {
  if (M <= plan.tuning.few_rows && M > 0 && N > 0) {
    few_rows(M, N, K, A, B, C, ldc, accumulate);
    return finish_all(M, N, C, ldc, epilogue);
  }
  packed_loops(M, N, K, A, B, C, ldc, accumulate, plan, epilogue, band);
}

// The work of `batches` products of M x K by K x N, against tuning.parallel_min_work. A product
// of a few rows (few_rows) is limited by reading B, which takes about as long as
// few_rows_as_rows rows' worth of multiply-adds, so it counts as that many rows: decoding's
// attention products (12 heads of one query against L cached keys, GPT-2 small's shape) are
// split between the threads from L = 43, not from L = 683.
int64_t gemm_work(const GemmTuning& t, int64_t batches, int64_t M, int64_t N, int64_t K) {
  return batches * (M <= t.few_rows ? std::max(M, t.few_rows_as_rows) : M) * N * K;
}

// One unit of threaded work: rows [m0, m1) and columns [n0, n1) of product `b` of a batch.
struct Tile {
  int64_t b, m0, m1, n0, n1;
};

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
bool cut_rows(int64_t M, int64_t N, bool a_packed) {
  return a_packed ? M >= N : M >= 2 * N;
}
std::vector<Tile> split(int64_t batches, int64_t M, int64_t N, int threads, bool a_packed) {
  std::vector<Tile> tiles;
  // Enough batches to go round: whole products per thread. Else cut each product into parts.
  int64_t parts_each = batches < threads ? (threads + batches - 1) / batches : 1;
  const bool by_rows = cut_rows(M, N, a_packed);
  const int64_t unit = by_rows ? kMR : kNR, extent = by_rows ? M : N;
  const int64_t units = (extent + unit - 1) / unit;
  parts_each = std::max<int64_t>(1, std::min(parts_each, units));
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t p = 0; p < parts_each; ++p) {
      const int64_t lo = std::min(extent, units * p / parts_each * unit);
      const int64_t hi = std::min(extent, units * (p + 1) / parts_each * unit);
      tiles.push_back(by_rows ? Tile{b, lo, hi, 0, N} : Tile{b, 0, M, lo, hi});
    }
  return tiles;
}

// One product cut by rows: each thread owns a range of them, and the pieces left are handed out
// to whichever thread is free. In the static split every thread gets half the rows (of two),
// and a parallel region ends when the slower half does, now the caller's, now the worker's.
// Rows handed out from one shared counter would be dealt in turn, so each thread would read
// half of its rows of A from the other core's cache: A is what the pass before wrote (a
// LayerNorm, GELU, the attention), and each of those, split by hand_out_ranges, wrote the
// first rows on the caller's core and the last on the worker's. So each thread now takes its
// own range first, in shrinking pieces, then the pieces left in the others' (hand_out_ranges;
// bench/notes/2026-12-06-gemm.md). Before its first piece a
// thread packs all of B (every KC block of it: B is at most tuning.hand_out_max_b floats); a
// piece's rows go through every KC block in turn, in the same MR-row tiles and the same kernel as
// on one thread, so the bits are those of the static split and of the serial loops. Whether
// hand_out_rows takes a product: one product of more than a few rows, which split would cut by
// rows, with all of B packed (every KC block of it) within tuning.hand_out_max_b.
bool hands_out_rows(const GemmTuning& t, int64_t batches, int64_t M, int64_t N, int64_t K,
                    bool a_packed) {
  return batches == 1 && M > t.few_rows && cut_rows(M, N, a_packed) && N <= kNC &&
         K * packed_width(N) <= t.hand_out_max_b;
}

void hand_out_rows(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue,
                   GemmBand band) {
  const int64_t round_n = packed_width(N);
  const int64_t round_m = packed_height(std::min(M, kMC));
  const int threads = plan.threads;
  std::vector<char> packed(static_cast<size_t>(threads), 0);  // part p's thread has packed B
  hand_out_ranges_per_part(
      row_tiles(M), threads, plan.tuning.min_row_piece_tiles,
      [&](int64_t p, int64_t t0, int64_t t1) {
        float* bp = thread_scratch(Scratch::gemm_b, K * round_n);  // KC block pc at bp + pc round_n
        if (!packed[static_cast<size_t>(p)]) {
          for (int64_t pc = 0; pc < K; pc += kKC)
            pack_b(std::min(kKC, K - pc), N, {B.p + pc * B.row_stride, B.row_stride, B.col_stride},
                   bp + pc * round_n);
          packed[static_cast<size_t>(p)] = 1;
        }
        float* ap = thread_scratch(Scratch::gemm_a, std::min(K, kKC) * round_m);
        const int64_t m0 = std::min(M, t0 * kMR), m1 = std::min(M, t1 * kMR);
        for (int64_t pc = 0; pc < K; pc += kKC) {
          const int64_t kc = std::min(kKC, K - pc);
          block_rows(plan, m1 - m0, N, kc, K,
                     {A.p + m0 * A.row_stride + pc * A.col_stride, A.row_stride, A.col_stride},
                     {nullptr, 0, 0, bp + pc * round_n}, C + m0 * ldc, ldc, accumulate || pc > 0,
                     pc + kc == K ? epilogue : GemmEpilogue{}, band.at(m0), ap);
        }
      });
}

// One product cut by columns (split would give each thread one range of them): each thread owns
// a range of NR-column micro-panels and takes it in shrinking pieces, then the pieces left in the
// others' (hand_out_ranges), each piece a product of its own over all of A (fast_loops: B's
// columns packed, A read in place or packed). A range per thread and no more ended when the
// slower thread did, and on a shared host one core often runs slower than the other. A piece
// reads all of A again: per element of A, 4 bytes from L3 at some 20 bytes a cycle against w
// multiply-adds for a piece w columns wide, at NR a cycle (a core's 2 FMAs of NR / 2 lanes), so
// 0.2 NR / w of the piece's time. No piece is narrower than min_column_piece_tiles micro-panels,
// where that is a fortieth. Each column of C gets the same KC blocks through the same kernel
// whichever piece holds it: the bits of any split. A product of a few rows (decoding one token)
// reads B in place and nothing else again, so its pieces go down to one micro-panel.
void hand_out_columns(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                      int64_t ldc, bool accumulate, const GemmPlan& plan,
                      const GemmEpilogue& epilogue, GemmBand band, int64_t min_piece_tiles) {
  const int64_t units = col_tiles(N);
  hand_out_ranges(
      units, std::min<int64_t>(plan.threads, units), min_piece_tiles, [&](int64_t u0, int64_t u1) {
        const int64_t n0 = u0 * kNR, n1 = std::min(N, u1 * kNR);
        fast_loops(M, n1 - n0, K, A, {B.p + n0 * B.col_stride, B.row_stride, B.col_stride}, C + n0,
                   ldc, accumulate, plan, epilogue.at(n0), band);
      });
}

// A large single product: one packed copy of each KC x NC panel of B, shared by all threads
// (all of them packing it), instead of a copy per thread; the threads then compute the panel's
// rows of C, each reading its rows of A in place, or packing them, as packed_loops does
// (block_rows). Every element of C still sees the same KC blocks through the same kernel, so
// the result is bit-identical to the serial one. What it saves is the duplicate packing and
// the second stream of B through memory.
//
// Each thread owns an MR-aligned range of rows, the same for every panel (its rows of A and C
// stay in its own caches), and takes it in shrinking pieces of at least min_row_piece_tiles tiles;
// a thread done with its own range takes the pieces still left in the others' (hand_out_ranges,
// as parallel_ranges does for the passes outside the GEMM). A range per thread and no more
// had the threads finish apart wherever one core ran slower than the other, and the faster
// one wait (bench/notes/2026-12-06-gemm.md).
void shared_b_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C,
                    int64_t ldc, bool accumulate, const GemmPlan& plan,
                    const GemmEpilogue& epilogue) {
  const int64_t round_n = packed_width(std::min(N, kNC));
  float* bp = thread_scratch(Scratch::gemm_shared_b, std::min(K, kKC) * round_n);
  const int64_t units = row_tiles(M);
  const int64_t parts = std::min<int64_t>(plan.threads, units);
  for (int64_t jc = 0; jc < N; jc += kNC) {
    const int64_t nc = std::min(kNC, N - jc);
    for (int64_t pc = 0; pc < K; pc += kKC) {
      const int64_t kc = std::min(kKC, K - pc);
      const bool add = accumulate || pc > 0;
      const bool last = pc + kc == K;
      // The threads pack the panel together, each its share of its NR-column micro-panels,
      // so that none waits while another packs.
      const int64_t strips = col_tiles(nc);
      parallel_for(parts, [&](int64_t part) {
        const int64_t j0 = strips * part / parts * kNR;
        const int64_t j1 = std::min(nc, strips * (part + 1) / parts * kNR);
        if (j0 < j1)
          pack_b(kc, j1 - j0,
                 {B.p + pc * B.row_stride + (jc + j0) * B.col_stride, B.row_stride, B.col_stride},
                 bp + j0 * kc);
      });
      hand_out_ranges(units, parts, plan.tuning.min_row_piece_tiles, [&](int64_t t0, int64_t t1) {
        const int64_t m0 = std::min(M, t0 * kMR), m1 = std::min(M, t1 * kMR);
        float* ap = thread_scratch(Scratch::gemm_a, kc * packed_height(std::min(M, kMC)));
        block_rows(plan, m1 - m0, nc, kc, K,
                   {A.p + m0 * A.row_stride + pc * A.col_stride, A.row_stride, A.col_stride},
                   {nullptr, 0, 0, bp}, C + m0 * ldc + jc, ldc, add,
                   last ? epilogue.at(jc) : GemmEpilogue{}, {}, ap);
      });
    }
  }
}

// A weight gradient, dW = dY^T X, is a small C (out x in) over a long K (every token of the
// batch: 2048 for the tiny GPT's larger config). Cut into rows or columns, as above, each of
// the threads packs all of X's rows (or of dY's) for its part: the same megabytes read and
// packed twice, and a split of 128 rows into 6-row tiles is never even. Such a product is
// instead cut along K: chunk c sums k in [K c / n, K (c + 1) / n), into C for the first chunk
// and into a scratch copy for the others, and the chunks are then added to C in chunk order.
// Each thread packs (or reads in place) only its own chunk's rows of both operands. n depends on K
// alone (one chunk per tuning.k_chunk of depth, at most max_k_chunks), never on the thread count; a
// thread count that exceeds the chunks cuts each chunk into row ranges, which changes no
// arithmetic; and one thread runs the same chunks in turn. So the bits are the same on 1, 2 or N
// threads, though not those of one unbroken sum (it is a different, equally valid order of the
// additions). A chunk's rows are not handed out to a thread done with its own: a piece of rows
// would then sweep all of its chunk's packed B again (bench/notes/2026-12-06-gemm.md). How many K
// chunks a product is summed in: 1 (no cut) unless it looks like a weight gradient: one product, A
// transposed (dY^T), at least two chunks of depth, more than a few rows (those read B in place) and
// below the shared-B size. An epilogue is applied after the chunks are added, to the finished sums,
// as the micro-kernel applies it.
int64_t k_chunks(const GemmTuning& t, int64_t batches, int64_t M, int64_t N, int64_t K,
                 int64_t a_cs) {
  if (batches != 1 || a_cs == 1 || M <= t.few_rows || M * N * K < t.parallel_min_work ||
      M * N * K >= t.shared_b_min_work)
    return 1;
  return std::max<int64_t>(1, std::min(t.max_k_chunks, K / t.k_chunk));
}

void k_split_loops(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc,
                   bool accumulate, const GemmPlan& plan, const GemmEpilogue& epilogue) {
  const int64_t chunks = plan.k_chunks;
  // The calling thread's, shared with the pool below.
  float* scratch = thread_scratch(Scratch::gemm_k_split, (chunks - 1) * M * N);
  // One chunk per thread, or row ranges of one where there are more threads. A range runs
  // packed_loops, as the whole chunk does on one thread: fast_loops would send a range of up
  // to tuning.few_rows rows (the last of M = 9 cut in two) to few_rows, whose sums run in another
  // order, and 3 threads would not give 1 thread's bits.
  const int64_t units = row_tiles(M);
  const int64_t row_parts =
      std::max<int64_t>(1, std::min<int64_t>(units, (plan.threads + chunks - 1) / chunks));
  parallel_for(chunks * row_parts, [&](int64_t t) {
    const int64_t c = t / row_parts, p = t % row_parts;
    const int64_t k0 = K * c / chunks, k1 = K * (c + 1) / chunks;
    const int64_t m0 = std::min(M, units * p / row_parts * kMR);
    const int64_t m1 = std::min(M, units * (p + 1) / row_parts * kMR);
    float* out = c == 0 ? C + m0 * ldc : scratch + (c - 1) * M * N + m0 * N;
    packed_loops(m1 - m0, N, k1 - k0,
                 {A.p + m0 * A.row_stride + k0 * A.col_stride, A.row_stride, A.col_stride},
                 {B.p + k0 * B.row_stride, B.row_stride, B.col_stride}, out, c == 0 ? ldc : N,
                 c == 0 && accumulate, plan);
  });
  // C += chunk 1, then += chunk 2, ...: element by element, in chunk order; then the epilogue.
  parallel_ranges(M, M * N >= kParallelElements, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i) {
      float* dst = C + i * ldc;
      for (int64_t c = 1; c < chunks; ++c) {
        const float* src = scratch + (c - 1) * M * N + i * N;
        for (int64_t j = 0; j < N; ++j) dst[j] += src[j];
      }
      finish_all(1, N, dst, ldc, epilogue);
    }
  });
}

// Product b of a problem: its A, B and C.
struct Product {
  MatrixRef A, B;
  float* C;
};
Product product(const GemmProblem& p, int64_t b) {
  if (!p.batch) return {p.A, p.B, p.C};
  return {{p.batch->a[static_cast<size_t>(b)], p.A.row_stride, p.A.col_stride},
          {p.batch->b[static_cast<size_t>(b)], p.B.row_stride, p.B.col_stride},
          p.batch->c[static_cast<size_t>(b)]};
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
  plan.rows_outer = t.rows_outer_chunk > 0 && std::min(p.N, kNC) > 2 * t.rows_outer_chunk &&
                    plan.a_in_place && (cpu.kernel.reads_short_a_in_place || p.M % kMR == 0);
  const auto split = [&](GemmSplit s) {
    plan.split = s;
    if (s == GemmSplit::one_thread) plan.threads = 1;
    if (s == GemmSplit::one_thread) plan.b_in_place = b_in_place(t, p.M, p.N, p.K, p.B);
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

// ---- the executor ------------------------------------------------------------------------------

// A band (GemmBand) is applied where each part runs fast_loops; the K-cut and shared-B paths,
// for large products, sum every term.
void run_gemm(const GemmProblem& p, const GemmPlan& plan) {
  const int64_t batches = p.batches();
  check(!p.epilogue.any() || batches == 1, "gemm", "an epilogue for one product, got ", batches);
  check(batches == 1 || plan.split == GemmSplit::one_thread || plan.split == GemmSplit::batch_split,
        "run_gemm", "a split of one product (", to_string(plan.split), ") for a batch of ",
        batches);
  const auto [A, B, C] = product(p, 0);
  switch (plan.split) {
    case GemmSplit::one_thread:
      for (int64_t b = 0; b < batches; ++b) {
        const Product one = product(p, b);
        fast_loops(p.M, p.N, p.K, one.A, one.B, one.C, p.ldc, p.accumulate, plan, p.epilogue,
                   p.band);
      }
      return;
    case GemmSplit::k_chunks:
      return k_split_loops(p.M, p.N, p.K, A, B, C, p.ldc, p.accumulate, plan, p.epilogue);
    case GemmSplit::few_row_columns:
      // A few-row product reads B in place and nothing else again: pieces of one micro-panel.
      return hand_out_columns(p.M, p.N, p.K, A, B, C, p.ldc, p.accumulate, plan, p.epilogue, p.band,
                              /*min_piece_tiles=*/1);
    case GemmSplit::shared_b:
      return shared_b_loops(p.M, p.N, p.K, A, B, C, p.ldc, p.accumulate, plan, p.epilogue);
    case GemmSplit::rows_handed_out:
      return hand_out_rows(p.M, p.N, p.K, A, B, C, p.ldc, p.accumulate, plan, p.epilogue, p.band);
    case GemmSplit::columns_handed_out:
      return hand_out_columns(p.M, p.N, p.K, A, B, C, p.ldc, p.accumulate, plan, p.epilogue, p.band,
                              plan.tuning.min_column_piece_tiles);
    case GemmSplit::batch_split: {
      const std::vector<Tile> tiles =
          split(batches, p.M, p.N, plan.threads, !a_in_place(plan.kernel, plan.tuning, p.A));
      // Thread t takes a contiguous run of tiles: neighbours share packed B and cache lines of C.
      const int64_t n = static_cast<int64_t>(tiles.size());
      const int64_t parts = std::min<int64_t>(plan.threads, n);
      parallel_for(parts, [&](int64_t part) {
        for (int64_t i = n * part / parts; i < n * (part + 1) / parts; ++i) {
          const Tile& t = tiles[static_cast<size_t>(i)];
          const Product one = product(p, t.b);
          fast_loops(t.m1 - t.m0, t.n1 - t.n0, p.K,
                     {one.A.p + t.m0 * p.A.row_stride, p.A.row_stride, p.A.col_stride},
                     {one.B.p + t.n0 * p.B.col_stride, p.B.row_stride, p.B.col_stride},
                     one.C + t.m0 * p.ldc + t.n0, p.ldc, p.accumulate, plan, p.epilogue.at(t.n0),
                     p.band.at(t.m0));
        }
      });
      return;
    }
  }
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
