// ops_view.cpp: views, joins and gathers with their backwards.
//
// A view's backward routes dout back to the base's shape: reshape it back, transpose it back,
// or place it into a zero tensor at the slice it came from. Gathers (index_select, embedding)
// scatter-add: an index used twice receives both gradients.
#include <algorithm>

#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/join.h"
#include "tensor/view.h"

namespace qkv {
namespace {

// A zero tensor of `shape` with dout written into the part that `part(zero)` selects.
template <class Part>
Tensor place(const Tensor& dout, const Shape& shape, Part part) {
  Tensor base = zeros(shape);
  raw::copy_(part(base), dout);
  return base;
}

}  // namespace

// view / reshape / flatten / squeeze: same elements, new shape     da = dout reshaped back
Tensor view(const Tensor& a, const Shape& shape) {
  return record("ViewBackward0", raw::view(a, shape), {a},
                [s = a.shape()](const Tensor& dout) -> Grads { return {raw::reshape(dout, s)}; });
}
Tensor reshape(const Tensor& a, const Shape& shape) {
  return record("ReshapeAliasBackward0", raw::reshape(a, shape), {a},
                [s = a.shape()](const Tensor& dout) -> Grads { return {raw::reshape(dout, s)}; });
}
Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  return record("ReshapeAliasBackward0", raw::flatten(a, start_dim, end_dim), {a},
                [s = a.shape()](const Tensor& dout) -> Grads { return {raw::reshape(dout, s)}; });
}
Tensor squeeze(const Tensor& a) {
  return record("SqueezeBackward0", raw::squeeze(a), {a},
                [s = a.shape()](const Tensor& dout) -> Grads { return {raw::reshape(dout, s)}; });
}
Tensor squeeze(const Tensor& a, int64_t dim) {
  return record("SqueezeBackward1", raw::squeeze(a, dim), {a},
                [s = a.shape()](const Tensor& dout) -> Grads { return {raw::reshape(dout, s)}; });
}
// unsqueeze: da = dout with the new dim removed
Tensor unsqueeze(const Tensor& a, int64_t dim) {
  return record("UnsqueezeBackward0", raw::unsqueeze(a, dim), {a},
                [s = a.shape()](const Tensor& dout) -> Grads { return {raw::reshape(dout, s)}; });
}

// transpose: da = dout transposed back (the same two dims)
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1) {
  return record(
      "TransposeBackward0", raw::transpose(a, dim0, dim1), {a},
      [dim0, dim1](const Tensor& dout) -> Grads { return {raw::transpose(dout, dim0, dim1)}; });
}

// permute: da = dout permuted by the inverse permutation
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims) {
  Tensor out = raw::permute(a, dims);  // validates dims
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    inverse[static_cast<size_t>(wrap_dim(dims[i], a.dim(), "permute"))] = static_cast<int64_t>(i);
  return record("PermuteBackward0", out, {a},
                [inverse](const Tensor& dout) -> Grads { return {raw::permute(dout, inverse)}; });
}

// expand: out reads each element of a many times     da = dout summed over the repeats
// (the engine's broadcast reduction does exactly that sum, so backward passes dout on)
Tensor expand(const Tensor& a, const Shape& shape) {
  return record("ExpandBackward0", raw::expand(a, shape), {a},
                [](const Tensor& dout) -> Grads { return {dout}; });
}

// narrow / slice / select: da = zeros with dout placed where the view looked
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  return record("NarrowBackward0", raw::narrow(a, dim, start, length), {a},
                [s = a.shape(), dim, start, length](const Tensor& dout) -> Grads {
                  return {place(dout, s, [&](const Tensor& z) {
                    return raw::narrow(z, dim, start, length);
                  })};
                });
}
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return record("SliceBackward0", raw::slice(a, dim, start, end, step), {a},
                [s = a.shape(), dim, start, end, step](const Tensor& dout) -> Grads {
                  return {place(dout, s, [&](const Tensor& z) {
                    return raw::slice(z, dim, start, end, step);
                  })};
                });
}
Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  return record(
      "SelectBackward0", raw::select(a, dim, index), {a},
      [s = a.shape(), dim, index](const Tensor& dout) -> Grads {
        return {place(dout, s, [&](const Tensor& z) { return raw::select(z, dim, index); })};
      });
}

