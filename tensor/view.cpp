// view.cpp: the geometry of views (see view.h). No element is touched except by the copies.
#include "tensor/view.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "tensor/checked.h"
#include "tensor/iterate.h"
#include "tensor/thread_pool.h"

namespace qkv::raw {
namespace {

// Replaces a single -1 in `shape` by the size that keeps numel unchanged.
Shape infer_size(const Shape& shape, int64_t numel, std::string_view op) {
  Shape out = shape;
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      check(infer_at < 0, op, "at most one dimension of size -1, got shape ", shape);
      infer_at = static_cast<int64_t>(i);
    } else {
      check(out[i] >= 0, op, "sizes must be non-negative or -1, got shape ", shape);
      // (bounded as shape_numel bounds a tensor's sizes, so the product cannot overflow)
      check(out[i] == 0 || known <= (int64_t{1} << 40) / out[i], op, "shape is too large, got ",
            shape);
      known *= out[i];
    }
  }
  if (infer_at >= 0) {
    check(known != 0 && numel % known == 0, op, "shape ", shape, " is invalid for input of size ",
          numel);
    out[infer_at] = numel / known;
  }
  check(shape_numel(out, op) == numel, op, "shape ", shape, " is invalid for input of size ",
        numel);
  return out;
}

// The strides that read `a`'s elements in row-major order under `shape`, if they exist.
// Walks groups of old dims that are contiguous with each other ("chunks") and splits or merges
// them into new dims; a new dim may not straddle two chunks. Same algorithm as torch's view.
std::optional<Shape> view_strides(const Tensor& a, const Shape& shape) {
  const Shape& old_shape = a.shape();
  const Shape& old_strides = a.strides();
  Shape strides(shape.size());
  if (a.numel() == 0 || a.dim() == 0) return contiguous_strides(shape);
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    // End of a chunk: the first dim, or the next-left dim is not laid out right after this one.
    if (d == 0 ||
        (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

// Copies every element of src (already broadcast to dst's shape) into dst, same dtype, by
// moving raw words of the element's size. A large copy (making a transposed view contiguous,
// say) is cut along dim 0 into one slab per thread; every element is still copied exactly once.
template <class Word>
void copy_words(const Tensor& dst, const Shape& src_strides, const Tensor& src) {
  auto* d = reinterpret_cast<Word*>(dst.impl().storage->data());
  const auto* s = reinterpret_cast<const Word*>(src.impl().storage->data());
  auto copy_slab = [&](int64_t r0, int64_t r1) {  // dst[r0:r1] = src[r0:r1] along dim 0
    Shape shape = dst.shape();
    if (!shape.empty()) shape[0] = r1 - r0;
    const int64_t d0 = shape.empty() ? 0 : r0 * dst.strides()[0];
    const int64_t s0 = shape.empty() ? 0 : r0 * src_strides[0];
    walk<2>(shape, {&dst.strides(), &src_strides},
            {dst.storage_offset() + d0, src.storage_offset() + s0},
            [&](std::array<int64_t, 2> o, std::array<int64_t, 2> st, int64_t n) {
              if (st[0] == 1 && st[1] == 1) {
                std::memcpy(d + o[0], s + o[1], static_cast<size_t>(n) * sizeof(Word));
                return;
              }
              for (int64_t i = 0; i < n; ++i) d[o[0] + i * st[0]] = s[o[1] + i * st[1]];
            });
  };
  parallel_ranges(dst.dim() == 0 ? 1 : dst.size(0), dst.numel() >= kParallelElements, copy_slab);
}

template <class T>
void store_converted(const Tensor& dst, const Shape& src_strides, const Tensor& src) {
  auto* d = reinterpret_cast<T*>(dst.impl().storage->data());
  walk<2>(dst.shape(), {&dst.strides(), &src_strides}, {dst.storage_offset(), src.storage_offset()},
          [&](std::array<int64_t, 2> o, std::array<int64_t, 2> st, int64_t n) {
            for (int64_t i = 0; i < n; ++i) {
              const double v = load_as_double(src, o[1] + i * st[1]);
              if constexpr (std::is_same_v<T, bool>) {
                d[o[0] + i * st[0]] = v != 0.0;
              } else {
                d[o[0] + i * st[0]] = static_cast<T>(v);
              }
            }
          });
}

}  // namespace

Tensor view(const Tensor& a, const Shape& shape) {
  const Shape target = infer_size(shape, a.numel(), "view");
  auto strides = view_strides(a, target);
  check(strides.has_value(), "view",
        "a shape the strides can express (use reshape, or contiguous first), got a ", a.shape(),
        " tensor with strides ", a.strides(), " viewed as ", target);
  return Tensor::make_view(a, target, *strides, a.storage_offset());
}

Tensor reshape(const Tensor& a, const Shape& shape) {
  const Shape target = infer_size(shape, a.numel(), "reshape");
  if (auto strides = view_strides(a, target))
    return Tensor::make_view(a, target, *strides, a.storage_offset());
  return view(clone(a), target);
}

Tensor flatten(const Tensor& a, int64_t start_dim, int64_t end_dim) {
  if (a.dim() == 0) return reshape(a, {1});
  const int64_t s = wrap_dim(start_dim, a.dim(), "flatten");
  const int64_t e = wrap_dim(end_dim, a.dim(), "flatten");
  check(s <= e, "flatten", "start_dim <= end_dim, got ", start_dim, " and ", end_dim);
  Shape shape(a.shape().begin(), a.shape().begin() + s);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= a.shape()[d];
  shape.push_back(merged);
  shape.insert(shape.end(), a.shape().begin() + e + 1, a.shape().end());
  return reshape(a, shape);
}

Tensor transpose(const Tensor& a, int64_t dim0, int64_t dim1) {
  const int64_t d0 = wrap_dim(dim0, a.dim(), "transpose");
  const int64_t d1 = wrap_dim(dim1, a.dim(), "transpose");
  if (a.dim() == 0) return Tensor::make_view(a, a.shape(), a.strides(), a.storage_offset());
  Shape shape = a.shape(), strides = a.strides();
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  return Tensor::make_view(a, shape, strides, a.storage_offset());
}

Tensor permute(const Tensor& a, const std::vector<int64_t>& dims) {
  check(static_cast<int64_t>(dims.size()) == a.dim(), "permute", "one entry per dim of shape ",
        a.shape(), ", got dims ", Shape(dims));
  Shape shape(dims.size()), strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = wrap_dim(dims[i], a.dim(), "permute");
    check(!seen[d], "permute", "each dim exactly once, got dims ", Shape(dims));
    seen[d] = true;
    shape[i] = a.shape()[d];
    strides[i] = a.strides()[d];
  }
  return Tensor::make_view(a, shape, strides, a.storage_offset());
}

Tensor unsqueeze(const Tensor& a, int64_t dim) {
  const int64_t d = wrap_dim(dim, a.dim() + 1, "unsqueeze");
  Shape shape = a.shape(), strides = a.strides();
  // The new dim has size 1, so its stride is never used; pick the natural one.
  const int64_t st = d < a.dim() ? a.shape()[d] * a.strides()[d] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  return Tensor::make_view(a, shape, strides, a.storage_offset());
}

Tensor squeeze(const Tensor& a) {
  Shape shape, strides;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.shape()[d] == 1) continue;
    shape.push_back(a.shape()[d]);
    strides.push_back(a.strides()[d]);
  }
  return Tensor::make_view(a, shape, strides, a.storage_offset());
}

