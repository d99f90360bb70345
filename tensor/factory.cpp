// factory.cpp: every factory allocates with Tensor::empty and fills every element.
#include "tensor/factory.h"

#include <cmath>
#include <cstring>

#include "tensor/view.h"

namespace qkv {

Tensor full(const Shape& shape, double value, Dtype dtype) {
  Tensor t = Tensor::empty(shape, dtype);
  raw::fill_(t, value);
  return t;
}
Tensor zeros(const Shape& shape, Dtype dtype) {
  return full(shape, 0.0, dtype);
}
Tensor ones(const Shape& shape, Dtype dtype) {
  return full(shape, 1.0, dtype);
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.shape(), t.dtype());
}
Tensor ones_like(const Tensor& t) {
  return ones(t.shape(), t.dtype());
}
Tensor scalar_tensor(float value) {
  return full({}, value);
}

Tensor eye(int64_t n, int64_t m) {
  if (m < 0) m = n;
  check(n >= 0, "eye", "n >= 0, got ", n);
  Tensor t = zeros({n, m});
  for (int64_t i = 0; i < std::min(n, m); ++i) t.at({i, i}) = 1.0f;
  return t;
}

Tensor arange_int(int64_t start, int64_t end, int64_t step) {
  check(step != 0, "arange", "a non-zero step, got 0");
  check(start == end || (end > start) == (step > 0), "arange",
        "a step that moves from start towards end, got start ", start, ", end ", end, ", step ",
        step);
  // The count, ceil(|end - start| / |step|), in unsigned arithmetic: |end - start| may be up to
  // 2^64 - 1 and |step| 2^63, neither of which an int64 holds.
  const uint64_t span = step > 0 ? static_cast<uint64_t>(end) - static_cast<uint64_t>(start)
                                 : static_cast<uint64_t>(start) - static_cast<uint64_t>(end);
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const uint64_t n = span / stride + (span % stride != 0);
  check(n <= (uint64_t{1} << 40), "arange", "at most 2^40 values, got start ", start, ", end ",
        end, ", step ", step, ": ", n, " values");
  Tensor t = Tensor::empty({static_cast<int64_t>(n)}, Dtype::int64);
  int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i)  // start + i * step, every value between start and end
    p[i] = static_cast<int64_t>(static_cast<uint64_t>(start) +
                                static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
  return t;
}

Tensor arange_float(double start, double end, double step) {
  check(step != 0.0, "arange", "a non-zero step, got 0");
  check(std::isfinite(start) && std::isfinite(end), "arange", "finite bounds, got start ", start,
        " and end ", end);
  check((end - start) * step >= 0, "arange", "a step that moves from start towards end, got start ",
        start, ", end ", end, ", step ", step);
  const double count = std::ceil((end - start) / step);
  check(std::isfinite(count) && count <= static_cast<double>(int64_t{1} << 40), "arange",
        "at most 2^40 values, got start ", start, ", end ", end, ", step ", step);
  const int64_t n = static_cast<int64_t>(count);
  Tensor t = Tensor::empty({n});
  float* p = t.data_ptr();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(start + static_cast<double>(i) * step);
  return t;
}

namespace {
template <class T>
Tensor from_data(const T* data, size_t size, const Shape& shape) {
  const int64_t n = shape_numel(shape, "from_vector");
  check(n == static_cast<int64_t>(size), "from_vector", "data with ", n, " elements for shape ",
        shape, ", got ", size);
  Tensor t = Tensor::empty(shape, dtype_of<T>());
  if (size > 0) std::memcpy(t.data_ptr<T>(), data, size * sizeof(T));
  return t;
}
}  // namespace

Tensor from_vector(const std::vector<float>& data, const Shape& shape) {
  return from_data(data.data(), data.size(), shape);
}
Tensor from_vector(const std::vector<int64_t>& data, const Shape& shape) {
  return from_data(data.data(), data.size(), shape);
}
Tensor from_vector(const std::vector<bool>& data, const Shape& shape) {
  // std::vector<bool> is packed bits; unpack into one byte per element.
  std::unique_ptr<bool[]> bytes(new bool[data.size() + 1]);
  for (size_t i = 0; i < data.size(); ++i) bytes[i] = data[i];
  return from_data(bytes.get(), data.size(), shape);
}

namespace detail {
void check_equal_lengths(size_t expected, size_t got, const char* what) {
  check(got == expected, "tensor", what, " of equal length ", expected, ", got one of length ",
        got);
}
}  // namespace detail

}  // namespace qkv
