// flash_attention.cpp: the tiled, online-softmax attention of flash_attention.h.
//
// Every loop below works on one query row against one tile of kBc keys; the keys of a tile are
// packed transposed (D x kBc) so that a row's kBc scores are kBc independent multiply-adds per
// d, which the compiler turns into vector code. Tiles are padded to kBc with zero keys whose
// scores are then hidden (-inf) like any masked key, so every inner loop has a fixed length.
#include "tensor/flash_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/thread_pool.h"
#include "tensor/vector_math.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

constexpr int64_t kBr = 32;  // query rows per tile (one unit of parallel work)
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
  auto describe = [](const Tensor& t) {
    return t.defined() ? dtype_name(t.dtype()) + " " + shape_str(t.shape()) : "undefined";
  };
  check(q.defined() && k.defined() && v.defined() && q.dtype() == Dtype::float32 &&
            k.dtype() == Dtype::float32 && v.dtype() == Dtype::float32 && q.dim() == 3 &&
            k.dim() == 3 && v.dim() == 3,
        op, "float32 q (N, T_q, D), k (N_kv, T_k, D), v (N_kv, T_k, D_v), got q ", describe(q),
        ", k ", describe(k), ", v ", describe(v));
  Geometry g;
  g.N = q.size(0);
  g.T_q = q.size(1);
  g.D = q.size(2);
  g.N_kv = k.size(0);
  g.T_k = k.size(1);
  g.D_v = v.size(2);
  check(k.size(2) == g.D && v.size(0) == g.N_kv && v.size(1) == g.T_k, op,
        "k with q's D and v with k's (N_kv, T_k), got q ", shape_str(q.shape()), ", k ",
        shape_str(k.shape()), ", v ", shape_str(v.shape()));
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

// Keys [j0, j0 + bc) of one block, transposed into kt (width x kBc); columns >= bc are 0.
void pack_transposed(const float* src, int64_t width, int64_t j0, int64_t bc, float* kt) {
  for (int64_t d = 0; d < width; ++d) {
    float* row = kt + d * kBc;
    for (int64_t c = 0; c < bc; ++c) row[c] = src[(j0 + c) * width + d];
    for (int64_t c = bc; c < kBc; ++c) row[c] = 0.0f;
  }
}

// One query row's scores against a packed key tile starting at key j0:
//   s[c] = scale * (q . k_{j0+c}) - slope * |ip - (j0 + c)|, and -inf outside [lo, hi]
// where ip = i + offset is the query's position on the keys' axis.
void tile_scores(const float* qr, const float* kt, int64_t D, float scale, float slope, int64_t ip,
                 int64_t j0, int64_t lo, int64_t hi, float* s) {
  for (int64_t c = 0; c < kBc; ++c) s[c] = 0.0f;
  for (int64_t d = 0; d < D; ++d) {
    const float qd = qr[d];
    const float* kd = kt + d * kBc;
    for (int64_t c = 0; c < kBc; ++c) s[c] += qd * kd[c];
  }
  for (int64_t c = 0; c < kBc; ++c) s[c] *= scale;
  if (slope != 0.0f)
    for (int64_t c = 0; c < kBc; ++c) s[c] -= slope * static_cast<float>(std::abs(ip - (j0 + c)));
  for (int64_t c = 0; c < std::min(kBc, lo - j0); ++c) s[c] = -INFINITY;
  for (int64_t c = std::max<int64_t>(0, hi - j0 + 1); c < kBc; ++c) s[c] = -INFINITY;
}

float tile_max(const float* s) {
  float m = -INFINITY;
  for (int64_t c = 0; c < kBc; ++c) m = s[c] > m ? s[c] : m;
  return m;
}

// p[c] = e^(s[c] - m) (0 where s is -inf); returns their sum.
float tile_exp(const float* s, float m, float* p) {
  for (int64_t c = 0; c < kBc; ++c) p[c] = detail::vector_exp(s[c] - m);
  float sum = 0.0f;
  for (int64_t c = 0; c < kBc; ++c) sum += p[c];
  return sum;
}

float slope_of(const FlashAttentionParams& p, int64_t n) {
  return p.alibi_slopes.empty() ? 0.0f : p.alibi_slopes[static_cast<size_t>(n % p.heads)];
}

