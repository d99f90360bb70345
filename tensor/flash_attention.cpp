// flash_attention.cpp: the tiled, online-softmax attention of flash_attention.h.
//
// Work is cut into tiles of kBr query rows by kBc keys. Each tile's products are small
// matrix products (scores = Q K^T, Q's rows times the tile's keys; then P V, and in the
// backward dO V^T, P^T dO, dS^T Q and dS K), handed to the library's GEMM: at these sizes it
// runs on the calling thread with its packed SIMD micro-kernel. What is flash-specific is
// between the products: masking, the online softmax, and the rescaling of the running output.
// Parallel work is one tile row (forward, dq) or one key tile (dk, dv) per part.
#include "tensor/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/gemm.h"
#include "tensor/thread_pool.h"
#include "tensor/simd/exp.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

constexpr int64_t kBr = 64;  // query rows per tile (one unit of parallel work)
constexpr int64_t kBc = 64;  // keys per tile

struct Geometry {
  int64_t N = 0, N_kv = 0, group = 1, T_q = 0, T_k = 0, D = 0, D_v = 0, offset = 0;
  bool causal = false;
  int64_t window = 0;
  // Query i sees keys [first(i), last(i)]; both only grow with i.
  int64_t first(int64_t i) const {
    return causal && window > 0 ? std::max<int64_t>(0, i + offset - window + 1) : 0;
  }
  int64_t last(int64_t i) const { return causal ? std::min(T_k - 1, i + offset) : T_k - 1; }
  int64_t query_tiles() const { return (T_q + kBr - 1) / kBr; }
  int64_t key_tiles() const { return (T_k + kBc - 1) / kBc; }
};

Geometry check_inputs(const Tensor& q, const Tensor& k, const Tensor& v,
                      const FlashAttentionParams& p, const char* op) {
  check(q.defined() && k.defined() && v.defined() && q.dtype() == Dtype::float32 &&
            k.dtype() == Dtype::float32 && v.dtype() == Dtype::float32 && q.dim() == 3 &&
            k.dim() == 3 && v.dim() == 3,
        op, "float32 q (N, T_q, D), k (N_kv, T_k, D), v (N_kv, T_k, D_v), got q ",
        dtype_and_shape_of(q), ", k ", dtype_and_shape_of(k), ", v ", dtype_and_shape_of(v));
  Geometry g;
  g.N = q.size(0);
  g.T_q = q.size(1);
  g.D = q.size(2);
  g.N_kv = k.size(0);
  g.T_k = k.size(1);
  g.D_v = v.size(2);
  check(k.size(2) == g.D && v.size(0) == g.N_kv && v.size(1) == g.T_k, op,
        "k with q's D and v with k's (N_kv, T_k), got q ", q.shape(), ", k ", k.shape(), ", v ",
        v.shape());
  check(g.N_kv > 0 && g.N % g.N_kv == 0, op,
        "a number of query blocks N that is a multiple of the key blocks N_kv, got N = ", g.N,
        " and N_kv = ", g.N_kv);
  check(p.window >= 0 && (p.window == 0 || p.causal), op,
        "a window >= 0, and only with causal, got window ", p.window,
        p.causal ? "" : " without causal");
  check(p.heads > 0 && g.N % p.heads == 0, op, "N = ", g.N, " a multiple of heads = ", p.heads);
  check(p.alibi_slopes.empty() || static_cast<int64_t>(p.alibi_slopes.size()) == p.heads, op,
        "one ALiBi slope per head (", p.heads, "), got ", p.alibi_slopes.size());
  g.group = g.N / g.N_kv;
  g.offset = g.T_k - g.T_q;
  g.causal = p.causal;
  g.window = p.window;
  return g;
}

float slope_of(const FlashAttentionParams& p, int64_t n) {
  return p.alibi_slopes.empty() ? 0.0f : p.alibi_slopes[static_cast<size_t>(n % p.heads)];
}

