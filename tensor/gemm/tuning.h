// tuning.h: the production GEMM's tuning table (plan.cpp and the loops beneath read it).
#pragma once

#include <cstdint>

#include "tensor/gemm/kernel.h"

namespace qkv::gemm_detail {

// The production GEMM's tuning table: every threshold its plan and loops read, one line each,
// with the mechanism it serves (loops.cpp and execute.cpp have the loops;
// bench/notes/2026-12-06-gemm.md the measurements behind the values). tuning_for() fills it for a
// kernel on this CPU.
struct GemmTuning {
  // Below this many multiply-adds, one thread: waking a worker costs about as long as a 64^3
  // product takes in full.
  int64_t parallel_min_work = int64_t{1} << 19;
  // A transposed A is read in place while its k steps are at most this many floats apart: from
  // 4 KiB apart every step falls in one set of L1's lines. 0: always packed (a 6 x 8 tile reads
  // each panel of A again for every 8 columns of B).
  int64_t transposed_a_in_place_max_ld = kNR >= 16 ? 512 : 0;
  // At most this many rows: B is read where it lies (packing it would copy all of it to use
  // each element so few times), and such a product counts as few_rows_as_rows rows of work
  // when deciding whether to wake threads (reading B is what it waits on).
  int64_t few_rows = 4;
  int64_t few_rows_as_rows = 16;
  // From this many multiply-adds, one packed B shared by all threads instead of one copy each.
  int64_t shared_b_min_work = int64_t{1} << 31;
  // Rows are handed out (each thread packing all of B first) while B packs into this many floats.
  int64_t hand_out_max_b = int64_t{1} << 20;
  // The smallest piece of rows handed out, in MR-row tiles, and of columns, in micro-panels: a
  // piece of columns reads all of A again.
  int64_t min_row_piece_tiles = 4;
  int64_t min_column_piece_tiles = 8;
  // A weight gradient's K is cut into one chunk per k_chunk of depth, at most max_k_chunks.
  int64_t k_chunk = 1024, max_k_chunks = 4;
  // CPU quirk: how many rows the wide tile takes over an A read in place: MR, or 4 for
  // AVX-512's on a Zen 4, which starts one 512-bit FMA a cycle and keeps L2 up with 4 rows.
  int64_t wide_rows_in_place = kMR;
  // CPU quirk: 0 (BLIS's order), or the columns of B in a chunk under which the tiles of an A
  // read in place go rows outer: 512 for AVX-512's and AVX2's tiles on an Intel CPU, whose
  // 2 MiB L2 a KC block of B outgrows from N = 2048 on, so that a chunk of it stays in L2.
  int64_t rows_outer_chunk = 0;
};
GemmTuning tuning_for(const FastKernel& kernel);

}  // namespace qkv::gemm_detail
