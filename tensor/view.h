// view.h: views that share storage, and the copies that make a tensor contiguous.
//
// A view changes how the same bytes are read: shape, strides and offset, never the data.
// transpose(x, 0, 1) swaps two strides; expand sets a stride to 0 so one row is read many
// times; narrow moves the offset. Writing through a view writes the base tensor. These are the
// raw (history-free) forms; autograd/ wraps them so that gradients flow back to the base.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace qkv::raw {

// view: the same storage read with a new shape; one size may be -1 (inferred). Throws when the
// strides cannot express the new shape (as torch's view does); reshape copies in that case.
Tensor view(const Tensor& a, const Shape& shape);
Tensor reshape(const Tensor& a, const Shape& shape);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& a, const std::vector<int64_t>& dims);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor squeeze(const Tensor& a);               // every size-1 dim
Tensor squeeze(const Tensor& a, int64_t dim);  // that dim, if its size is 1 (else unchanged)
// expand: size-1 dims (and new leading dims) repeat with stride 0; -1 keeps a size.
Tensor expand(const Tensor& a, const Shape& shape);
// narrow: `length` entries of `dim` from `start`: x[:, start:start+length].
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
// slice: Python's a[start:end:step] along dim (bounds clamped like Python, step > 0).
Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
// select: a[index] along dim; the dim disappears.
Tensor select(const Tensor& a, int64_t dim, int64_t index);

// contiguous: `a` itself if already row-major, else a packed copy.
Tensor contiguous(const Tensor& a);
Tensor clone(const Tensor& a);            // always a fresh contiguous copy
Tensor to(const Tensor& a, Dtype dtype);  // converts (a copy unless already that dtype)
// copy_: writes src into dst elementwise; src broadcasts to dst's shape; dtypes may differ.
void copy_(const Tensor& dst, const Tensor& src);
void fill_(const Tensor& dst, double value);

}  // namespace qkv::raw