// The scores of query rows [i0, i0 + rows) against keys [j0, j0 + bc), into S (row stride kBc):
//   S[r][c] = scale * (q_i . k_j) - slope * |i + offset - j|,  -inf where key j is hidden.
// Q points at query row i0 of its block, K at key j0 of its block.
void tile_scores(const Geometry& g, const float* Q, const float* K, int64_t i0, int64_t rows,
                 int64_t j0, int64_t bc, float scale, float slope, float* S) {
  gemm(rows, bc, g.D, {Q, g.D, 1}, {K, 1, g.D}, S, kBc, false);  // Q K^T: K read transposed
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kBc;
    const int64_t i = i0 + r, ip = i + g.offset;
    for (int64_t c = 0; c < bc; ++c) s[c] *= scale;
    if (slope != 0.0f)
      for (int64_t c = 0; c < bc; ++c) s[c] -= slope * static_cast<float>(std::abs(ip - (j0 + c)));
    // Hidden keys: before first(i) and after last(i) (j0 + c outside [lo, hi]).
    const int64_t lo = g.first(i) - j0, hi = g.last(i) - j0;
    for (int64_t c = 0; c < std::min(bc, lo); ++c) s[c] = -INFINITY;
    for (int64_t c = std::max<int64_t>(0, hi + 1); c < bc; ++c) s[c] = -INFINITY;
  }
}

// The largest score of a tile row, or NaN if the row holds one (as a composed softmax spreads
// it over the row), -inf if every key is hidden.
float row_max(const float* s, int64_t n) {
  float m = -INFINITY;
  for (int64_t c = 0; c < n; ++c) m = s[c] > m || s[c] != s[c] ? s[c] : m;  // once NaN, kept
  return m;
}

// The weights of a tile from the saved logsumexp: P = e^(S - lse), in place; 0 where hidden,
// and for a row that saw no key at all (lse = -inf).
void tile_weights(float* S, int64_t rows, int64_t bc, const float* lse) {
  for (int64_t r = 0; r < rows; ++r) {
    float* s = S + r * kBc;
    const float l = lse[r];
    if (l == -INFINITY) {
      std::fill(s, s + bc, 0.0f);
      continue;
    }
    detail::exp_into(s, bc, [&](int64_t c) QKV_INLINE_LAMBDA { return s[c] - l; });
  }
}

}  // namespace

FlashAttentionOutput flash_attention_forward(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v_in, const FlashAttentionParams& p) {
  const Geometry g = check_inputs(q_in, k_in, v_in, p, "flash_attention");
  const Tensor q = contiguous(q_in), k = contiguous(k_in), v = contiguous(v_in);
  Tensor out = Tensor::empty({g.N, g.T_q, g.D_v}), lse = Tensor::empty({g.N, g.T_q});
  const float *pq = q.data_ptr(), *pk = k.data_ptr(), *pv = v.data_ptr();
  float *pout = out.data_ptr(), *plse = lse.data_ptr();

  parallel_for(g.N * g.query_tiles(), [&](int64_t part) {
    const int64_t n = part / g.query_tiles(), i0 = part % g.query_tiles() * kBr;
    const int64_t rows = std::min(kBr, g.T_q - i0);
    const float* Q = pq + (n * g.T_q + i0) * g.D;
    const float* K = pk + n / g.group * g.T_k * g.D;
    const float* V = pv + n / g.group * g.T_k * g.D_v;
    const float slope = slope_of(p, n);
    float* acc = pout + (n * g.T_q + i0) * g.D_v;  // the running output, rescaled in place
    std::fill(acc, acc + rows * g.D_v, 0.0f);
    std::vector<float> m(kBr, -INFINITY), l(kBr, 0.0f), S(kBr * kBc);
    // The keys any row of this tile sees: [first(i0), last(i0 + rows - 1)].
    for (int64_t j0 = g.first(i0) / kBc * kBc; j0 <= g.last(i0 + rows - 1); j0 += kBc) {
      const int64_t bc = std::min(kBc, g.T_k - j0);
      tile_scores(g, Q, K + j0 * g.D, i0, rows, j0, bc, p.scale, slope, S.data());
      for (int64_t r = 0; r < rows; ++r) {
        float* s = S.data() + r * kBc;
        const float tile_m = row_max(s, bc);
        if (tile_m == -INFINITY) {  // nothing visible to this row here
          std::fill(s, s + bc, 0.0f);
          continue;
        }
        // The online softmax: a larger max rescales what was summed so far by e^(m - m').
        const float m_new = std::isnan(m[r]) || std::isnan(tile_m) ? NAN : std::max(m[r], tile_m);
        const float correction = std::exp(m[r] - m_new);  // 0 on the row's first tile
        float sum = 0.0f;
        detail::exp_into(s, bc, [&](int64_t c) QKV_INLINE_LAMBDA { return s[c] - m_new; });
        for (int64_t c = 0; c < bc; ++c) sum += s[c];
        l[r] = l[r] * correction + sum;
        m[r] = m_new;
        if (correction != 1.0f)
          for (int64_t d = 0; d < g.D_v; ++d) acc[r * g.D_v + d] *= correction;
      }
      // acc += P V over this tile's keys.
      gemm(rows, g.D_v, bc, {S.data(), kBc, 1}, {V + j0 * g.D_v, g.D_v, 1}, acc, g.D_v, true);
    }
    for (int64_t r = 0; r < rows; ++r) {
      const bool seen = m[r] != -INFINITY;  // false only for a row that sees no key
      for (int64_t d = 0; d < g.D_v; ++d)
        acc[r * g.D_v + d] = seen ? acc[r * g.D_v + d] / l[r] : 0.0f;
      plse[n * g.T_q + i0 + r] = seen ? m[r] + std::log(l[r]) : -INFINITY;
    }
  });
  return {out, lse};
}

