// kernel.h: the pieces every packed GEMM shares, for the ladder (ladder.cpp) and the production
// path beneath it (plan.h): the register tile and cache blocks, the packing routines
// (pack.cpp), and the micro-kernels behind one contract (kernel.cpp). Internal to the tensor
// floor.
//
// Legend: C (M, N) = A (M, K) @ B (K, N); MR x NR the register tile, MC x KC a block of A,
// KC x NC a panel of B (BLIS's names, ladder.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensor/gemm.h"
#include "tensor/simd/simd.h"

namespace qkv::gemm_detail {

// The register tile: MR = 6 rows of C by NR columns, NR being kVecs vector registers of the
// build's width (tensor/simd/simd.h). Each step of k loads one row of B (kVecs vectors) and does
// 6 x kVecs multiply-adds with it, so the more accumulators fit in the registers, the more
// arithmetic per load:
//   AVX-512   6 x 32: 2 vectors of 16; 12 accumulators + 2 of B + 1 of A, of 32 registers;
//             and a wide tile of 64 columns, two of those side by side, wherever two
//             micro-panels of B lie side by side (FastKernel::wide): 6 x 64 (24 + 4 + 1 of 32),
//             or 4 x 64 (16 + 4 + 1) where A is read in place on a Zen 4
//   AVX2      6 x 16: 2 vectors of 8;  the same 15, of 16 (BLIS's Haswell kernel)
//   NEON      6 x 16: 4 vectors of 4;  24 accumulators + 4 of B + 2 of A, of 32
//   SSE       6 x 8:  2 vectors of 4;  15 of 16
//   AVX2 6x8  the SSE build's tile on a CPU with AVX2 and FMA (chosen at run time): 1 vector
//             of 8 per row; and a wide 6 x 16 tile, two of those side by side (12 + 2 + 1 of
//             16), wherever two micro-panels of B lie side by side
//   portable  6 x 8:  plain C++, 48 floats that fit 12 registers of 4 (SSE2, NEON)
#if QKV_SIMD_LANES > 0
constexpr int kLanes = QKV_SIMD_LANES;
#if defined(__aarch64__)
constexpr int kVecs = 4;
#else
constexpr int kVecs = 2;
#endif
constexpr int64_t kMR = 6, kNR = kVecs * kLanes;
#else
constexpr int64_t kMR = 6, kNR = 8;
#endif
// The cache blocks: an MC x KC block of A (144 KiB) stays in L2 (1 MiB per core here) while
// the kernel streams KC x NR micro-panels of B (48 KiB) past it, and a KC x NC panel of B
// (6 MiB) stays in L3. Chosen by measurement (bench/notes/2026-12-06-gemm.md): a larger
// KC means fewer passes over C, which is what the big products are limited by.
constexpr int64_t kMC = 96, kKC = 384, kNC = 4096;

// C = 0 unless we are asked to add to it. Every step then only ever does C += ...
void prepare_c(int64_t M, int64_t N, float* C, int64_t ldc, bool accumulate);

// The terms [k0, k1) of a KC block (kc of K) that rows [first_row, first_row + rows) of C
// need: all of them, or, for a band (gemm.h) whose K fits one block, the ones its triangle of
// zeros leaves. Packing and the micro-kernel both ask it, so they agree on every tile.
struct KRange {
  int64_t k0, k1;
};
inline KRange band_range(GemmBand band, int64_t first_row, int64_t rows, int64_t kc, int64_t K) {
  if (band.side == GemmBand::all || kc != K) return {0, kc};
  const int64_t row = band.row0 + first_row;
  if (band.side == GemmBand::up_to_row) return {0, std::clamp<int64_t>(row + rows, 0, K)};
  return {std::clamp<int64_t>(row, 0, K), K};
}

// Packing copies a block into the exact order the micro-kernel reads it, once, so the kernel
// reads memory strictly sequentially whatever A's and B's strides were (this is also where a
// transposed operand costs nothing extra). Rows or columns past the edge are padded with zeros:
// the kernel always computes a full MR x NR tile, and the zeros add nothing.
//
// A block (mc, kc) -> micro-panels of MR rows: panel p holds A[p*MR + i, k] at [p][k][i].
// With a band, only the terms each panel's rows need are copied (the kernel reads no others).
void pack_a(int64_t mc, int64_t kc, MatrixRef A, float* out, GemmBand band = {}, int64_t K = 0);
// B panel (kc, nc) -> micro-panels of NR columns: panel p holds B[k, p*NR + j] at [p][k][j].
void pack_b(int64_t kc, int64_t nc, MatrixRef B, float* out);

// A micro-kernel computes one MR x NR tile of A_panel @ B_panel over kc steps into registers,
// then adds it to C (or stores it, for the first KC block when not accumulating). `c` points at
// the tile's top-left element; only the top-left m x n of it is inside C. A[i, k] is read at
// a[i * a_rs + k * a_ks]: a packed panel has a_rs = 1, a_ks = MR; the production path also
// hands the kernel rows of a row-major A in place (a_rs = lda, a_ks = 1), and of a transposed
// one whose rows are close (a_rs = 1, a_ks = its leading dimension). B[k, j] is read at
// b[k * b_ks + j]: a packed micro-panel has b_ks = NR; the production path also hands it NR
// columns of a row-major B in place (b_ks = ldb) where a product is small (loops.cpp).
// `ep`, when not null, is the epilogue for this tile (gemm.h), given on the last KC block only.
using MicroKernel = void (*)(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                             int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m,
                             int64_t n, const GemmEpilogue* ep);

// A wide micro-kernel computes an MR x 2 NR tile the same way, where the kernel has one (AVX-512,
// and the SSE build's AVX2 kernel): columns [0, NR) of B at b, columns [NR, 2 NR) at b + b_half
// (the next NR floats of a row of B read in place; the next micro-panel, kc x NR further on, of a
// packed one). Its tiles are always whole in their columns; m rows of A and C, m <= MR.
// `prefetch_c` asks the caches for the tile's lines of C before the k loop: worth it where C is
// large and out of cache, a wasted instruction per line where it is small and in L1.
using WideMicroKernel = void (*)(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks,
                                 const float* b, int64_t b_half, int64_t b_ks, float* c,
                                 int64_t ldc, bool add_to_c, bool prefetch_c, int64_t m,
                                 const GemmEpilogue* ep);

// Plain C++ that any compiler builds: step 4's kernel, and the reference for the SIMD ones.
void micro_kernel_portable(int64_t kc, const float* a, int64_t a_rs, int64_t a_ks, const float* b,
                           int64_t b_ks, float* c, int64_t ldc, bool add_to_c, int64_t m, int64_t n,
                           const GemmEpilogue* ep);
// A micro-kernel for the build's tile, its wide twin if it has one (a copy with `wide` null runs
// every tile narrow: the tests hold the two to the same bits), its name, whether it can read A
// in place through its strides, row-major or transposed (NEON's wants A packed), and whether it
// reads only the m rows of A it is asked for, so that the short last panel of A (M not a
// multiple of MR) can be read in place too rather than packed with rows of zeros (the x86 SIMD
// kernels; the others read all MR rows).
struct FastKernel {
  MicroKernel fn;
  WideMicroKernel wide;  // null where the kernel has no wide tile
  bool reads_a_in_place;
  bool reads_short_a_in_place;
  const char* name;
};
// The kernels this build has for its tile that this CPU can run, the fastest last: the build's
// own (AVX-512, AVX2, SSE, NEON or the portable one), and, in an SSE build of x86-64 (the
// `portable` preset, MinGW, a packager's build), an AVX2 + FMA kernel for the same 6 x 8 tile
// on a CPU that has them, found at run time (SSE2 is all such a build may assume; without
// this, it would leave half or more of a newer CPU's arithmetic unused).
const std::vector<FastKernel>& runnable_kernels();
// The fastest of them: the last. Step 5 of the ladder runs it, and this_cpu() names it.
const FastKernel& fast_kernel();

// Dot products of A's row with B's columns (x W^T, decoding's few-row products; dot.cpp):
// 16 independent sums per column, term k into sum k % 16, then the 16 added up in order, so the
// compiler vectorises them. dot_column returns one column's; dot_four_columns adds four
// columns' (b, b + b_step, b + 2 b_step, b + 3 b_step) to c[0], c[c_step], c[2 c_step] and
// c[3 c_step]: four streams of W in flight instead of one, and the loop's counter, branch and
// loads of a shared by four columns, in a loop that waits on memory
// (bench/notes/2026-12-06-gemm.md). A column gets the same bits from
// either.
float dot_column(const float* a, const float* b, int64_t K);
void dot_four_columns(const float* a, const float* b, int64_t b_step, int64_t K, float* c,
                      int64_t c_step);

// The epilogue as a pass of its own, for the paths that do not go through a micro-kernel.
void finish_all(int64_t M, int64_t N, float* C, int64_t ldc, const GemmEpilogue& ep);

}  // namespace qkv::gemm_detail