Tensor squeeze(const Tensor& a, int64_t dim) {
  const int64_t d = wrap_dim(dim, a.dim(), "squeeze");
  if (a.dim() == 0 || a.shape()[d] != 1)
    return Tensor::make_view(a, a.shape(), a.strides(), a.storage_offset());
  Shape shape = a.shape(), strides = a.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor::make_view(a, shape, strides, a.storage_offset());
}

Tensor expand(const Tensor& a, const Shape& shape) {
  check(static_cast<int64_t>(shape.size()) >= a.dim(), "expand",
        "at least as many sizes as the tensor has dims, got ", a.shape(), " expanded to ", shape);
  const int64_t lead = static_cast<int64_t>(shape.size()) - a.dim();
  Shape out(shape.size()), strides(shape.size());
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i) {
    if (i < lead) {  // a new leading dim: every step reads the same data
      check(shape[i] >= 0, "expand", "new leading sizes must be non-negative, got ", shape);
      out[i] = shape[i];
      strides[i] = 0;
      continue;
    }
    const int64_t have = a.shape()[i - lead];
    const int64_t want = shape[i] == -1 ? have : shape[i];
    check(want >= 0, "expand", "sizes >= 0 (or -1 to keep a size), got ", a.shape(),
          " expanded to ", shape);
    check(want == have || have == 1, "expand", "size ", have, " to match or be 1 at dim ", i - lead,
          ", got ", a.shape(), " expanded to ", shape);
    out[i] = want;
    strides[i] = (have == 1 && want != 1) ? 0 : a.strides()[i - lead];
  }
  shape_numel(out, "expand");  // the product of the sizes must fit, as any tensor's must
  return Tensor::make_view(a, out, strides, a.storage_offset());
}

Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length) {
  check(a.dim() > 0, "narrow", "a tensor with at least one dim, got shape ", a.shape());
  const int64_t d = wrap_dim(dim, a.dim(), "narrow");
  const int64_t n = a.shape()[d];
  if (start < 0) start += n;
  check(start >= 0 && start <= n, "narrow", "start in range [", -n, ", ", n, "] for dim ", d,
        " of shape ", a.shape(), ", got ", start);
  check(length >= 0 && checked_add(start, length, "narrow") <= n, "narrow", "start + length <= ", n,
        " for dim ", d, " of shape ", a.shape(), ", got start ", start, " and length ", length);
  Shape shape = a.shape();
  shape[d] = length;
  return Tensor::make_view(a, shape, a.strides(), a.storage_offset() + start * a.strides()[d]);
}

