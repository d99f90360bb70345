// softmax.cpp: one pass for the max, one for the sum of exponentials, one to write.
#include "tensor/softmax.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "tensor/elementwise.h"
#include "tensor/iterate.h"
#include "tensor/reduce.h"
#include "tensor/thread_pool.h"
#include "tensor/simd/exp.h"
#include "tensor/simd/lanes.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

// The row kernels' lane count: sums and maxima run in kLanes independent accumulators.
constexpr int kLanes = 16;
static_assert(kLanes == kCausalRowChunk, "causal_softmax_row reads whole chunks of kLanes keys");

// kLanes accumulators, and their fold into one number: lane j with lane j + 8, then j + 4,
// j + 2, j + 1, a tree of four steps (the order depends on nothing but kLanes, so every row, on
// any thread, is folded alike). On GCC and Clang the lanes are one vector register and the
// steps are shuffles (__builtin_shufflevector: Clang's, and GCC's from 12 on); elsewhere an
// array, folded in the same order. A chain of fifteen additions, each waiting for the one
// before, was a third of a 64-key attention row's time.
#if QKV_LANE_VECTORS && (defined(__clang__) || __GNUC__ >= 12)
typedef float Lanes __attribute__((vector_size(4 * kLanes)));
QKV_ALWAYS_INLINE inline Lanes load_lanes(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
QKV_ALWAYS_INLINE inline Lanes splat(float x) {
  return Lanes{} + x;
}
QKV_ALWAYS_INLINE inline Lanes lanes_max(Lanes a, Lanes b) {  // b where b > a, else a
  return b > a ? b : a;
}
template <class Op>
QKV_ALWAYS_INLINE inline float fold(Lanes v, Op op) {
  typedef float L8 __attribute__((vector_size(32)));
  typedef float L4 __attribute__((vector_size(16)));
  typedef float L2 __attribute__((vector_size(8)));
  const L8 a = op(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7),
                  __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
  const L4 b =
      op(__builtin_shufflevector(a, a, 0, 1, 2, 3), __builtin_shufflevector(a, a, 4, 5, 6, 7));
  const L2 c = op(__builtin_shufflevector(b, b, 0, 1), __builtin_shufflevector(b, b, 2, 3));
  return op(c[0], c[1]);
}
#else
struct Lanes {
  float v[kLanes];
};
inline Lanes load_lanes(const float* p) {
  Lanes l;
  std::memcpy(l.v, p, sizeof l.v);
  return l;
}
inline Lanes splat(float x) {
  Lanes l;
  std::fill(l.v, l.v + kLanes, x);
  return l;
}
inline Lanes operator+(Lanes a, Lanes b) {
  for (int j = 0; j < kLanes; ++j) a.v[j] += b.v[j];
  return a;
}
inline Lanes lanes_max(Lanes a, Lanes b) {
  for (int j = 0; j < kLanes; ++j) a.v[j] = b.v[j] > a.v[j] ? b.v[j] : a.v[j];
  return a;
}
template <class Op>
float fold(Lanes l, Op op) {
  for (int half = kLanes / 2; half > 0; half /= 2)
    for (int j = 0; j < half; ++j) l.v[j] = op(l.v[j], l.v[j + half]);
  return l.v[0];
}
#endif
const auto kAdd = [](auto a, auto b) QKV_INLINE_LAMBDA { return a + b; };
const auto kMax = [](auto a, auto b) QKV_INLINE_LAMBDA { return b > a ? b : a; };

// The row kernels take the row's length n as an int64_t, or as a std::integral_constant when
// it is known at compile time (attention's rows, below): then the loops have constant trip
// counts and the compiler keeps a short row in registers. The same code, so the same bits.
//
// y[i] = e^(x[i] - m) for a row, and the sum of them: lane j sums elements j, j + kLanes, ...,
// the lanes are folded, then the rest, n % kLanes elements, is added in order. The order
// depends only on n: the same result on any number of threads.
template <class Length>
float exp_and_sum(const float* x, float m, float* y, Length n) {
  detail::exp_into(y, n, [&](int64_t i) QKV_INLINE_LAMBDA { return x[i] - m; });
  const int64_t whole = n / kLanes * kLanes;
  Lanes lane = splat(0.0f);
  for (int64_t i = 0; i < whole; i += kLanes) lane = lane + load_lanes(y + i);
  float s = fold(lane, kAdd);
  for (int64_t i = whole; i < n; ++i) s += y[i];
  return s;
}

template <class Length>
float row_max(const float* x, Length n) {
  const int64_t whole = n / kLanes * kLanes;
  Lanes lane = splat(-INFINITY);
  for (int64_t i = 0; i < whole; i += kLanes) lane = lanes_max(lane, load_lanes(x + i));
  float m = fold(lane, kMax);
  for (int64_t i = whole; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// Runs body(row) for rows [0, rows): split statically over the thread pool when the tensor
// has numel >= 2^15 elements, else on the calling thread. Rows are independent, so the split
// never changes a result.
template <class Body>
void for_each_row_parallel(int64_t rows, int64_t numel, Body body) {
  parallel_ranges(rows, numel >= kParallelElements, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) body(r);
  });
}

}  // namespace