// dp[c] = dout_row . v_{j0+c}, from the packed transposed values vt (D_v x kBc).
void tile_dots(const float* row, const float* vt, int64_t width, float* dp) {
  for (int64_t c = 0; c < kBc; ++c) dp[c] = 0.0f;
  for (int64_t d = 0; d < width; ++d) {
    const float x = row[d];
    const float* vd = vt + d * kBc;
    for (int64_t c = 0; c < kBc; ++c) dp[c] += x * vd[c];
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
    const int64_t i1 = std::min(g.T_q, i0 + kBr), rows = i1 - i0;
    const float* Q = pq + n * g.T_q * g.D;
    const float* K = pk + n / g.group * g.T_k * g.D;
    const float* V = pv + n / g.group * g.T_k * g.D_v;
    const float slope = slope_of(p, n);
    std::vector<float> m(kBr, -INFINITY), l(kBr, 0.0f), acc(kBr * g.D_v, 0.0f);
    std::vector<float> kt(g.D * kBc), s(kBc), pr(kBc);
    // The keys any row of this tile sees: [first(i0), last(i1 - 1)].
    for (int64_t j0 = g.first(i0) / kBc * kBc; j0 <= g.last(i1 - 1); j0 += kBc) {
      pack_transposed(K, g.D, j0, std::min(kBc, g.T_k - j0), kt.data());
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r, lo = g.first(i), hi = g.last(i);
        if (hi < lo || hi < j0 || lo >= j0 + kBc) continue;  // nothing visible in this tile
        tile_scores(Q + i * g.D, kt.data(), g.D, p.scale, slope, i + g.offset, j0, lo, hi,
                    s.data());
        // The online softmax: a new max rescales what was summed so far by e^(m - m').
        const float m_new = std::max(m[r], tile_max(s.data()));
        const float correction = std::exp(m[r] - m_new);  // 0 on the first visible tile
        l[r] = l[r] * correction + tile_exp(s.data(), m_new, pr.data());
        float* a = acc.data() + r * g.D_v;
        for (int64_t d = 0; d < g.D_v; ++d) a[d] *= correction;
        for (int64_t c = 0; c < kBc; ++c) {
          if (pr[c] == 0.0f) continue;  // hidden or padding
          const float pc = pr[c];
          const float* vr = V + (j0 + c) * g.D_v;
          for (int64_t d = 0; d < g.D_v; ++d) a[d] += pc * vr[d];
        }
        m[r] = m_new;
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* o = pout + (n * g.T_q + i0 + r) * g.D_v;
      const float* a = acc.data() + r * g.D_v;
      const bool seen = l[r] > 0.0f;  // false only for a row that sees no key
      for (int64_t d = 0; d < g.D_v; ++d) o[d] = seen ? a[d] / l[r] : 0.0f;
      plse[n * g.T_q + i0 + r] = seen ? m[r] + std::log(l[r]) : -INFINITY;
    }
  });
  return {out, lse};
}