Tensor slice(const Tensor& a, int64_t dim, int64_t start, int64_t end, int64_t step) {
  check(a.dim() > 0, "slice", "a tensor with at least one dim, got shape ", a.shape());
  check(step > 0, "slice", "step > 0, got ", step);
  const int64_t d = wrap_dim(dim, a.dim(), "slice");
  const int64_t n = a.shape()[d];
  // Python's clamping: negative bounds count from the end, then clip into [0, n].
  auto clamp_bound = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  start = clamp_bound(start);
  end = std::max(clamp_bound(end), start);
  Shape shape = a.shape(), strides = a.strides();
  shape[d] = end > start ? 1 + (end - start - 1) / step : 0;  // ceil((end - start) / step)
  // With two or more entries left, the stride grows by the step (a product that must fit).
  if (shape[d] > 1) strides[d] = checked_mul(strides[d], step, "slice");
  return Tensor::make_view(a, shape, strides, a.storage_offset() + start * a.strides()[d]);
}

Tensor select(const Tensor& a, int64_t dim, int64_t index) {
  check(a.dim() > 0, "select", "a tensor with at least one dim, got shape ", a.shape());
  const int64_t d = wrap_dim(dim, a.dim(), "select");
  const int64_t n = a.shape()[d];
  check(index >= -n && index < n, "select", "index in range [", -n, ", ", n - 1, "] for dim ", d,
        " of shape ", a.shape(), ", got ", index);
  if (index < 0) index += n;
  Shape shape = a.shape(), strides = a.strides();
  shape.erase(shape.begin() + d);
  strides.erase(strides.begin() + d);
  return Tensor::make_view(a, shape, strides, a.storage_offset() + index * a.strides()[d]);
}

void copy_(const Tensor& dst, const Tensor& src) {
  const Tensor s = expand(src, dst.shape());  // broadcasting src; throws on a mismatch
  dst.impl().storage->bump_version();
  if (s.dtype() == dst.dtype()) {
    switch (element_size(dst.dtype())) {
      case 1:
        copy_words<uint8_t>(dst, s.strides(), s);
        return;
      case 4:
        copy_words<uint32_t>(dst, s.strides(), s);
        return;
      default:
        copy_words<uint64_t>(dst, s.strides(), s);
        return;
    }
  }
  switch (dst.dtype()) {
    case Dtype::float32:
      store_converted<float>(dst, s.strides(), s);
      return;
    case Dtype::int64:
      store_converted<int64_t>(dst, s.strides(), s);
      return;
    case Dtype::boolean:
      store_converted<bool>(dst, s.strides(), s);
      return;
  }
}

void fill_(const Tensor& dst, double value) {
  // The value as a 0-d tensor that copy_ broadcasts; int64 keeps large integers exact.
  const bool ints = dst.dtype() == Dtype::int64;
  Tensor one = Tensor::empty({}, ints ? Dtype::int64 : Dtype::float32);
  if (ints) {
    *one.data_ptr<int64_t>() = static_cast<int64_t>(value);
  } else {
    *one.data_ptr<float>() = static_cast<float>(value);
  }
  copy_(dst, one);
}

Tensor contiguous(const Tensor& a) {
  return a.is_contiguous() ? a : clone(a);
}

Tensor clone(const Tensor& a) {
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  copy_(out, a);
  return out;
}

Tensor to(const Tensor& a, Dtype dtype) {
  if (a.dtype() == dtype) return a;
  Tensor out = Tensor::empty(a.shape(), dtype);
  copy_(out, a);
  return out;
}

}  // namespace qkv::raw
