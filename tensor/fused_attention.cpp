// fused_attention.cpp: the kernels of fused_attention.h. Each (batch, head) pair is a handful
// of small GEMMs on strided views of q, k and v and a softmax per row, run by one thread.
#include "tensor/fused_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/gemm.h"
#include "tensor/softmax.h"
#include "tensor/thread_pool.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

struct Dims {
  int64_t B, H, T, D;
};

// A (B, H, T, D) operand: where head (b, h) starts and how far apart its rows are.
struct Heads {
  float* p;
  int64_t sb, sh, st;  // strides of B, H and T; D's is 1
  float* at(int64_t b, int64_t h) const { return p + b * sb + h * sh; }
};
Heads heads_of(const Tensor& t) {
  return {t.data_ptr(), t.stride(0), t.stride(1), t.stride(2)};
}

bool is_heads(const Tensor& t) {
  return t.defined() && t.dtype() == Dtype::float32 && t.dim() == 4 && t.stride(3) == 1;
}

Dims check_heads(const Tensor& q, const Tensor& k, const Tensor& v, const char* op) {
  check(
      is_heads(q) && is_heads(k) && is_heads(v) && q.shape() == k.shape() && q.shape() == v.shape(),
      op, "float32 q, k and v of one shape (B, H, T, D), each with unit stride along D, got q ",
      shape_of(q), ", k ", shape_of(k), ", v ", shape_of(v));
  return {q.size(0), q.size(1), q.size(2), q.size(3)};
}

// A (B, H, T, D) result stored as (B, T, H, D): row t of head (b, h) at b*T*H*D + t*H*D + h*D,
// so merging the heads back to (B, T, H * D) is a view.
Tensor empty_heads(const Dims& d) {
  return transpose(Tensor::empty({d.B, d.T, d.H, d.D}), 1, 2);
}

