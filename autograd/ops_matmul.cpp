// ops_matmul.cpp: matmul and its backward, and linear (x W^T + b) as one node.
//
//   C = A @ B        A (..., M, K), B (..., K, N) -> C (..., M, N)
//   dA = dC @ B^T    dB = A^T @ dC
// B^T and A^T are transposed views: the GEMM reads them through their strides, so no
// transposed copy is ever made. Batch dims that were broadcast are summed by the engine.
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/matmul.h"
#include "tensor/reduce.h"
#include "tensor/view.h"

namespace qkv {

namespace {

// The grad_fn name torch 1.13 prints for a @ b, which depends only on the ranks: torch routes
// each case through a different kernel (dot, mv, mm, or a batch folded into bmm and viewed
// back), and the last step names the node. Same name, same printout as PyTorch.
const char* matmul_grad_fn_name(int64_t rank_a, int64_t rank_b) {
  if (rank_a == 1 && rank_b == 1) return "DotBackward0";
  if (rank_a == 2 && rank_b == 1) return "MvBackward0";
  if (rank_a == 1 && rank_b == 2) return "SqueezeBackward3";
  if (rank_a == 2 && rank_b == 2) return "MmBackward0";
  if (rank_a == 2) return "CloneBackward0";
  return "UnsafeViewBackward0";
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check(a.defined() && b.defined(), "matmul", "defined tensors, got an undefined one");
  check(a.dim() >= 1 && b.dim() >= 1, "matmul", "both arguments to have at least 1 dim, got a ",
        a.shape(), " and b ", b.shape());
  // A vector is a matrix with one row (a) or one column (b); the product drops that dim again.
  // Backward works on the matrix forms; the engine sums any broadcast dims back to a's and
  // b's shapes (a (K,) gets the sum over the rows of its (..., 1, K) gradient).
  const Shape a2 = a.dim() == 1 ? Shape{1, a.size(0)} : a.shape();
  const Shape b2 = b.dim() == 1 ? Shape{b.size(0), 1} : b.shape();
  const Tensor out = raw::matmul(a, b);
  Shape out2 = out.shape();  // the output with the dropped dims put back
  if (a.dim() == 1) out2.insert(out2.end() - (b.dim() == 1 ? 0 : 1), 1);
  if (b.dim() == 1) out2.push_back(1);
  return record(matmul_grad_fn_name(a.dim(), b.dim()), out, {a, b},
                [a = SavedTensor(a), b = SavedTensor(b), a2, b2, out2, need_a = requires_grad(a),
                 need_b = requires_grad(b)](const Tensor& dout) -> Grads {
                  const Tensor d = raw::reshape(dout, out2);
                  const Tensor am = raw::reshape(a.get(), a2), bm = raw::reshape(b.get(), b2);
                  Tensor da, db;
                  if (need_a) da = raw::matmul(d, raw::transpose(bm, -2, -1));  // (..., M, K)
                  if (need_b && bm.dim() == 2 && am.dim() > 2) {
                    // A weight shared by a batch (a Linear layer): its gradient sums over every
                    // row of the batch, so fold the batch into one product with K' = rows:
                    // (K, rows) @ (rows, N), instead of a (batch, K, N) result summed after.
                    const int64_t K = am.size(-1), N = d.size(-1);
                    const Tensor a_rows = raw::reshape(am, {am.numel() / K, K});
                    const Tensor d_rows = raw::reshape(d, {d.numel() / N, N});
                    db = raw::matmul(raw::transpose(a_rows, 0, 1), d_rows);  // (K, N)
                  } else if (need_b) {
                    db = raw::matmul(raw::transpose(am, -2, -1), d);  // (..., K, N)
                  }
                  // A vector b (K,) has db (..., K, 1): drop the column so the engine can sum
                  // the batch dims down to (K,). (A vector a's (..., 1, K) already broadcasts.)
                  if (need_b && b.get().dim() == 1) db = raw::squeeze(db, -1);
                  return {da, db};
                });
}

// linear, with every row of x as one row of a (rows, in) matrix X:
//
//   Y = X W^T + b          (rows, out)
//   dX = dY W              dW = dY^T X              db = sum of dY's rows
//
// It is what matmul(x, transpose(W)) + b computes, the same GEMMs in the same order, as one
// node instead of two. What that buys is in the backward: the gradient arriving from
// attention's head split is a transposed view, which the composed form copies once for dX,
// reads through strides for db, and copies again for dW; here it is made contiguous once. In
// the forward the GEMM adds b to each tile as it stores it (raw::matmul_epilogue): the same
// sums as a separate add, without another pass over Y.
namespace {

void check_linear(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check(x.defined() && weight.defined() && weight.dim() == 2 && weight.size(1) > 0 &&
            x.dim() >= 1 && x.size(-1) == weight.size(1),
        op, "x (..., in) and weight (out, in) with the same in > 0, got x ", shape_of(x),
        " and weight ", shape_of(weight));
  check(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), op,
        "a bias of shape (out,) = (", weight.size(0), ",), got ", shape_of(bias, ""));
}

// X W^T (+ b) for X (rows, in): the bias added by the GEMM as it stores each tile; the result
// has the output's shape.
Tensor linear_rows(const Tensor& x_rows, const Tensor& weight, const Tensor& bias,
                   const Shape& out_shape) {
  const Tensor wt = raw::transpose(weight, 0, 1);
  const Tensor y =
      bias.defined() ? raw::matmul_epilogue(x_rows, wt, bias) : raw::matmul(x_rows, wt);
  return raw::reshape(y, out_shape);
}

// torch's names for F.linear: addmm / mm on a matrix, viewed back for more dims.
const char* linear_grad_fn_name(int64_t x_dim, bool has_bias) {
  return x_dim == 1   ? (has_bias ? "AddBackward0" : "SqueezeBackward3")
         : x_dim == 2 ? (has_bias ? "AddmmBackward0" : "MmBackward0")
                      : (has_bias ? "ViewBackward0" : "UnsafeViewBackward0");
}

Shape with_last(Shape shape, int64_t last) {
  shape.back() = last;
  return shape;
}

}  // namespace

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check_linear("linear", x, weight, bias);
  const int64_t in = weight.size(1), out_features = weight.size(0), rows = x.numel() / in;
  const Shape out_shape = with_last(x.shape(), out_features);
  const Tensor y = linear_rows(raw::reshape(x, {rows, in}), weight, bias, out_shape);
  return record(linear_grad_fn_name(x.dim(), bias.defined()), y, {x, weight, bias},
                [x = SavedTensor(x), w = SavedTensor(weight), rows, in, out_features,
                 need_x = requires_grad(x), need_w = requires_grad(weight),
                 need_b = requires_grad(bias)](const Tensor& dout) -> Grads {
                  const Tensor d = raw::reshape(raw::contiguous(dout), {rows, out_features});
                  Tensor dx, dw, db;
                  if (need_x) dx = raw::reshape(raw::matmul(d, w.get()), x.get().shape());
                  if (need_w)
                    dw = raw::matmul(raw::transpose(d, 0, 1), raw::reshape(x.get(), {rows, in}));
                  if (need_b) db = raw::sum(d, 0, false);
                  return {dx, dw, db};
                });
}

}  // namespace qkv
