// matmul.cpp: torch.matmul's shape rules on top of the GEMM (gemm.h).
#include "tensor/matmul.h"

#include "tensor/elementwise.h"
#include "tensor/gemm.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

// The shape rules, shared by matmul and matmul_out: returns the operands as (..., M, K) and
// (..., K, N) views expanded to one broadcast batch shape, and the output shape.
struct Operands {
  Tensor a, b;
  Shape batch, out_shape;
  int64_t M, K, N;
};

Operands prepare(const Tensor& a_in, const Tensor& b_in, std::string_view op) {
  check(a_in.defined() && b_in.defined(), op, "defined tensors, got an undefined one");
  check(a_in.dtype() == Dtype::float32 && b_in.dtype() == Dtype::float32, op,
        "float32 tensors, got ", dtype_name(a_in.dtype()), " and ", dtype_name(b_in.dtype()));
  check(a_in.dim() >= 1 && b_in.dim() >= 1, op, "both arguments to have at least 1 dim, got a ",
        a_in.shape(), " and b ", b_in.shape());
  // Vectors become matrices: (K) -> (1, K) on the left, (K) -> (K, 1) on the right.
  const Tensor a = a_in.dim() == 1 ? unsqueeze(a_in, 0) : a_in;
  const Tensor b = b_in.dim() == 1 ? unsqueeze(b_in, 1) : b_in;
  Operands o;
  o.M = a.size(-2), o.K = a.size(-1), o.N = b.size(-1);
  check(b.size(-2) == o.K, op, "inner dimensions must match, got a ", a_in.shape(), " and b ",
        b_in.shape());
  // Broadcast the batch dims (everything before the last two).
  o.batch = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                             Shape(b.shape().begin(), b.shape().end() - 2), op);
  Shape a_full = o.batch, b_full = o.batch;
  a_full.insert(a_full.end(), {o.M, o.K});
  b_full.insert(b_full.end(), {o.K, o.N});
  o.a = expand(a, a_full);
  o.b = expand(b, b_full);
  o.out_shape = o.batch;
  if (a_in.dim() > 1) o.out_shape.push_back(o.M);  // the dims added for vectors go away
  if (b_in.dim() > 1) o.out_shape.push_back(o.N);
  return o;
}

// Runs every product of the batch through the GEMM, reading A and B through their strides
// (transposed or broadcast operands are never copied). c is contiguous (..., M, N).
void run(const Operands& o, float* c, bool accumulate) {
  const int64_t batches = shape_numel(o.batch);
  const int64_t nb = static_cast<int64_t>(o.batch.size());
  // Folding: when B is shared by the whole batch (a Linear layer's weight against (B, T, C)
  // activations) and A's batch rows lie at one even stride, the batch is just more rows of A:
  // one (batches * M, K) @ (K, N) product instead of `batches` small ones, with B packed once.
  bool b_shared = true, a_rows_even = true;
  int64_t row_stride = o.a.stride(-2), expected = o.M * o.a.stride(-2);
  for (int64_t d = nb - 1; d >= 0; --d) {
    b_shared = b_shared && o.b.strides()[d] == 0;
    a_rows_even = a_rows_even && (o.batch[d] == 1 || o.a.strides()[d] == expected);
    expected *= o.batch[d];
  }
  if (batches > 1 && b_shared && a_rows_even && (o.M == 1 || row_stride != 0)) {
    GemmBatch one;
    one.a.push_back(reinterpret_cast<const float*>(o.a.impl().storage->data()) +
                    o.a.storage_offset());
    one.b.push_back(reinterpret_cast<const float*>(o.b.impl().storage->data()) +
                    o.b.storage_offset());
    one.c.push_back(c);
    gemm_batched(batches * o.M, o.N, o.K, row_stride, o.a.stride(-1), o.b.stride(-2),
                 o.b.stride(-1), one, o.N, accumulate);
    return;
  }
  GemmBatch batch;
  const float* pa = reinterpret_cast<const float*>(o.a.impl().storage->data());
  const float* pb = reinterpret_cast<const float*>(o.b.impl().storage->data());
  for (int64_t t = 0; t < batches; ++t) {
    int64_t oa = o.a.storage_offset(), ob = o.b.storage_offset();
    for (int64_t d = nb - 1, rem = t; d >= 0; --d) {  // batch index -> offsets (stride 0 repeats)
      const int64_t i = rem % o.batch[d];
      rem /= o.batch[d];
      oa += i * o.a.strides()[d];
      ob += i * o.b.strides()[d];
    }
    batch.a.push_back(pa + oa);
    batch.b.push_back(pb + ob);
    batch.c.push_back(c + t * o.M * o.N);
  }
  gemm_batched(o.M, o.N, o.K, o.a.stride(-2), o.a.stride(-1), o.b.stride(-2), o.b.stride(-1), batch,
               o.N, accumulate);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  const Operands o = prepare(a, b, "matmul");
  Tensor out = Tensor::empty(o.out_shape);
  run(o, out.data_ptr(), false);
  return out;
}

void matmul_out(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate) {
  const Operands o = prepare(a, b, "matmul_out");
  check(out.defined() && out.dtype() == Dtype::float32 && out.is_contiguous(), "matmul_out",
        "a contiguous float32 output, got ", out.defined() ? dtype_name(out.dtype()) : "undefined",
        out.defined() && !out.is_contiguous() ? " (not contiguous)" : "");
  check(out.shape() == o.out_shape, "matmul_out", "an output of shape ", o.out_shape, ", got ",
        out.shape());
  // The GEMM writes C while it still reads A and B: an output that overlaps an input would
  // read half-written numbers.
  check(!out.shares_storage(a) && !out.shares_storage(b), "matmul_out",
        "an output that does not share storage with an input, got one that does");
  run(o, out.data_ptr(), accumulate);
}

Tensor matmul_epilogue(const Tensor& a, const Tensor& b, const Tensor& bias_in) {
  check(a.defined() && b.defined() && a.dtype() == Dtype::float32 && b.dtype() == Dtype::float32 &&
            a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0),
        "matmul_epilogue", "float32 matrices (M, K) and (K, N), got ", shape_of(a), " and ",
        shape_of(b));
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  check(bias_in.defined() && bias_in.dtype() == Dtype::float32 && bias_in.shape() == Shape{N},
        "matmul_epilogue", "a float32 bias of shape (", N, ",), got ", shape_of(bias_in));
  const Tensor bias = contiguous(bias_in);
  Tensor out = Tensor::empty({M, N});
  gemm_epilogue(M, N, K, {a.data_ptr(), a.stride(0), a.stride(1)},
                {b.data_ptr(), b.stride(0), b.stride(1)}, out.data_ptr(), N, false,
                {bias.data_ptr()});
  return out;
}

}  // namespace qkv::raw