FlashAttentionGrads flash_attention_backward(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v_in, const Tensor& out_in,
                                             const Tensor& lse_in, const Tensor& dout_in,
                                             const FlashAttentionParams& p) {
  const char* op = "flash_attention_backward";
  const Geometry g = check_inputs(q_in, k_in, v_in, p, op);
  check(out_in.defined() && dout_in.defined() && lse_in.defined() &&
            out_in.shape() == Shape({g.N, g.T_q, g.D_v}) && dout_in.shape() == out_in.shape() &&
            lse_in.shape() == Shape({g.N, g.T_q}),
        op, "out and dout of shape (", g.N, ", ", g.T_q, ", ", g.D_v, ") and lse (", g.N, ", ",
        g.T_q, ")");
  const Tensor q = contiguous(q_in), k = contiguous(k_in), v = contiguous(v_in);
  const Tensor out = contiguous(out_in), lse = contiguous(lse_in), dout = contiguous(dout_in);
  Tensor dq = Tensor::empty(q.shape()), dk = Tensor::empty(k.shape()),
         dv = Tensor::empty(v.shape());
  const float *pq = q.data_ptr(), *pk = k.data_ptr(), *pv = v.data_ptr();
  const float *pout = out.data_ptr(), *plse = lse.data_ptr(), *pdout = dout.data_ptr();
  float *pdq = dq.data_ptr(), *pdk = dk.data_ptr(), *pdv = dv.data_ptr();

  // delta_i = dout_i . out_i: the sum_j p_ij dp_ij that softmax's backward subtracts.
  // (A tensor, not a std::vector, so memory_stats() counts it with the rest.)
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

  // One row's recomputed weights p and score gradients ds against a packed key tile; false
  // if the row sees nothing there.
  auto row_grads = [&](int64_t n, int64_t i, int64_t j0, const float* kt, const float* vt, float* s,
                       float* pr, float* ds) {
    const int64_t lo = g.first(i), hi = g.last(i);
    const float row_lse = plse[n * g.T_q + i];
    if (hi < lo || hi < j0 || lo >= j0 + kBc || row_lse == -INFINITY) return false;
    tile_scores(pq + (n * g.T_q + i) * g.D, kt, g.D, p.scale, slope_of(p, n), i + g.offset, j0, lo,
                hi, s);
    for (int64_t c = 0; c < kBc; ++c) pr[c] = detail::vector_exp(s[c] - row_lse);
    tile_dots(pdout + (n * g.T_q + i) * g.D_v, vt, g.D_v, ds);  // ds = dp for now
    const float di = delta[n * g.T_q + i];
    for (int64_t c = 0; c < kBc; ++c) ds[c] = pr[c] * (ds[c] - di);
    return true;
  };

  // Pass 1, over key tiles: dk and dv of a tile collect from every query (of every query
  // block sharing these keys) that sees it.
  parallel_for(g.N_kv * g.key_tiles(), [&](int64_t part) {
    const int64_t nk = part / g.key_tiles(), j0 = part % g.key_tiles() * kBc;
    const int64_t bc = std::min(kBc, g.T_k - j0);
    const float* K = pk + nk * g.T_k * g.D;
    const float* V = pv + nk * g.T_k * g.D_v;
    std::vector<float> kt(g.D * kBc), vt(g.D_v * kBc), s(kBc), pr(kBc), ds(kBc);
    std::vector<float> dk_acc(kBc * g.D, 0.0f), dv_acc(kBc * g.D_v, 0.0f);
    pack_transposed(K, g.D, j0, bc, kt.data());
    pack_transposed(V, g.D_v, j0, bc, vt.data());
    // Queries that can see a key of [j0, j0 + bc): last(i) >= j0 and first(i) < j0 + bc.
    const int64_t i_begin = g.causal ? std::max<int64_t>(0, j0 - g.offset) : 0;
    const int64_t i_end =
        g.causal && g.window > 0 ? std::min(g.T_q, j0 + bc - 1 - g.offset + g.window) : g.T_q;
    for (int64_t n = nk * g.group; n < (nk + 1) * g.group; ++n) {
      for (int64_t i = i_begin; i < i_end; ++i) {
        if (!row_grads(n, i, j0, kt.data(), vt.data(), s.data(), pr.data(), ds.data())) continue;
        const float* qi = pq + (n * g.T_q + i) * g.D;
        const float* doi = pdout + (n * g.T_q + i) * g.D_v;
        for (int64_t c = 0; c < bc; ++c) {
          const float pc = pr[c], dsc = p.scale * ds[c];
          float* dvc = dv_acc.data() + c * g.D_v;
          for (int64_t d = 0; d < g.D_v; ++d) dvc[d] += pc * doi[d];
          float* dkc = dk_acc.data() + c * g.D;
          for (int64_t d = 0; d < g.D; ++d) dkc[d] += dsc * qi[d];
        }
      }
    }
    std::copy_n(dk_acc.data(), bc * g.D, pdk + (nk * g.T_k + j0) * g.D);
    std::copy_n(dv_acc.data(), bc * g.D_v, pdv + (nk * g.T_k + j0) * g.D_v);
  });

  // Pass 2, over query tiles: dq of a row collects from every key it sees.
  parallel_for(g.N * g.query_tiles(), [&](int64_t part) {
    const int64_t n = part / g.query_tiles(), i0 = part % g.query_tiles() * kBr;
    const int64_t i1 = std::min(g.T_q, i0 + kBr);
    const float* K = pk + n / g.group * g.T_k * g.D;
    const float* V = pv + n / g.group * g.T_k * g.D_v;
    std::vector<float> kt(g.D * kBc), vt(g.D_v * kBc), s(kBc), pr(kBc), ds(kBc);
    std::fill(pdq + (n * g.T_q + i0) * g.D, pdq + (n * g.T_q + i1) * g.D, 0.0f);
    for (int64_t j0 = g.first(i0) / kBc * kBc; j0 <= g.last(i1 - 1); j0 += kBc) {
      const int64_t bc = std::min(kBc, g.T_k - j0);
      pack_transposed(K, g.D, j0, bc, kt.data());
      pack_transposed(V, g.D_v, j0, bc, vt.data());
      for (int64_t i = i0; i < i1; ++i) {
        if (!row_grads(n, i, j0, kt.data(), vt.data(), s.data(), pr.data(), ds.data())) continue;
        float* dqi = pdq + (n * g.T_q + i) * g.D;
        for (int64_t c = 0; c < bc; ++c) {
          const float dsc = p.scale * ds[c];
          const float* kc = K + (j0 + c) * g.D;
          for (int64_t d = 0; d < g.D; ++d) dqi[d] += dsc * kc[d];
        }
      }
    }
  });
  return {dq, dk, dv};
}

}  // namespace qkv::raw
