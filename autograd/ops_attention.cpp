// ops_attention.cpp: flash attention as one differentiable op. The kernels, and the
// derivation of the backward, are in tensor/flash_attention.h; this file only saves what the
// backward needs: q, k, v, the output and one logsumexp per row, O(T * D) in all, where the
// standard path keeps the (T_q, T_k) weights.
#include "autograd/node.h"
#include "autograd/ops.h"

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

}  // namespace qkv
