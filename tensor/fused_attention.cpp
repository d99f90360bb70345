// fused_attention.cpp: the kernels of fused_attention.h. Each (batch, head) pair is a handful
// of small GEMMs on strided views of qkv and a softmax per row, run by one thread.
#include "tensor/fused_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/gemm.h"
#include "tensor/softmax.h"
#include "tensor/thread_pool.h"

namespace qkv::raw {
namespace {

struct Dims {
  int64_t B, T, C, H, D;
};

Dims check_qkv(const Tensor& qkv, int64_t heads, const char* op) {
  check(qkv.defined() && qkv.dtype() == Dtype::float32 && qkv.dim() == 3 && qkv.is_contiguous() &&
            qkv.size(2) % 3 == 0,
        op, "a contiguous float32 qkv of shape (B, T, 3C), got ",
        qkv.defined() ? shape_str(qkv.shape()) : "an undefined tensor");
  const int64_t C = qkv.size(2) / 3;
  check(heads > 0 && C % heads == 0 && C > 0, op, "C = ", C, " divisible by heads = ", heads);
  return {qkv.size(0), qkv.size(1), C, heads, C / heads};
}

// body(n) for every (batch, head) pair n = b * H + h, in one contiguous run of pairs per
// thread (enough work to pay for waking the pool, else on the calling thread).
template <class Body>
void for_pairs(const Dims& d, Body body) {
  const int64_t pairs = d.B * d.H;
  parallel_ranges(pairs, pairs * d.T * d.T * d.D >= (int64_t{1} << 18),
                  [&](int64_t n0, int64_t n1) {
                    for (int64_t n = n0; n < n1; ++n) body(n);
                  });
}

// Causal attention's row blocks, for the two products that make a T x T matrix (the scores
// S = q k^T and dP = dout v^T). Row i sees keys 0..i, so a block of rows [r0, r1) needs scores
// only for keys [0, r1): each product runs once per block, on the keys that block can see,
// instead of on the whole T x T square. The register tile is MR rows by NR columns, so a block
// ends where its rows still fit inside whole tiles of NR keys: at the largest multiple of MR
// below each multiple of NR (30 and 60 for 6 x 32 tiles). For T = 64 that is rows [0, 30) on
// keys [0, 32) and rows [30, 64) on all 64: a quarter fewer multiply-adds, where a finer cut
// would cost more in calls and packing than it saves. A block that would end with only a few
// rows (the GEMM reads those through a different loop) joins the one before it. What a block
// skips is scores that are never read (softmax reads keys 0..i only).
//
// The other four products (P v, dS k, P^T dout, dS^T q) sum over keys or queries, and the
// masked weights in them are exact zeros: the GEMM's band (GemmBand, tensor/gemm.h) runs each
// tile of MR rows over just the terms its rows need, which changes no bits.
struct RowBlock {
  int64_t r0, r1;  // the rows; they see keys [0, r1) (all T when not causal: one block)
  int64_t cols;    // the score columns computed: r1 rounded up to whole tiles (or T)
};
std::vector<RowBlock> row_blocks(int64_t T, bool causal) {
  if (!causal) return {{0, T, T}};
  const GemmBlocking g = gemm_blocking();
  std::vector<RowBlock> blocks;
  int64_t r0 = 0;
  for (int64_t tiles_end = g.NR; tiles_end < T; tiles_end += g.NR) {
    const int64_t r1 = tiles_end / g.MR * g.MR;
    if (r1 - r0 >= g.MR && T - r1 >= g.MR) {
      blocks.push_back({r0, r1, tiles_end});
      r0 = r1;
    }
  }
  blocks.push_back({r0, T, T});
  return blocks;
}

// The band of a product over keys (P v, dS k: row i needs keys k <= i) or over queries
// (P^T dout, dS^T q: key row j needs queries i >= j); every term when not causal.
GemmBand band(bool causal, GemmBand::Side side) {
  return {causal ? side : GemmBand::all, 0};
}

// The default scale, written as the composed path writes it: scores / sqrt(D).
float scale_div(int64_t D) {
  return static_cast<float>(std::sqrt(static_cast<double>(D)));
}

}  // namespace

FusedAttentionOutput fused_attention_forward(const Tensor& qkv, int64_t heads, bool causal) {
  const Dims d = check_qkv(qkv, heads, "fused_attention");
  const int64_t T = d.T, C = d.C, C3 = 3 * d.C, D = d.D;
  FusedAttentionOutput r{Tensor::empty({d.B, T, C}), Tensor::empty({d.B, d.H, T, T})};
  const float* pqkv = qkv.data_ptr();
  float* pout = r.out.data_ptr();
  float* pw = r.weights.data_ptr();
  const float div = scale_div(D);
  const std::vector<RowBlock> blocks = row_blocks(T, causal);
  for_pairs(d, [&](int64_t n) {
    const int64_t b = n / d.H, h = n % d.H;
    const float* q = pqkv + b * T * C3 + h * D;  // row t of the head's q at q + t * 3C
    const float* k = q + C;
    const float* v = q + 2 * C;
    float* s = pw + n * T * T;
    float* out = pout + b * T * C + h * D;
    for (const auto [r0, r1, cols] : blocks) {
      // S = q k^T (T, T), only where these rows can see
      gemm(r1 - r0, cols, D, {q + r0 * C3, C3, 1}, {k, 1, C3}, s + r0 * T, T, false);
      for (int64_t i = r0; i < r1; ++i)  // P = softmax(S / sqrt(D))
        causal_softmax_row(s + i * T, s + i * T, T, causal ? i + 1 : T, 1.0f, div);
    }
    gemm_band(T, D, T, {s, T, 1}, {v, C3, 1}, out, C, false,
              band(causal, GemmBand::up_to_row));  // out = P v
  });
  return r;
}

Tensor fused_attention_backward(const Tensor& qkv, const Tensor& weights, const Tensor& dout,
                                int64_t heads, bool causal) {
  const Dims d = check_qkv(qkv, heads, "fused_attention_backward");
  const int64_t T = d.T, C = d.C, C3 = 3 * d.C, D = d.D;
  check(weights.defined() && weights.shape() == Shape{d.B, d.H, T, T} && weights.is_contiguous() &&
            dout.defined() && dout.shape() == Shape{d.B, T, C} && dout.is_contiguous(),
        "fused_attention_backward", "contiguous weights (B, H, T, T) and dout (B, T, C) for qkv ",
        shape_str(qkv.shape()));
  Tensor dqkv = Tensor::empty(qkv.shape());
  const float *pqkv = qkv.data_ptr(), *pw = weights.data_ptr(), *pdout = dout.data_ptr();
  float* pd = dqkv.data_ptr();
  const float div = scale_div(D);
  const std::vector<RowBlock> blocks = row_blocks(T, causal);
  for_pairs(d, [&](int64_t n) {
    const int64_t b = n / d.H, h = n % d.H;
    const float* q = pqkv + b * T * C3 + h * D;
    const float* k = q + C;
    const float* v = q + 2 * C;
    const float* p = pw + n * T * T;
    const float* dO = pdout + b * T * C + h * D;  // row t at dO + t * C
    float* dq = pd + b * T * C3 + h * D;
    float* dk = dq + C;
    float* dv = dq + 2 * C;
    float* ds = thread_scratch(Scratch::attention, T * T);
    for (const auto [r0, r1, cols] : blocks) {
      // dP = dout v^T (T, T) where these rows see; 0 where they do not, so that the softmax
      // rows below read the same numbers as over a full product (their weights are 0 there)
      gemm(r1 - r0, cols, D, {dO + r0 * C, C, 1}, {v, 1, C3}, ds + r0 * T, T, false);
      for (int64_t i = r0; i < r1; ++i) {  // dS, in place over dP
        std::fill(ds + i * T + cols, ds + (i + 1) * T, 0.0f);
        softmax_backward_row(p + i * T, ds + i * T, ds + i * T, T, 1.0f, div);
      }
    }
    const GemmBand keys = band(causal, GemmBand::up_to_row);
    const GemmBand queries = band(causal, GemmBand::from_row);
    gemm_band(T, D, T, {ds, T, 1}, {k, C3, 1}, dq, C3, false, keys);     // dq = dS k
    gemm_band(T, D, T, {ds, 1, T}, {q, C3, 1}, dk, C3, false, queries);  // dk = dS^T q
    gemm_band(T, D, T, {p, 1, T}, {dO, C, 1}, dv, C3, false, queries);   // dv = P^T dout
  });
  return dqkv;
}

}  // namespace qkv::raw
