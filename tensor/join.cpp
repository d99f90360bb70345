// join.cpp: cat/stack copy into slices of a fresh tensor; split/chunk are views.
#include "tensor/join.h"

#include <cstring>

#include "tensor/checked.h"
#include "tensor/thread_pool.h"
#include "tensor/view.h"

namespace qkv::raw {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim_in) {
  check(!tensors.empty(), "cat", "at least one tensor, got none");
  const Tensor& first = tensors[0];
  check(first.dim() > 0, "cat", "tensors with at least one dim, got shape ", first.shape());
  const int64_t dim = wrap_dim(dim_in, first.dim(), "cat");
  Shape shape = first.shape();
  shape[dim] = 0;
  for (const Tensor& t : tensors) {
    check(t.dtype() == first.dtype(), "cat", "tensors of one dtype, got ",
          dtype_name(first.dtype()), " and ", dtype_name(t.dtype()));
    bool same = t.dim() == first.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d)
      same = d == dim || t.shape()[d] == first.shape()[d];
    check(same, "cat", "shapes that match except in dim ", dim, ", got ", first.shape(), " and ",
          t.shape());
    shape[dim] = checked_add(shape[dim], t.shape()[dim], "cat");
  }
  Tensor out = Tensor::empty(shape, first.dtype());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    copy_(narrow(out, dim, at, t.shape()[dim]), t);
    at += t.shape()[dim];
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  check(!tensors.empty(), "stack", "at least one tensor, got none");
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    check(t.shape() == tensors[0].shape(), "stack", "tensors of one shape, got ",
          tensors[0].shape(), " and ", t.shape());
    parts.push_back(unsqueeze(t, d));
  }
  return cat(parts, d);
}

std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim_in) {
  check(a.dim() > 0, "split", "a tensor with at least one dim, got shape ", a.shape());
  check(split_size > 0, "split", "split_size > 0, got ", split_size);
  const int64_t dim = wrap_dim(dim_in, a.dim(), "split");
  std::vector<Tensor> out;
  const int64_t n = a.shape()[dim];
  for (int64_t at = 0; at < n;) {
    const int64_t length = std::min(split_size, n - at);  // never past n: no sum can overflow
    out.push_back(narrow(a, dim, at, length));
    at += length;
  }
  return out;
}

int64_t chunk_size(const Tensor& a, int64_t chunks, int64_t dim) {
  check(chunks > 0, "chunk", "chunks > 0, got ", chunks);
  check(a.dim() > 0, "chunk", "a tensor with at least one dim, got shape ", a.shape());
  const int64_t n = a.shape()[wrap_dim(dim, a.dim(), "chunk")];
  return std::max<int64_t>(1, (n + chunks - 1) / chunks);
}

std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  return split(a, chunk_size(a, chunks, dim), dim);
}

Tensor index_select(const Tensor& a, int64_t dim_in, const Tensor& index) {
  check(index.dtype() == Dtype::int64, "index_select", "an int64 index, got ",
        dtype_name(index.dtype()));
  check(index.dim() <= 1, "index_select", "a 0-d or 1-d index, got shape ", index.shape());
  check(a.dim() > 0, "index_select", "a tensor with at least one dim, got shape ", a.shape());
  const int64_t dim = wrap_dim(dim_in, a.dim(), "index_select");
  const std::vector<int64_t> ids = index.to_vector<int64_t>();
  const int64_t n = a.shape()[dim];
  Shape shape = a.shape();
  shape[dim] = static_cast<int64_t>(ids.size());
  Tensor out = Tensor::empty(shape, a.dtype());
  for (size_t i = 0; i < ids.size(); ++i) {
    check(ids[i] >= -n && ids[i] < n, "index_select", "indices in range [", -n, ", ", n - 1,
          "] for dim ", dim, " of shape ", a.shape(), ", got ", ids[i]);
    const int64_t row = ids[i] < 0 ? ids[i] + n : ids[i];
    copy_(select(out, dim, static_cast<int64_t>(i)), select(a, dim, row));
  }
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  check(weight.dim() == 2, "embedding", "a 2-d weight (num_embeddings, embedding_dim), got ",
        weight.shape());
  check(ids.dtype() == Dtype::int64, "embedding", "int64 ids, got ", dtype_name(ids.dtype()));
  const int64_t V = weight.size(0), C = weight.size(1);
  const Tensor w = contiguous(weight);
  Shape shape = ids.shape();
  shape.push_back(C);
  Tensor out = Tensor::empty(shape);
  const std::vector<int64_t> flat = ids.to_vector<int64_t>();
  // Unlike index_select, a negative id is an error here, as in torch.nn.Embedding. Every id is
  // checked before any row is copied, so the error names the first bad one.
  for (const int64_t id : flat)
    check(id >= 0 && id < V, "embedding", "ids in range [0, ", V - 1, "], got ", id);
  const float* pw = w.data_ptr();
  float* po = out.data_ptr();
  const auto rows = static_cast<int64_t>(flat.size());
  parallel_ranges(rows, rows * C >= kParallelElements, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      std::memcpy(po + i * C, pw + flat[static_cast<size_t>(i)] * C, sizeof(float) * C);
  });
  return out;
}

}  // namespace qkv::raw