namespace {

// delta_i = dout_i . out_i for every query row: the sum_j p_ij dp_ij that softmax's backward
// subtracts. (A tensor, not a std::vector, so memory_stats() counts it with the rest.)
Tensor row_dots(const Geometry& g, const float* pout, const float* pdout) {
  Tensor delta_t = Tensor::empty({g.N, g.T_q});
  float* delta = delta_t.data_ptr();
  parallel_for(g.N, [&](int64_t n) {
    for (int64_t i = 0; i < g.T_q; ++i) {
      const float *o = pout + (n * g.T_q + i) * g.D_v, *d_o = pdout + (n * g.T_q + i) * g.D_v;
      float sum = 0.0f;
      for (int64_t d = 0; d < g.D_v; ++d) sum += o[d] * d_o[d];
      delta[n * g.T_q + i] = sum;
    }
  });
  return delta_t;
}

// The backward's checks: the forward's, and out, dout and lse of the forward's shapes.
Geometry check_grad_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& out,
                           const Tensor& lse, const Tensor& dout, const FlashAttentionParams& p) {
  const char* op = "flash_attention_backward";
  const Geometry g = check_inputs(q, k, v, p, op);
  check(out.defined() && dout.defined() && lse.defined() &&
            out.shape() == Shape({g.N, g.T_q, g.D_v}) && dout.shape() == out.shape() &&
            lse.shape() == Shape({g.N, g.T_q}),
        op, "out and dout of shape (", g.N, ", ", g.T_q, ", ", g.D_v, ") and lse (", g.N, ", ",
        g.T_q, ")");
  return g;
}

}  // namespace