// body(n) for every (batch, head) pair n = b * H + h, the pairs handed out to the threads in
// runs (parallel_ranges; enough work to pay for waking the pool, else on the calling thread).
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
// skips is scores that are never read: the softmax reads keys 0..i in whole chunks of
// kCausalRowChunk (causal_row_keys_read, softmax.h), so a block's columns are rounded up to
// those chunks too (which adds columns only where NR is 8: the SSE and portable builds).
//
// The other four products (P v, dS k, P^T dout, dS^T q) sum over keys or queries, and the
// masked weights in them are exact zeros: the GEMM's band (GemmBand, tensor/gemm.h) runs each
// tile of MR rows over just the terms its rows need, which changes no bits.
struct RowBlock {
  int64_t r0, r1;  // the rows; they see keys [0, r1) (all T when not causal: one block)
  int64_t cols;    // the score columns computed: r1 rounded up to whole tiles and chunks (or T)
};
std::vector<RowBlock> row_blocks(int64_t T, bool causal) {
  if (!causal) return {{0, T, T}};
  const GemmBlocking g = gemm_blocking();
  std::vector<RowBlock> blocks;
  int64_t r0 = 0;
  for (int64_t tiles_end = g.NR; tiles_end < T; tiles_end += g.NR) {
    const int64_t r1 = tiles_end / g.MR * g.MR;
    if (r1 - r0 >= g.MR && T - r1 >= g.MR) {
      blocks.push_back({r0, r1, causal_row_keys_read(T, tiles_end)});
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

FusedAttentionOutput fused_attention_forward(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v_in, bool causal) {
  const Dims d = check_heads(q_in, k_in, v_in, "fused_attention");
  const int64_t T = d.T, D = d.D, ld = d.H * D;  // ld: the row stride of out
  FusedAttentionOutput r{empty_heads(d), Tensor::empty({d.B, d.H, T, T})};
  const Heads Q = heads_of(q_in), K = heads_of(k_in), V = heads_of(v_in);
  const Heads out_heads = heads_of(r.out);
  float* pw = r.weights.data_ptr();
  const float div = scale_div(D);
  const std::vector<RowBlock> blocks = row_blocks(T, causal);
  for_pairs(d, [&](int64_t n) {
    const int64_t b = n / d.H, h = n % d.H;
    const float *q = Q.at(b, h), *k = K.at(b, h), *v = V.at(b, h);  // row t at q + t * Q.st
    float* s = pw + n * T * T;
    float* out = out_heads.at(b, h);
    for (const auto [r0, r1, cols] : blocks) {
      // S = q k^T (T, T), only where these rows can see
      gemm(r1 - r0, cols, D, {q + r0 * Q.st, Q.st, 1}, {k, 1, K.st}, s + r0 * T, T, false);
      for (int64_t i = r0; i < r1; ++i)  // P = softmax(S / sqrt(D))
        causal_softmax_row(s + i * T, s + i * T, T, causal ? i + 1 : T, 1.0f, div);
    }
    gemm_band(T, D, T, {s, T, 1}, {v, V.st, 1}, out, ld, false,
              band(causal, GemmBand::up_to_row));  // out = P v
  });
  return r;
}

FusedAttentionGrads fused_attention_backward(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v_in, const Tensor& weights,
                                             const Tensor& dout, bool causal) {
  const Dims d = check_heads(q_in, k_in, v_in, "fused_attention_backward");
  const int64_t T = d.T, D = d.D, ld = d.H * D;
  check(weights.defined() && weights.shape() == Shape{d.B, d.H, T, T} && weights.is_contiguous() &&
            is_heads(dout) && dout.shape() == q_in.shape(),
        "fused_attention_backward", "contiguous weights (B, H, T, T) and dout (B, H, T, D) for q ",
        q_in.shape());
  FusedAttentionGrads g{empty_heads(d), empty_heads(d), empty_heads(d)};
  const Heads Q = heads_of(q_in), K = heads_of(k_in), V = heads_of(v_in), dO_ = heads_of(dout);
  const Heads dQ = heads_of(g.dq), dK = heads_of(g.dk), dV = heads_of(g.dv);
  const float* pw = weights.data_ptr();
  const float div = scale_div(D);
  const std::vector<RowBlock> blocks = row_blocks(T, causal);
  for_pairs(d, [&](int64_t n) {
    const int64_t b = n / d.H, h = n % d.H;
    const float *q = Q.at(b, h), *k = K.at(b, h), *v = V.at(b, h), *dO = dO_.at(b, h);
    const float* p = pw + n * T * T;
    float* dq = dQ.at(b, h);
    float* dk = dK.at(b, h);
    float* dv = dV.at(b, h);
    float* ds = thread_scratch(Scratch::attention, T * T);
    for (const auto [r0, r1, cols] : blocks) {
      // dP = dout v^T (T, T) where these rows see; 0 where they do not, so that the softmax
      // rows below read the same numbers as over a full product (their weights are 0 there)
      gemm(r1 - r0, cols, D, {dO + r0 * dO_.st, dO_.st, 1}, {v, 1, V.st}, ds + r0 * T, T, false);
      for (int64_t i = r0; i < r1; ++i) {  // dS, in place over dP
        std::fill(ds + i * T + cols, ds + (i + 1) * T, 0.0f);
        softmax_backward_row(p + i * T, ds + i * T, ds + i * T, T, 1.0f, div);
      }
    }
    const GemmBand keys = band(causal, GemmBand::up_to_row);
    const GemmBand queries = band(causal, GemmBand::from_row);
    gemm_band(T, D, T, {ds, T, 1}, {k, K.st, 1}, dq, ld, false, keys);       // dq = dS k
    gemm_band(T, D, T, {ds, 1, T}, {q, Q.st, 1}, dk, ld, false, queries);    // dk = dS^T q
    gemm_band(T, D, T, {p, 1, T}, {dO, dO_.st, 1}, dv, ld, false, queries);  // dv = P^T dout
  });
  return g;
}

}  // namespace qkv::raw
