// ops_matmul.cpp: matmul and its backward.
//
//   C = A @ B        A (..., M, K), B (..., K, N) -> C (..., M, N)
//   dA = dC @ B^T    dB = A^T @ dC
// B^T and A^T are transposed views: the GEMM reads them through their strides, so no
// transposed copy is ever made. Batch dims that were broadcast are summed by the engine.
#include "autograd/ops.h"
#include "tensor/matmul.h"
#include "tensor/view.h"

namespace qkv {

Tensor matmul(const Tensor& a, const Tensor& b) {
  check(a.defined() && b.defined(), "matmul", "defined tensors, got an undefined one");
  // Vectors: make them matrices with differentiable views, multiply, and drop the added dim.
  if (a.dim() == 1 || b.dim() == 1) {
    check(a.dim() >= 1 && b.dim() >= 1, "matmul", "both arguments to have at least 1 dim, got a ",
          a.shape(), " and b ", b.shape());
    const int64_t ka = a.size(-1), kb = b.dim() == 1 ? b.size(0) : b.size(-2);
    check(ka == kb, "matmul", "inner dimensions must match, got a ", a.shape(), " and b ",
          b.shape());
    const Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
    const Tensor b2 = b.dim() == 1 ? unsqueeze(b, 1) : b;
    Tensor out = matmul(a2, b2);
    if (a.dim() == 1) out = squeeze(out, -2);
    if (b.dim() == 1) out = squeeze(out, -1);
    return out;
  }
  return record(a.dim() == 2 && b.dim() == 2 ? "MmBackward0" : "BmmBackward0", raw::matmul(a, b),
                {a, b},
                [a = SavedTensor(a), b = SavedTensor(b), need_a = requires_grad(a),
                 need_b = requires_grad(b)](const Tensor& dout) -> Grads {
                  return {need_a ? raw::matmul(dout, raw::transpose(b.get(), -2, -1)) : Tensor(),
                          need_b ? raw::matmul(raw::transpose(a.get(), -2, -1), dout) : Tensor()};
                });
}

}  // namespace qkv
