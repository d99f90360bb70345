// tuning.cpp: the tuning table's values for a kernel on this CPU (tuning.h): the defaults of
// GemmTuning, and the two CPU quirks below.
#include "tensor/gemm/tuning.h"

namespace qkv::gemm_detail {

namespace {

// The CPU quirks of the tuning table (tuning.h). AVX-512's wide tile over an A read in
// place takes 4 rows on a Zen 4 (AMD family 19h with AVX-512): a step of the 4-row tile loads 4
// vectors of B (256 bytes) for 16 FMAs, the 6-row one the same 4 for 24, from a KC x 64 panel of
// B that lies in L2. A Zen 4 core starts one 512-bit FMA a cycle (two 256-bit halves), so 4 rows
// ask L2 for 16 bytes a cycle, which it keeps up with (the shape of OpenBLAS's small-matrix
// kernel for AVX-512); a core that starts two a cycle (Intel's, a Zen 5) would ask 32 of 4
// rows: 6 there. Each element of C gets the same multiply-adds in the same order whatever the
// tile's rows: the same bits.
int64_t wide_rows_in_place_on_this_cpu(const FastKernel& kernel) {
#if QKV_SIMD_LANES == 16
  __builtin_cpu_init();  // in case this runs before the run-time library's own constructor
  if (kernel.wide && __builtin_cpu_is("amdfam19h")) return 4;
#endif
  (void)kernel;
  return kMR;
}
// Rows outer under chunks of 512 columns of B for AVX-512's and AVX2's tiles on an Intel CPU. A
// KC block of packed B (KC x N floats: 3-4.5 MiB at N = 2048-3072) outgrows a 2 MiB L2, so in
// BLIS's order every block of A streams it from L3 again; a chunk (KC x 512, 768 KiB) stays in
// L2 while every row tile of A passes under it, the tile's rows of A (6 x KC, 9 KiB) in L1.
// AVX-512's pair of micro-panels (KC x 64, 96 KiB) also overfills L1. Measured on Intel CPUs
// with 2 MiB of L2 (bench/notes/2026-12-06-gemm.md, BM_RowsOuter); the SSE build's AVX2 6 x 8
// kernel showed nothing to win there, and no AMD CPU has been measured: both keep BLIS's order.
int64_t rows_outer_chunk_on_this_cpu() {
#if QKV_SIMD_LANES == 16 || QKV_SIMD_LANES == 8
  __builtin_cpu_init();
  return __builtin_cpu_is("intel") ? 512 : 0;
#else
  return 0;
#endif
}

}  // namespace

GemmTuning tuning_for(const FastKernel& kernel) {
  GemmTuning t;
  t.wide_rows_in_place = wide_rows_in_place_on_this_cpu(kernel);
  // Rows outer is for the build's own x86 SIMD tiles (the only ones an AVX-512 or AVX2 build
  // has), which read A in place.
  t.rows_outer_chunk = kernel.reads_a_in_place ? rows_outer_chunk_on_this_cpu() : 0;
  return t;
}

}  // namespace qkv::gemm_detail