FlashAttentionGrads flash_attention_backward(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v_in, const Tensor& out_in,
                                             const Tensor& lse_in, const Tensor& dout_in,
                                             const FlashAttentionParams& p) {
  const Geometry g = check_grad_inputs(q_in, k_in, v_in, out_in, lse_in, dout_in, p);
  const Tensor q = contiguous(q_in), k = contiguous(k_in), v = contiguous(v_in);
  const Tensor out = contiguous(out_in), lse = contiguous(lse_in), dout = contiguous(dout_in);
  Tensor dq = Tensor::empty(q.shape()), dk = Tensor::empty(k.shape()),
         dv = Tensor::empty(v.shape());
  const float *pq = q.data_ptr(), *pk = k.data_ptr(), *pv = v.data_ptr();
  const float *pout = out.data_ptr(), *plse = lse.data_ptr(), *pdout = dout.data_ptr();
  float *pdq = dq.data_ptr(), *pdk = dk.data_ptr(), *pdv = dv.data_ptr();

  const Tensor delta_t = row_dots(g, pout, pdout);
  const float* delta = delta_t.data_ptr();

  // For query rows [i0, i0 + rows) of block n against keys [j0, j0 + bc): the weights P (in S)
  // and the score gradients dS = scale * P * (dP - delta), dP = dO V^T (in dS).
  auto tile_grads = [&](int64_t n, int64_t i0, int64_t rows, int64_t j0, int64_t bc, float* S,
                        float* dS) {
    const float* K = pk + (n / g.group * g.T_k + j0) * g.D;
    const float* V = pv + (n / g.group * g.T_k + j0) * g.D_v;
    tile_scores(g, pq + (n * g.T_q + i0) * g.D, K, i0, rows, j0, bc, p.scale, slope_of(p, n), S);
    tile_weights(S, rows, bc, plse + n * g.T_q + i0);
    gemm(rows, bc, g.D_v, {pdout + (n * g.T_q + i0) * g.D_v, g.D_v, 1}, {V, 1, g.D_v}, dS, kBc,
         false);
    for (int64_t r = 0; r < rows; ++r) {
      const float di = delta[n * g.T_q + i0 + r];
      const float* pr = S + r * kBc;
      float* dsr = dS + r * kBc;
      for (int64_t c = 0; c < bc; ++c) dsr[c] = p.scale * pr[c] * (dsr[c] - di);
    }
  };

  // Pass 1, over key tiles: dk and dv of a tile collect from every query (of every query
  // block sharing these keys) that sees it:  dv += P^T dO,  dk += dS^T Q.
  parallel_for(g.N_kv * g.key_tiles(), [&](int64_t part) {
    const int64_t nk = part / g.key_tiles(), j0 = part % g.key_tiles() * kBc;
    const int64_t bc = std::min(kBc, g.T_k - j0);
    float* dk_tile = pdk + (nk * g.T_k + j0) * g.D;
    float* dv_tile = pdv + (nk * g.T_k + j0) * g.D_v;
    std::fill(dk_tile, dk_tile + bc * g.D, 0.0f);
    std::fill(dv_tile, dv_tile + bc * g.D_v, 0.0f);
    std::vector<float> S(kBr * kBc), dS(kBr * kBc);
    // Queries that can see a key of [j0, j0 + bc): last(i) >= j0 and first(i) < j0 + bc.
    const int64_t i_begin = g.causal ? std::max<int64_t>(0, j0 - g.offset) : 0;
    const int64_t i_end =
        g.causal && g.window > 0 ? std::min(g.T_q, j0 + bc - 1 - g.offset + g.window) : g.T_q;
    for (int64_t n = nk * g.group; n < (nk + 1) * g.group; ++n)
      for (int64_t i0 = i_begin / kBr * kBr; i0 < i_end; i0 += kBr) {
        const int64_t rows = std::min(kBr, g.T_q - i0);
        tile_grads(n, i0, rows, j0, bc, S.data(), dS.data());
        gemm(bc, g.D_v, rows, {S.data(), 1, kBc}, {pdout + (n * g.T_q + i0) * g.D_v, g.D_v, 1},
             dv_tile, g.D_v, true);
        gemm(bc, g.D, rows, {dS.data(), 1, kBc}, {pq + (n * g.T_q + i0) * g.D, g.D, 1}, dk_tile,
             g.D, true);
      }
  });

  // Pass 2, over query tiles: dq of a row collects from every key it sees: dq += dS K.
  parallel_for(g.N * g.query_tiles(), [&](int64_t part) {
    const int64_t n = part / g.query_tiles(), i0 = part % g.query_tiles() * kBr;
    const int64_t rows = std::min(kBr, g.T_q - i0);
    float* dq_rows = pdq + (n * g.T_q + i0) * g.D;
    std::fill(dq_rows, dq_rows + rows * g.D, 0.0f);
    std::vector<float> S(kBr * kBc), dS(kBr * kBc);
    for (int64_t j0 = g.first(i0) / kBc * kBc; j0 <= g.last(i0 + rows - 1); j0 += kBc) {
      const int64_t bc = std::min(kBc, g.T_k - j0);
      tile_grads(n, i0, rows, j0, bc, S.data(), dS.data());
      gemm(rows, g.D, bc, {dS.data(), kBc, 1}, {pk + (n / g.group * g.T_k + j0) * g.D, g.D, 1},
           dq_rows, g.D, true);
    }
  });
  return {dq, dk, dv};
}

}  // namespace qkv::raw