LogSumExp log_sum_exp_row(const float* x, int64_t n, float* scratch) {
  const float m = row_max(x, n);
  return {m, std::log(exp_and_sum(x, m, scratch, n))};
}

namespace {

// One contiguous row: m = max, s = sum e^(x - m), then y = e^(x - m) / s (or x - m - log s).
template <bool kLog, class Length = int64_t>
void softmax_row(const float* x, float* y, Length n) {
  if constexpr (kLog) {
    const LogSumExp s = log_sum_exp_row(x, n, y);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - s.max - s.log_sum;
  } else {
    const float m = row_max(x, n);
    const float s = exp_and_sum(x, m, y, n);
    // Times 1 / s, as torch's softmax over the last dim does (tmp_sum = 1 / tmp_sum, then
    // x * tmp_sum): the same bits as PyTorch where the sums agree, and one division per row
    // instead of one per element.
    const float inv = 1.0f / s;
    for (int64_t i = 0; i < n; ++i) y[i] *= inv;
  }
}

template <bool kLog>
Tensor softmax_impl(const Tensor& a, int64_t dim_in, std::string_view op) {
  check(a.defined() && a.dtype() == Dtype::float32, op, "a float32 tensor, got ",
        a.defined() ? dtype_name(a.dtype()) : "an undefined one");
  const int64_t dim = wrap_dim(dim_in, a.dim(), op);
  Tensor out = Tensor::empty(a.shape());
  if (a.numel() == 0) return out;
  if (a.dim() == 0) {  // softmax of one number is 1 (log: 0), as in torch
    *out.data_ptr() = kLog ? 0.0f : 1.0f;
    return out;
  }
  // The common case, softmax over the last dim of a contiguous tensor (attention's rows):
  // rows are independent, so they are split statically over the thread pool.
  if (dim == a.dim() - 1 && a.is_contiguous()) {
    const int64_t n = a.size(dim), rows = a.numel() / n;
    const float* x = a.data_ptr();
    float* y = out.data_ptr();
    for_each_row_parallel(rows, a.numel(),
                          [&](int64_t r) { softmax_row<kLog>(x + r * n, y + r * n, n); });
    return out;
  }
  // Any other dim or layout: the same row function on a contiguous copy of each row.
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  float* po = out.data_ptr();
  std::vector<float> row_in, row_out;
  for_each_row(a, dim, out, [&](int64_t ia, int64_t sa, int64_t io, int64_t so, int64_t n) {
    row_in.resize(static_cast<size_t>(n));
    row_out.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) row_in[static_cast<size_t>(i)] = pa[ia + i * sa];
    softmax_row<kLog>(row_in.data(), row_out.data(), n);
    for (int64_t i = 0; i < n; ++i) po[io + i * so] = row_out[static_cast<size_t>(i)];
  });
  return out;
}

}  // namespace

void causal_softmax_row(const float* x, float* y, int64_t n, int64_t visible, float scale_mul,
                        float scale_div) {
  if (visible == 0) {  // nothing to attend to: zeros, as the attention core defines
    std::fill(y, y + n, 0.0f);
    return;
  }
  // Hidden keys get weight exactly 0. The softmax runs over the visible keys rounded up to
  // whole chunks of kLanes (or the whole row), the hidden ones in them as -inf (e^-inf = 0):
  // every sum then meets its numbers in the same lanes and order as a softmax over the whole
  // row would (the chunks left out would only add zeros), so the result is bit for bit the
  // general path's, without the exponentials of the chunks that are all hidden.
  const int64_t len = causal_row_keys_read(n, visible);
  // Rows of 16 to 64 (attention's up to T = 64) with the length fixed at compile time.
  // Every key of those is scaled, then the hidden ones replaced by -inf with a bit mask (so
  // x's keys up to len are read: kCausalRowChunk in softmax.h). GCC vectorises a division
  // under `?:` only where it can mask a vector's lanes (AVX-512); on AVX2 and NEON that form
  // runs one key at a time.
  const auto row = [&](auto length) {
    for (int64_t j = 0; j < length; ++j)
      y[j] = detail::bit_select(j < visible, x[j] * scale_mul / scale_div, -INFINITY);
    softmax_row<false>(y, y, length);
  };
  detail::with_constant<kLanes, 2 * kLanes, 3 * kLanes, 4 * kLanes>(len, row);
  std::fill(y + len, y + n, 0.0f);
}

