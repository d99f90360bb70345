// tensor.h: the Tensor handle: a typed view (shape, strides, offset) onto shared storage.
//
// This is the ground floor of qkv: numbers without history. A Tensor is a cheap handle (like a
// Python reference to a torch.Tensor): copying it aliases the same tensor. Views share the
// Storage and differ only in shape, strides and offset. The autograd floor hangs a gradient
// history on the `autograd` slot; this floor only carries the pointer and never looks inside.
//
// Shape letters in comments across the library: B batch, T time, C channels, H heads,
// D head dim, M N K for matrix products.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/error.h"

namespace qkv {

// float32 is the number type; int64 holds indices and token ids (what randint, argmax and
// arange(int) give in PyTorch); bool holds masks (what comparisons give).
enum class Dtype : uint8_t { float32, int64, boolean };

size_t element_size(Dtype dtype);
std::string dtype_name(Dtype dtype);  // "torch.float32", "torch.int64", "torch.bool"

template <class T>
constexpr Dtype dtype_of();
template <>
constexpr Dtype dtype_of<float>() {
  return Dtype::float32;
}
template <>
constexpr Dtype dtype_of<int64_t>() {
  return Dtype::int64;
}
template <>
constexpr Dtype dtype_of<bool>() {
  return Dtype::boolean;
}

// A block of bytes shared by every view of it, aligned to 64 bytes (a cache line, and the
// widest SIMD register) so kernels may use aligned loads on freshly made tensors.
class Storage {
 public:
  explicit Storage(size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::byte* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  // Counts in-place writes (copy_, fill_, uniform_, normal_, and the autograd floor's in-place
  // ops). Autograd remembers the count when it saves a tensor for backward, so a tensor changed
  // in place afterwards is caught instead of silently giving wrong gradients. Writes through
  // at() or data_ptr() are not counted.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  std::byte* data_;
  size_t nbytes_;
  uint64_t version_ = 0;
};

struct AutogradMeta;  // defined in autograd/; opaque on this floor

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  Shape shape;
  Shape strides;       // in elements, not bytes
  int64_t offset = 0;  // in elements, from the start of storage
  Dtype dtype = Dtype::float32;
  std::shared_ptr<AutogradMeta> autograd;  // history, owned by the autograd floor
};

// Row-major strides of a contiguous tensor of this shape: (2, 3, 4) -> (12, 4, 1).
Shape contiguous_strides(const Shape& shape);
// The number of elements; throws if a size is negative.
int64_t shape_numel(const Shape& shape, std::string_view op = "Tensor");
// Wraps a possibly negative dim into [0, rank): dim -1 is the last one, as in PyTorch.
int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op);

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (like an empty Python variable)

  // A new contiguous tensor with uninitialised contents. Factories (zeros, ones, ...) fill it.
  static Tensor empty(const Shape& shape, Dtype dtype = Dtype::float32);
  // A view of `base`'s storage with its own shape, strides and offset. No checks: callers
  // (the view functions) have validated the geometry.
  static Tensor make_view(const Tensor& base, Shape shape, Shape strides, int64_t offset);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  const Shape& strides() const { return impl().strides; }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return static_cast<int64_t>(impl().shape.size()); }
  int64_t numel() const;
  Dtype dtype() const { return impl().dtype; }
  int64_t storage_offset() const { return impl().offset; }
  bool is_contiguous() const;
  bool shares_storage(const Tensor& other) const;

  // Pointer to the first element (storage offset applied); the type must match dtype().
  template <class T = float>
  T* data_ptr() const {
    check_dtype(dtype_of<T>(), "data_ptr");
    return reinterpret_cast<T*>(impl().storage->data()) + impl().offset;
  }
  // The element at a full index (negative indices count from the end): t.at({1, 2}) = 5.f;
  template <class T = float>
  T& at(std::initializer_list<int64_t> index) const {
    check_dtype(dtype_of<T>(), "at");
    return reinterpret_cast<T*>(impl().storage->data())[element_offset(index)];
  }
  // The value of a one-element tensor, converted to T.
  template <class T = float>
  T item() const;
  // All elements in row-major (logical) order, converted to T: PyTorch's flatten().tolist().
  template <class T = float>
  std::vector<T> to_vector() const;

  TensorImpl& impl() const;
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  void check_dtype(Dtype wanted, std::string_view op) const;
  int64_t element_offset(std::initializer_list<int64_t> index) const;
  std::shared_ptr<TensorImpl> impl_;
};

// Reads element `i` (a storage index) of any dtype as a double; used by printing and
// conversions, never by hot kernels.
double load_as_double(const Tensor& t, int64_t storage_index);

// A tensor's shape in an error message: shape_of(x) writes "(2, 3)" as shape_str does, or
// `if_undefined` for a tensor that holds nothing; dtype_and_shape_of(x) writes
// "torch.int64 (2, 3)". check(...) writes its parts out only when it fails, so a check that
// passes builds no string:
//   check(ok, "linear", "x of shape (..., in_features), got ", shape_of(x));
struct ShapeOf {
  const Tensor& tensor;
  std::string_view if_undefined;
  bool with_dtype = false;
};
inline ShapeOf shape_of(const Tensor& t, std::string_view if_undefined = "undefined") {
  return {t, if_undefined};
}
inline ShapeOf dtype_and_shape_of(const Tensor& t) {
  return {t, "undefined", true};
}
std::ostream& operator<<(std::ostream& os, const ShapeOf& s);

}  // namespace qkv
