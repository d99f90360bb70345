// execute.cpp: the production GEMM's executor, beneath the ladder (ladder.cpp). `gemm` is step 5
// (the SIMD kernel, the thread pool, packed blocks: gemm_threaded) with the refinements below, each
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
// dot.cpp), which sum in fixed orders of their own, the same on any thread count.
#include <algorithm>
#include <vector>

#include "tensor/error.h"
#include "tensor/gemm/internal.h"
#include "tensor/thread_pool.h"

namespace qkv {

using namespace gemm_detail;

namespace {

// One unit of threaded work: rows [m0, m1) and columns [n0, n1) of product `b` of a batch.
struct Tile {
  int64_t b, m0, m1, n0, n1;
};

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
// on one thread, so the bits are those of the static split and of the serial loops.
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
// would then sweep all of its chunk's packed B again (bench/notes/2026-12-06-gemm.md).
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

}  // namespace

// ---- the executor ------------------------------------------------------------------------------

// A band (GemmBand) is applied where each part runs fast_loops; the K-cut and shared-B paths,
// for large products, sum every term.
void run_gemm(const GemmProblem& p, const GemmPlan& plan) {
  const int64_t batches = p.batches();
  check(!p.epilogue.any() || batches == 1, "gemm_batched", "an epilogue for one product, got ",
        batches);
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

}  // namespace qkv