void softmax_backward_row(const float* s, const float* dout, float* out, int64_t n, float scale_mul,
                          float scale_div) {
  const float d = static_cast<float>(
      detail::lane_sum<double>(n, [&](auto at) { return detail::widen(at(dout) * at(s)); }));
  for (int64_t i = 0; i < n; ++i) out[i] = s[i] * (dout[i] - d) * scale_mul / scale_div;
}

Tensor softmax(const Tensor& a, int64_t dim) {
  return softmax_impl<false>(a, dim, "softmax");
}
Tensor log_softmax(const Tensor& a, int64_t dim) {
  return softmax_impl<true>(a, dim, "log_softmax");
}

// One pass per row when the dim is the last of contiguous tensors (attention's rows): the dot
// product sum(dout * s), then s * (dout - dot). Elsewhere the same formula from primitives.
Tensor softmax_backward(const Tensor& s, const Tensor& dout, int64_t dim_in) {
  check(s.defined() && dout.defined() && s.shape() == dout.shape() && s.dtype() == Dtype::float32 &&
            dout.dtype() == Dtype::float32,
        "softmax_backward", "float32 s and dout of one shape, got ", shape_of(s), " and ",
        shape_of(dout));
  const int64_t dim = wrap_dim(dim_in, s.dim(), "softmax_backward");
  if (s.dim() == 0 || dim != s.dim() - 1 || !s.is_contiguous() || !dout.is_contiguous())
    return mul(s, sub(dout, sum(mul(dout, s), dim, true)));
  Tensor out = Tensor::empty(s.shape());
  const int64_t n = s.size(dim), rows = n == 0 ? 0 : s.numel() / n;
  const float* ps = s.data_ptr();
  const float* pd = dout.data_ptr();
  float* po = out.data_ptr();
  for_each_row_parallel(rows, s.numel(), [&](int64_t r) {
    softmax_backward_row(ps + r * n, pd + r * n, po + r * n, n);
  });
  return out;
}

Tensor causal_softmax(const Tensor& x_in, float scale_mul, float scale_div, int64_t offset) {
  check(x_in.defined() && x_in.dtype() == Dtype::float32 && x_in.dim() >= 2, "causal_softmax",
        "float32 scores (..., T_q, T_k), got ", shape_of(x_in, "an undefined tensor"));
  const Tensor x = contiguous(x_in);
  Tensor out = Tensor::empty(x.shape());
  const int64_t T_q = x.size(-2), T_k = x.size(-1);
  const int64_t rows = T_k == 0 ? 0 : x.numel() / T_k;
  const float* px = x.data_ptr();
  float* po = out.data_ptr();
  for_each_row_parallel(rows, x.numel(), [&](int64_t r) {
    const int64_t visible = std::clamp<int64_t>(r % T_q + offset + 1, 0, T_k);  // keys 0..i+offset
    causal_softmax_row(px + r * T_k, po + r * T_k, T_k, visible, scale_mul, scale_div);
  });
  return out;
}

Tensor causal_softmax_backward(const Tensor& s_in, const Tensor& dout_in, float scale_mul,
                               float scale_div) {
  check(s_in.defined() && dout_in.defined() && s_in.shape() == dout_in.shape() && s_in.dim() >= 1 &&
            s_in.dtype() == Dtype::float32 && dout_in.dtype() == Dtype::float32,
        "causal_softmax_backward", "float32 s and dout of one shape, got ", shape_of(s_in), " and ",
        shape_of(dout_in));
  // softmax's backward, scaled as the forward scaled its input; hidden keys have s = 0, so
  // their gradient is 0.
  const Tensor s = contiguous(s_in), dout = contiguous(dout_in);
  Tensor out = Tensor::empty(s.shape());
  const int64_t n = s.size(-1), rows = n == 0 ? 0 : s.numel() / n;
  const float *ps = s.data_ptr(), *pd = dout.data_ptr();
  float* po = out.data_ptr();
  for_each_row_parallel(rows, s.numel(), [&](int64_t r) {
    softmax_backward_row(ps + r * n, pd + r * n, po + r * n, n, scale_mul, scale_div);
  });
  return out;
}

}  // namespace qkv::raw