// contiguous / clone: the same values in new memory     da = dout
Tensor contiguous(const Tensor& a) {
  return record("CloneBackward0", raw::contiguous(a), {a},
                [](const Tensor& dout) -> Grads { return {dout}; });
}
Tensor clone(const Tensor& a) {
  return record("CloneBackward0", raw::clone(a), {a},
                [](const Tensor& dout) -> Grads { return {dout}; });
}

// cat: each input gets its own stretch of dout along dim
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor out = raw::cat(tensors, dim);  // validates shapes
  const int64_t d = wrap_dim(dim, tensors[0].dim(), "cat");
  std::vector<int64_t> sizes;
  for (const Tensor& t : tensors) sizes.push_back(t.shape()[d]);
  return record("CatBackward0", out, tensors, [d, sizes](const Tensor& dout) -> Grads {
    Grads g;
    int64_t at = 0;
    for (int64_t n : sizes) {
      g.push_back(raw::narrow(dout, d, at, n));
      at += n;
    }
    return g;
  });
}

// stack: input i gets dout[..., i, ...] along the new dim
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor out = raw::stack(tensors, dim);
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  return record("StackBackward0", out, tensors,
                [d, n = tensors.size()](const Tensor& dout) -> Grads {
                  Grads g;
                  for (size_t i = 0; i < n; ++i)
                    g.push_back(raw::select(dout, d, static_cast<int64_t>(i)));
                  return g;
                });
}

// split / chunk: views made with narrow, so each piece routes its gradient back by itself.
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim) {
  std::vector<Tensor> parts;
  const auto raw_parts = raw::split(a, split_size, dim);  // validates
  const int64_t d = wrap_dim(dim, a.dim(), "split");
  int64_t at = 0;
  for (const Tensor& p : raw_parts) {
    parts.push_back(narrow(a, d, at, p.shape()[d]));
    at += p.shape()[d];
  }
  return parts;
}
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim) {
  return split(a, raw::chunk_size(a, chunks, dim), dim);
}

// index_select: out[i] = a[index[i]] along dim     da[index[i]] += dout[i]
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index) {
  Tensor out = raw::index_select(a, dim, index);  // validates
  const int64_t d = wrap_dim(dim, a.dim(), "index_select");
  return record("IndexSelectBackward0", out, {a},
                [s = a.shape(), d, ids = index.to_vector<int64_t>()](const Tensor& dout) -> Grads {
                  Tensor da = zeros(s);
                  for (size_t i = 0; i < ids.size(); ++i) {
                    const int64_t row = ids[i] < 0 ? ids[i] + s[d] : ids[i];
                    const Tensor target = raw::select(da, d, row);
                    raw::copy_(target,
                               raw::add(target, raw::select(dout, d, static_cast<int64_t>(i))));
                  }
                  return {da};
                });
}

// embedding: out[..., :] = weight[id, :]     dweight[id, :] += dout[..., :] for every id
Tensor embedding(const Tensor& weight, const Tensor& ids) {
  Tensor out = raw::embedding(weight, ids);  // validates
  return record("EmbeddingBackward0", out, {weight},
                [s = weight.shape(), flat = ids.to_vector<int64_t>()](const Tensor& dout) -> Grads {
                  const int64_t C = s[1];
                  Tensor dw = zeros(s);
                  const Tensor d = raw::contiguous(dout);
                  float* pw = dw.data_ptr();
                  const float* pd = d.data_ptr();
                  for (size_t i = 0; i < flat.size(); ++i)
                    for (int64_t c = 0; c < C; ++c)
                      pw[flat[i] * C + c] += pd[static_cast<int64_t>(i) * C + c];
                  return {dw};
                });
}

}  // namespace qkv
