// pack.cpp: packing (kernel.h): a block of A or a panel of B copied into the order the
// micro-kernel reads it, once, whatever the operand's strides; and C prepared for the sums.
#include <algorithm>
#include <cstring>

#include "tensor/gemm/kernel.h"

namespace qkv::gemm_detail {

void prepare_c(int64_t M, int64_t N, float* C, int64_t ldc, bool accumulate) {
  if (accumulate) return;
  for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
}

// pack_a: k outer, i inner, the kernel's order.
void pack_a(int64_t mc, int64_t kc, MatrixRef A, float* out, GemmBand band, int64_t K) {
  // A transposed A (dW = dY^T X; a_in_place in internal.h says when it is packed rather
  // than read where it lies) holds each k's values of all rows side by side: one row of dY. Its
  // full panels are filled 8 values of k at a time, each panel taking its 6 floats from the same 8
  // rows of dY while they sit in L1. Panel by panel instead, every panel walked all kc rows of dY
  // again, 24 bytes from each, and missed in L1. With a band, each panel needs terms of its own,
  // and goes panel by panel below: attention's T x T products fit in L1 either way.
  const int64_t by_rows = A.row_stride == 1 && band.side == GemmBand::all ? mc / kMR * kMR : 0;
  for (int64_t k0 = 0; k0 < kc && by_rows > 0; k0 += 8)
    for (int64_t p = 0; p < by_rows; p += kMR)
      for (int64_t k = k0; k < std::min(kc, k0 + 8); ++k)
        std::memcpy(out + p * kc + k * kMR, A.p + p + k * A.col_stride, sizeof(float) * kMR);
  out += by_rows * kc;
  for (int64_t p = by_rows; p < mc; p += kMR) {
    const int64_t rows = std::min(kMR, mc - p);
    const auto [k0, k1] = band_range(band, p, rows, kc, K);
    // k outer, i inner: the kernel's order. A full panel needs no edge test in the loop.
    if (rows == kMR && A.row_stride == 1) {
      // Transposed, with a band (P^T and dS^T in causal attention): rows side by side, and only
      // the terms this panel needs.
      const float* col = A.p + p;
      for (int64_t k = k0; k < k1; ++k)
        std::memcpy(out + k * kMR, col + k * A.col_stride, sizeof(float) * kMR);
    } else if (rows == kMR) {
      for (int64_t k = k0; k < k1; ++k)
        for (int64_t i = 0; i < kMR; ++i) out[k * kMR + i] = A.at(p + i, k);
    } else {
      for (int64_t k = k0; k < k1; ++k)
        for (int64_t i = 0; i < kMR; ++i) out[k * kMR + i] = i < rows ? A.at(p + i, k) : 0.0f;
    }
    out += kc * kMR;
  }
}

// A transposed B (x @ W^T in every Linear's forward, q k^T in attention) has its columns
// contiguous, and a micro-panel wants its rows: packing it is a transpose. Element by element
// that is a strided gather, one float per load (a fifth of attention's time went there). In
// 8 x 8 blocks it is 8 vector loads, 24 shuffles and 8 vector stores per 64 floats: the block's
// rows are 8 columns of B, each 8 floats of it along k, and after the shuffles they are 8 rows
// of the panel. __builtin_shufflevector is Clang's and GCC's (12 on); other compilers take the
// element loop, which moves the same floats to the same places.
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define QKV_GEMM_TRANSPOSE_8X8 1
static_assert(kNR % 8 == 0, "pack_b transposes whole 8 x 8 blocks of a panel");
typedef float f8 __attribute__((vector_size(32)));

// 8 floats from p as one vector. Loaded by a loop of memcpy's into an array of vectors
// instead, GCC 12 built for AVX2 copied each row to the stack in two 16-byte halves and read
// it back whole, a load that waits for both stores to retire (the CPU cannot forward two
// stores to one load). One 32-byte copy per row instead: one store, one load.
[[gnu::always_inline]] inline f8 load_f8(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// out[c * ld_out + r] = src[r * ld_src + c] for r, c in 0..7.
[[gnu::always_inline]] inline void transpose_8x8(const float* src, int64_t ld_src, float* out,
                                                 int64_t ld_out) {
  f8 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = load_f8(src + i * ld_src);
  for (int i = 0; i < 8; i += 2) {  // interleave pairs of rows: (r0 r1) -> x00 x10 x01 x11 ...
    t[i] = __builtin_shufflevector(r[i], r[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = __builtin_shufflevector(r[i], r[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int i = 0; i < 8; i += 4)  // pairs of pairs: -> x00 x10 x20 x30 x04 x14 x24 x34 ...
    for (int h = 0; h < 2; ++h) {
      u[i + 2 * h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[i + 2 * h + 1] =
          __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; ++c) {  // halves of rows 0-3 and 4-7: columns c and c + 4
    const f8 lo = __builtin_shufflevector(u[c], u[c + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    const f8 hi = __builtin_shufflevector(u[c], u[c + 4], 4, 5, 6, 7, 12, 13, 14, 15);
    std::memcpy(out + c * ld_out, &lo, sizeof(f8));
    std::memcpy(out + (c + 4) * ld_out, &hi, sizeof(f8));
  }
}
#else
#define QKV_GEMM_TRANSPOSE_8X8 0
#endif

void pack_b(int64_t kc, int64_t nc, MatrixRef B, float* out) {
  // A row-major B (a weight gradient's X, which comes from memory) is read a row at a time, left
  // to right, each NR-wide piece dealt to its panel: one stream that the hardware prefetcher
  // follows. Panel by panel instead, the reads walk down a column, NR floats from each row,
  // and come back for the next NR: the same lines, fetched from memory in an order the
  // prefetcher does not follow.
  // Each panel is written a whole 64-byte cache line at a time: one row of NR floats where NR
  // is 16 or 32, two rows where it is 8 (SSE builds): half-line writes to every panel at once
  // would keep every panel's line half-written in the store buffers.
  int64_t first = 0;  // the first panel left for the loop below
  if (B.col_stride == 1) {
    first = nc / kNR * kNR;
    constexpr int64_t kRowsPerLine = kNR >= 16 ? 1 : 16 / kNR;
    for (int64_t r0 = 0; r0 < kc; r0 += kRowsPerLine) {
      const int64_t r1 = std::min(kc, r0 + kRowsPerLine);
      for (int64_t p = 0; p < first; p += kNR)
        for (int64_t r = r0; r < r1; ++r)
          std::memcpy(out + p * kc + r * kNR, B.p + r * B.row_stride + p, sizeof(float) * kNR);
    }
  }
  for (int64_t p = first; p < nc; p += kNR) {
    const int64_t cols = std::min(kNR, nc - p);
    float* panel = out + p * kc;
    // Columns [0, by_blocks) of rows [0, k) come from 8 x 8 transposes (columns contiguous);
    // the rest element by element.
    int64_t k = 0, by_blocks = 0;
#if QKV_GEMM_TRANSPOSE_8X8
    if (B.row_stride == 1) {
      by_blocks = cols / 8 * 8;
      for (; k + 8 <= kc; k += 8)
        for (int64_t j = 0; j < by_blocks; j += 8)
          transpose_8x8(B.p + k + (p + j) * B.col_stride, B.col_stride, panel + k * kNR + j, kNR);
    }
#endif
    // In a whole panel the transposes have done rows [0, k): start after them. Walking those
    // rows anyway, to find no column left in any, would read every row of the panel twice.
    for (int64_t r = by_blocks == kNR ? k : 0; r < kc; ++r) {
      float* row = panel + r * kNR;
      for (int64_t j = r < k ? by_blocks : 0; j < cols; ++j) row[j] = B.at(r, p + j);
      for (int64_t j = cols; j < kNR; ++j) row[j] = 0.0f;
    }
  }
}

}  // namespace qkv::gemm_detail
