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
  for_pairs(d, [&](int64_t n) {
    const int64_t b = n / d.H, h = n % d.H;
    const float* q = pqkv + b * T * C3 + h * D;  // row t of the head's q at q + t * 3C
    const float* k = q + C;
    const float* v = q + 2 * C;
    float* s = pw + n * T * T;
    gemm(T, T, D, {q, C3, 1}, {k, 1, C3}, s, T, false);  // S = q k^T         (T, T)
    for (int64_t i = 0; i < T; ++i)                      // P = softmax(S / sqrt(D))
      causal_softmax_row(s + i * T, s + i * T, T, causal ? i + 1 : T, 1.0f, div);
    gemm(T, D, T, {s, T, 1}, {v, C3, 1}, pout + b * T * C + h * D, C, false);  // out = P v
  });
  return r;
}

Tensor fused_attention_backward(const Tensor& qkv, const Tensor& weights, const Tensor& dout,
                                int64_t heads) {
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
  for_pairs(d, [&](int64_t n) {
    const int64_t b = n / d.H, h = n % d.H;
    const float* q = pqkv + b * T * C3 + h * D;
    const float* k = q + C;
    const float* v = q + 2 * C;
    const float* p = pw + n * T * T;
    const float* dO = pdout + b * T * C + h * D;  // row t at dO + t * C
    float* dq = pd + b * T * C3 + h * D;
    thread_local std::vector<float> scratch;
    scratch.resize(static_cast<size_t>(T * T));
    float* ds = scratch.data();
    gemm(T, T, D, {dO, C, 1}, {v, 1, C3}, ds, T, false);  // dP = dout v^T      (T, T)
    for (int64_t i = 0; i < T; ++i)                       // dS, in place over dP
      softmax_backward_row(p + i * T, ds + i * T, ds + i * T, T, 1.0f, div);
    gemm(T, D, T, {ds, T, 1}, {k, C3, 1}, dq, C3, false);         // dq = dS k
    gemm(T, D, T, {ds, 1, T}, {q, C3, 1}, dq + C, C3, false);     // dk = dS^T q
    gemm(T, D, T, {p, 1, T}, {dO, C, 1}, dq + 2 * C, C3, false);  // dv = P^T dout
  });
  return dqkv;
}

}  // namespace qkv::raw
