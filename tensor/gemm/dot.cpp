// dot.cpp: the dot products of a few-row x W^T (decoding one token, few_rows.cpp's
// few_rows): one column of B at a time, or four at once. Each column's sum is the same in both:
// 16 independent sums (lanes), term k going into lane k % 16, then the 16 added up in order.
//
// This file is compiled without contraction (-ffp-contract=off, tensor/CMakeLists.txt): every
// term is a product rounded to float, then a sum rounded to float, wherever the compiler puts
// it. With contraction on, a compiler fuses a multiply and an add into one FMA (one rounding)
// where it sees them side by side, and may see them so in one loop and not in another: Clang
// for aarch64 fused most of these loops' terms and left some as a multiply and then an add,
// not the same ones in both loops, and a column got different bits in a group of four and alone
// (GemmFewRows.AColumnGetsTheSameBitsInAGroupOfFourAsAlone failed under qemu). These loops wait
// on memory, not on arithmetic, so the separate multiply and add cost nothing measurable.
#include "tensor/gemm/kernel.h"

namespace qkv::gemm_detail {

namespace {

constexpr int64_t kDotSums = 16;

float sum_lanes(const float* lane) {
  float sum = 0.0f;
  for (int64_t l = 0; l < kDotSums; ++l) sum += lane[l];
  return sum;
}

}  // namespace

float dot_column(const float* a, const float* b, int64_t K) {
  float lane[kDotSums] = {};
  int64_t k = 0;
  const auto add_terms = [&](int64_t terms) {  // terms of k, k + 1, ... into lanes 0, 1, ...
    for (int64_t l = 0; l < terms; ++l) lane[l] += a[k + l] * b[k + l];
  };
  for (; k + kDotSums <= K; k += kDotSums) add_terms(kDotSums);
  add_terms(K - k);
  return sum_lanes(lane);
}

void dot_four_columns(const float* a, const float* b, int64_t b_step, int64_t K, float* c,
                      int64_t c_step) {
  const float *b0 = b, *b1 = b + b_step, *b2 = b + 2 * b_step, *b3 = b + 3 * b_step;
  float s0[kDotSums] = {}, s1[kDotSums] = {}, s2[kDotSums] = {}, s3[kDotSums] = {};
  int64_t k = 0;
  const auto add_terms = [&](int64_t terms) {  // terms of k, k + 1, ... into lanes 0, 1, ...
    for (int64_t l = 0; l < terms; ++l) {
      const float x = a[k + l];
      s0[l] += x * b0[k + l];
      s1[l] += x * b1[k + l];
      s2[l] += x * b2[k + l];
      s3[l] += x * b3[k + l];
    }
  };
  for (; k + kDotSums <= K; k += kDotSums) add_terms(kDotSums);
  add_terms(K - k);
  c[0] += sum_lanes(s0);
  c[c_step] += sum_lanes(s1);
  c[2 * c_step] += sum_lanes(s2);
  c[3 * c_step] += sum_lanes(s3);
}

}  // namespace qkv::gemm_detail
