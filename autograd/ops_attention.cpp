// ops_attention.cpp: flash attention and fused multi-head self-attention as differentiable
// ops. The kernels, and the derivations of the backwards, are in tensor/flash_attention.h and
// tensor/fused_attention.h; this file only saves what each backward needs. Flash keeps q, k, v,
// the output and one logsumexp per row, O(T * D) in all, where the standard path keeps the
// (T_q, T_k) weights; the fused op keeps q, k, v and the weights, as the standard path does.
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

FusedAttention fused_attention(const Tensor& q, const Tensor& k, const Tensor& v, bool causal) {
  raw::FusedAttentionOutput f = raw::fused_attention_forward(q, k, v, causal);
  const Tensor output =
      record("FusedAttentionBackward0", f.out, {q, k, v},
             [q = SavedTensor(q), k = SavedTensor(k), v = SavedTensor(v), w = f.weights,
              causal](const Tensor& dout) -> Grads {
               // The kernel reads dout along D with unit stride (as merge_heads' gradient arrives);
               // anything else, such as the broadcast gradient of a sum, is copied once.
               const Tensor d = dout.stride(3) == 1 ? dout : raw::contiguous(dout);
               raw::FusedAttentionGrads g =
                   raw::fused_attention_backward(q.get(), k.get(), v.get(), w, d, causal);
               return {g.dq, g.dk, g.dv};
             });
  // The weights, for inspection: a gradient through them would need the composed path.
  const Tensor weights =
      record("FusedAttentionWeights", f.weights, {q, k, v}, [](const Tensor&) -> Grads {
        throw Error(
            "scaled_dot_product_attention: the fused path's weights carry no gradient; to "
            "differentiate through the weights, turn fused paths off (set_fused_enabled(false) "
            "or QKV_FUSED=0)");
      });
  return {output, weights};
}

}  // namespace qkv
