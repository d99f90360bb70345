// matmul.cpp: shape rules of torch.matmul, and a plain loop nest for each matrix product.
#include "tensor/matmul.h"

#include "tensor/elementwise.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

// C (M, N) = A (M, K) @ B (K, N) for strided A and B, C contiguous. Loop order i-k-j keeps the
// innermost loop walking rows of B and C with stride 1 when B is row-major.
void matmul_2d(const float* A, int64_t sam, int64_t sak, const float* B, int64_t sbk, int64_t sbn,
               float* C, int64_t M, int64_t K, int64_t N) {
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float aik = A[i * sam + k * sak];
      const float* b = B + k * sbk;
      for (int64_t j = 0; j < N; ++j) c[j] += aik * b[j * sbn];
    }
  }
}

}  // namespace

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  check(a_in.defined() && b_in.defined(), "matmul", "defined tensors, got an undefined one");
  check(a_in.dtype() == Dtype::float32 && b_in.dtype() == Dtype::float32, "matmul",
        "float32 tensors, got ", dtype_name(a_in.dtype()), " and ", dtype_name(b_in.dtype()));
  check(a_in.dim() >= 1 && b_in.dim() >= 1, "matmul",
        "both arguments to have at least 1 dim, got a ", a_in.shape(), " and b ", b_in.shape());
  // Vectors become matrices: (K) -> (1, K) on the left, (K) -> (K, 1) on the right.
  const Tensor a = a_in.dim() == 1 ? unsqueeze(a_in, 0) : a_in;
  const Tensor b = b_in.dim() == 1 ? unsqueeze(b_in, 1) : b_in;
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  check(b.size(-2) == K, "matmul", "inner dimensions must match, got a ", a_in.shape(), " and b ",
        b_in.shape());
  // Broadcast the batch dims (everything before the last two).
  const Shape a_batch(a.shape().begin(), a.shape().end() - 2);
  const Shape b_batch(b.shape().begin(), b.shape().end() - 2);
  Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
  Shape a_full = batch, b_full = batch, out_shape = batch;
  a_full.insert(a_full.end(), {M, K});
  b_full.insert(b_full.end(), {K, N});
  out_shape.insert(out_shape.end(), {M, N});
  const Tensor ea = expand(a, a_full), eb = expand(b, b_full);
  Tensor out = Tensor::empty(out_shape);
  const int64_t batches = shape_numel(batch);
  // Walk the batch index; expanded dims have stride 0, so broadcast operands are re-read.
  const int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> idx(nb, 0);
  const float* pa = reinterpret_cast<const float*>(ea.impl().storage->data());
  const float* pb = reinterpret_cast<const float*>(eb.impl().storage->data());
  for (int64_t t = 0; t < batches; ++t) {
    int64_t oa = ea.storage_offset(), ob = eb.storage_offset();
    for (int64_t d = 0, rem = t; d < nb; ++d) {
      int64_t span = 1;
      for (int64_t e = d + 1; e < nb; ++e) span *= batch[e];
      idx[d] = rem / span;
      rem %= span;
      oa += idx[d] * ea.strides()[d];
      ob += idx[d] * eb.strides()[d];
    }
    matmul_2d(pa + oa, ea.stride(-2), ea.stride(-1), pb + ob, eb.stride(-2), eb.stride(-1),
              out.data_ptr() + t * M * N, M, K, N);
  }
  // Remove the dims that were added for vectors.
  if (a_in.dim() == 1) out = squeeze(out, -2);
  if (b_in.dim() == 1) out = squeeze(out, -1);
  return out;
}

}  // namespace qkv::raw
