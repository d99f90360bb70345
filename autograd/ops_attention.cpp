// ops_attention.cpp: flash attention and fused multi-head self-attention as differentiable
// ops. The kernels, and the derivations of the backwards, are in tensor/flash_attention.h and
// tensor/fused_attention.h; this file only saves what each backward needs. Flash keeps q, k, v,
// the output and one logsumexp per row, O(T * D) in all, where the standard path keeps the
// (T_q, T_k) weights; the fused op keeps qkv and the weights, as the standard path does.
#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/fused_attention.h"
#include "tensor/view.h"

namespace qkv {

Tensor flash_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                       const raw::FlashAttentionParams& params) {
  raw::FlashAttentionOutput f = raw::flash_attention_forward(q, k, v, params);
  return record("FlashAttentionBackward0", f.out, {q, k, v},
                [q = SavedTensor(q), k = SavedTensor(k), v = SavedTensor(v),
                 out = SavedTensor(f.out), lse = f.lse, params](const Tensor& dout) -> Grads {
                  raw::FlashAttentionGrads g = raw::flash_attention_backward(
                      q.get(), k.get(), v.get(), out.get(), lse, dout, params);
                  return {g.dq, g.dk, g.dv};
                });
}

Tensor fused_self_attention(const Tensor& qkv, int64_t heads, bool causal, Tensor* weights) {
  const Tensor x = raw::contiguous(qkv);  // one copy at most, for the forward and the backward
  raw::FusedAttentionOutput f = raw::fused_attention_forward(x, heads, causal);
  if (weights) *weights = f.weights;
  return record(
      "FusedAttentionBackward0", f.out, {qkv},
      [in = SavedTensor(x), w = f.weights, heads, causal](const Tensor& dout) -> Grads {
        return {raw::fused_attention_backward(in.get(), w, raw::contiguous(dout), heads, causal)};
      });
}

}  // namespace qkv
