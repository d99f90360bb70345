// tensor.cpp: storage, geometry helpers and element access for the Tensor handle.
#include "tensor/tensor.h"

#include <cstring>
#include <new>
#include <ostream>
#include <type_traits>

#include "tensor/allocator.h"
#include "tensor/iterate.h"

namespace qkv {

size_t element_size(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32:
      return 4;
    case Dtype::int64:
      return 8;
    case Dtype::boolean:
      return 1;
  }
  return 4;
}

std::string dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::float32:
      return "torch.float32";
    case Dtype::int64:
      return "torch.int64";
    case Dtype::boolean:
      return "torch.bool";
  }
  return "?";
}

// Memory comes from the block cache of allocator.h (large blocks are reused, not refaulted).
Storage::Storage(size_t nbytes) : data_(allocate_bytes(nbytes)), nbytes_(nbytes) {}

Storage::~Storage() {
  free_bytes(data_, nbytes_);
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

int64_t shape_numel(const Shape& shape, std::string_view op) {
  // `span` is the product of the non-zero sizes: what the row-major strides multiply up to,
  // even when a 0 somewhere makes the tensor empty. 2^40 (4 TiB of floats) is far beyond any
  // machine this runs on; refusing more early turns an absurd size from a corrupt file into a
  // clear error instead of bad_alloc or a stride that overflows.
  int64_t n = 1, span = 1;
  for (int64_t s : shape) {
    check(s >= 0, op, "sizes must be non-negative, got shape ", shape);
    const int64_t f = std::max<int64_t>(s, 1);
    check(span <= (int64_t{1} << 40) / f, op, "shape is too large, got ", shape);
    span *= f;
    n *= s;
  }
  return n;
}

int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op) {
  const int64_t r = std::max<int64_t>(rank, 1);  // a 0-d tensor accepts dim 0 and -1, as torch
  check(dim >= -r && dim < r, op, "dim must be in range [", -r, ", ", r - 1, "], got ", dim);
  return dim < 0 ? dim + r : dim;
}

Tensor Tensor::empty(const Shape& shape, Dtype dtype) {
  const int64_t n = shape_numel(shape, "empty");
  // n <= 2^40: no overflow in 64 bits (a size_t of 32 bits, WebAssembly's, would overflow).
  const uint64_t bytes = static_cast<uint64_t>(n) * element_size(dtype);
  check(bytes <= max_tensor_bytes(), "empty", "a tensor within max_tensor_bytes() = ",
        max_tensor_bytes(), " (set_max_tensor_bytes or QKV_MAX_TENSOR_BYTES raise it), got shape ",
        shape, " of ", dtype_name(dtype), ", ", bytes, " bytes");
  Tensor t;
  t.impl_ = std::make_shared<TensorImpl>();
  try {
    t.impl_->storage = std::make_shared<Storage>(static_cast<size_t>(bytes));  // a size_t: <= max
  } catch (const std::bad_alloc&) {
    throw Error("empty: memory for a tensor of shape " + shape_str(shape) + " of " +
                dtype_name(dtype) + ", " + std::to_string(bytes) +
                " bytes, got an allocation failure (out of memory)");
  }
  t.impl_->shape = shape;
  t.impl_->strides = contiguous_strides(shape);
  t.impl_->dtype = dtype;
  return t;
}

Tensor Tensor::make_view(const Tensor& base, Shape shape, Shape strides, int64_t offset) {
  Tensor t;
  t.impl_ = std::make_shared<TensorImpl>();
  t.impl_->storage = base.impl().storage;
  t.impl_->shape = std::move(shape);
  t.impl_->strides = std::move(strides);
  t.impl_->offset = offset;
  t.impl_->dtype = base.dtype();
  return t;
}

TensorImpl& Tensor::impl() const {
  check(impl_ != nullptr, "Tensor", "a defined tensor, got an undefined (default-constructed) one");
  return *impl_;
}

int64_t Tensor::size(int64_t d) const {
  return shape()[wrap_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  return strides()[wrap_dim(d, dim(), "stride")];
}

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t s : shape()) n *= s;
  return n;
}

bool Tensor::is_contiguous() const {
  // Size-1 dims may have any stride: they are never stepped over.
  int64_t expected = 1;
  for (size_t i = shape().size(); i-- > 0;) {
    if (shape()[i] == 1) continue;
    if (strides()[i] != expected) return false;
    expected *= shape()[i];
  }
  return true;
}

bool Tensor::shares_storage(const Tensor& other) const {
  return defined() && other.defined() && impl().storage == other.impl().storage;
}

void Tensor::check_dtype(Dtype wanted, std::string_view op) const {
  check(dtype() == wanted, op, "a tensor of dtype ", dtype_name(wanted), ", got ",
        dtype_name(dtype()));
}

int64_t Tensor::element_offset(std::initializer_list<int64_t> index) const {
  check(static_cast<int64_t>(index.size()) == dim(), "at", "one index per dim, got ", index.size(),
        " indices for shape ", shape());
  int64_t off = impl().offset;
  int64_t d = 0;
  for (int64_t i : index) {
    const int64_t n = shape()[d];
    check(i >= -n && i < n, "at", "index in range [", -n, ", ", n - 1, "] for dim ", d,
          " of shape ", shape(), ", got ", i);
    off += (i < 0 ? i + n : i) * strides()[d];
    ++d;
  }
  return off;
}

double load_as_double(const Tensor& t, int64_t i) {
  const std::byte* base = t.impl().storage->data();
  switch (t.dtype()) {
    case Dtype::float32:
      return reinterpret_cast<const float*>(base)[i];
    case Dtype::int64:
      return static_cast<double>(reinterpret_cast<const int64_t*>(base)[i]);
    case Dtype::boolean:
      return reinterpret_cast<const bool*>(base)[i] ? 1.0 : 0.0;
  }
  return 0;
}

std::ostream& operator<<(std::ostream& os, const ShapeOf& s) {
  if (!s.tensor.defined()) return os << s.if_undefined;
  if (s.with_dtype) os << dtype_name(s.tensor.dtype()) << ' ';
  return os << shape_str(s.tensor.shape());
}

template <class T>
T Tensor::item() const {
  check(numel() == 1, "item", "a tensor with one element, got shape ", shape());
  if (dtype() == Dtype::int64) {
    // Exact for large ids, without a trip through double.
    return static_cast<T>(reinterpret_cast<const int64_t*>(impl().storage->data())[impl().offset]);
  }
  return static_cast<T>(load_as_double(*this, impl().offset));
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  // Floats read as floats from a contiguous tensor: the values as they lie, in one copy (a
  // generated token's 50,257 logits are read this way). Any other case element by element.
  if constexpr (std::is_same_v<T, float>) {
    if (dtype() == Dtype::float32 && is_contiguous()) {
      const float* p = data_ptr<float>();
      return std::vector<float>(p, p + numel());
    }
  }
  std::vector<T> out;
  out.reserve(static_cast<size_t>(numel()));
  const bool exact_int = dtype() == Dtype::int64;
  const auto* ints = reinterpret_cast<const int64_t*>(impl().storage->data());
  for_each_offset(*this, [&](int64_t i) {
    out.push_back(exact_int ? static_cast<T>(ints[i]) : static_cast<T>(load_as_double(*this, i)));
  });
  return out;
}

template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template bool Tensor::item<bool>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

}  // namespace qkv
