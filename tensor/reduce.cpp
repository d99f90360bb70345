// reduce.cpp: every reduction is one fold over the rows that for_each_row hands out.
#include "tensor/reduce.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/iterate.h"
#include "tensor/thread_pool.h"
#include "tensor/simd/lanes.h"
#include "tensor/view.h"

namespace qkv::raw {
namespace {

Shape keepdim_shape(const Tensor& a, int64_t dim) {
  Shape s = a.shape();
  s[dim] = 1;
  return s;
}

void check_float(const Tensor& a, std::string_view op) {
  check(a.defined(), op, "a defined tensor, got an undefined one");
  check(a.dtype() == Dtype::float32, op, "a float32 tensor, got ", dtype_name(a.dtype()));
}

// out[row] = fold(x, stride, n) for each row of `a` along dim.
template <class Fold>
Tensor reduce_rows(const Tensor& a, int64_t dim_in, bool keepdim, std::string_view op, Fold fold) {
  check_float(a, op);
  if (a.dim() == 0) return reduce_rows(reshape(a, {1}), 0, false, op, fold);
  const int64_t dim = wrap_dim(dim_in, a.dim(), op);
  Tensor out = Tensor::empty(keepdim_shape(a, dim));
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  float* po = out.data_ptr();
  for_each_row(a, dim, out, [&](int64_t ia, int64_t sa, int64_t io, int64_t, int64_t n) {
    po[io] = fold(pa + ia, sa, n);
  });
  return keepdim ? out : squeeze(out, dim);
}

double row_sum(const float* x, int64_t s, int64_t n) {
  double acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += x[i * s];
  return acc;
}

// Values and first indices of the extreme (by `better`) along dim. NaN counts as the extreme,
// as in torch.max.
template <class Better>
ValuesIndices extreme(const Tensor& a, int64_t dim_in, bool keepdim, std::string_view op,
                      Better better) {
  check_float(a, op);
  if (a.dim() == 0) return extreme(reshape(a, {1}), 0, false, op, better);
  const int64_t dim = wrap_dim(dim_in, a.dim(), op);
  check(a.shape()[dim] > 0, op, "a non-empty dim to reduce, got shape ", a.shape(), " at dim ",
        dim);
  ValuesIndices r{Tensor::empty(keepdim_shape(a, dim)),
                  Tensor::empty(keepdim_shape(a, dim), Dtype::int64)};
  const float* pa = reinterpret_cast<const float*>(a.impl().storage->data());
  float* pv = r.values.data_ptr();
  int64_t* pi = r.indices.data_ptr<int64_t>();
  for_each_row(a, dim, r.values, [&](int64_t ia, int64_t sa, int64_t io, int64_t, int64_t n) {
    float best = pa[ia];
    int64_t at = 0;
    for (int64_t i = 1; i < n && !std::isnan(best); ++i) {
      const float v = pa[ia + i * sa];
      if (std::isnan(v) || better(v, best)) best = v, at = i;
    }
    pv[io] = best;
    pi[io] = at;
  });
  if (!keepdim) r = {squeeze(r.values, dim), squeeze(r.indices, dim)};
  return r;
}

Tensor flat(const Tensor& a) {
  return reshape(a, {-1});
}

}  // namespace

namespace {
// The sum over one dim of a contiguous tensor, viewed as (outer, n, inner), in double, times
// `scale` (1, or 1/n for the mean). For a middle or leading dim, blocks of up to 32 neighbouring
// columns are summed down chunks of rows, row after row, into accumulators that stay in
// registers (below); for the last dim, 8 interleaved accumulators break the chain of dependent
// additions. A large sum is shared out by output: rows of `outer` (last dim) or ranges of the
// `inner` columns (a bias gradient: the sum over every row of a (rows, C) gradient), so each
// output is still one thread's additions in the same order, and the result is the same on any
// thread count.
Tensor sum_contiguous(const Tensor& a, int64_t dim, bool keepdim, double scale) {
  const int64_t n = a.size(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= a.size(d);
  for (int64_t d = dim + 1; d < a.dim(); ++d) inner *= a.size(d);
  Tensor out = Tensor::empty(keepdim_shape(a, dim));
  const float* x = a.data_ptr();
  float* y = out.data_ptr();
  const bool large = a.numel() >= kParallelElements;
  if (inner == 1) {
    auto rows = [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        const float* row = x + o * n;
        const double acc =
            detail::lane_sum<double>(n, [&](auto at) { return detail::widen(at(row)); });
        y[o] = static_cast<float>(acc * scale);
      }
    };
    parallel_ranges(outer, large, rows);
  } else {
    // The rows go by in chunks of 64, and within a chunk each block of up to 32 columns adds
    // the chunk's rows to its running sums in one go. The block's width w is a compile-time
    // constant (std::integral_constant: 32, 8, or the last 1 to 7), so its sums stay in
    // registers for the whole chunk; the chunk is still in cache when the next block reads it.
    // One array of `inner` sums would be loaded and stored at every row instead: a load and a
    // store per element where this has one add. Every column is still summed row after row.
    constexpr int64_t kRowChunk = 64;
    auto column_block = [&](const float* rows, int64_t count, double* sums, auto w) {
      double acc[32];
      for (int64_t j = 0; j < w; ++j) acc[j] = sums[j];
      for (int64_t i = 0; i < count; ++i)
        for (int64_t j = 0; j < w; ++j) acc[j] += rows[i * inner + j];
      for (int64_t j = 0; j < w; ++j) sums[j] = acc[j];
    };
    auto columns = [&](int64_t j0, int64_t j1) {
      std::vector<double> sums(static_cast<size_t>(j1 - j0));
      for (int64_t o = 0; o < outer; ++o) {
        std::fill(sums.begin(), sums.end(), 0.0);
        for (int64_t i0 = 0; i0 < n; i0 += kRowChunk) {
          const float* rows = x + (o * n + i0) * inner;
          const int64_t count = std::min(kRowChunk, n - i0);
          int64_t c = j0;
          auto block_at_c = [&](auto w) {
            column_block(rows + c, count, sums.data() + (c - j0), w);
          };
          for (; c + 32 <= j1; c += 32) block_at_c(std::integral_constant<int64_t, 32>{});
          for (; c + 8 <= j1; c += 8) block_at_c(std::integral_constant<int64_t, 8>{});
          // the last 1 to 7 columns
          if (c < j1) detail::with_constant<1, 2, 3, 4, 5, 6, 7>(j1 - c, block_at_c);
        }
        for (int64_t j = j0; j < j1; ++j)
          y[o * inner + j] = static_cast<float>(sums[static_cast<size_t>(j - j0)] * scale);
      }
    };
    // Units of 32 columns (one block above; two cache lines, so threads do not write the same
    // lines); the last unit takes the columns left over. Units of 16, each summed as two
    // blocks of 8, would halve the independent sums per row and, handed out two or one at a
    // time by parallel_ranges, have both threads' pieces end in the same lines
    // (bench/notes/2026-12-06-memory-and-threads.md).
    constexpr int64_t kUnit = 32;
    const int64_t units = std::max<int64_t>(inner / kUnit, 1);
    parallel_ranges(units, large, [&](int64_t u0, int64_t u1) {
      columns(u0 * kUnit, u1 == units ? inner : u1 * kUnit);
    });
  }
  return keepdim ? out : squeeze(out, dim);
}
}  // namespace

Tensor sum(const Tensor& a, int64_t dim, bool keepdim) {
  if (a.defined() && a.dtype() == Dtype::float32 && a.dim() > 0 && a.is_contiguous())
    return sum_contiguous(a, wrap_dim(dim, a.dim(), "sum"), keepdim, 1.0);
  return reduce_rows(a, dim, keepdim, "sum", [](const float* x, int64_t s, int64_t n) {
    return static_cast<float>(row_sum(x, s, n));
  });
}
Tensor sum(const Tensor& a) {
  return sum(flat(a), 0, false);
}

Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  check_float(a, "sum");
  std::vector<int64_t> ds;
  for (int64_t d : dims) ds.push_back(wrap_dim(d, a.dim(), "sum"));
  std::sort(ds.begin(), ds.end());
  check(std::adjacent_find(ds.begin(), ds.end()) == ds.end(), "sum", "distinct dims, got ",
        Shape(dims));
  Tensor out = a;
  for (int64_t d : ds) out = sum(out, d, true);
  if (!keepdim)
    for (auto it = ds.rbegin(); it != ds.rend(); ++it) out = squeeze(out, *it);
  return out;
}

Tensor mean(const Tensor& a, int64_t dim, bool keepdim) {
  if (a.defined() && a.dtype() == Dtype::float32 && a.dim() > 0 && a.is_contiguous()) {
    const int64_t d = wrap_dim(dim, a.dim(), "mean");
    return sum_contiguous(a, d, keepdim, 1.0 / static_cast<double>(a.size(d)));
  }
  return reduce_rows(a, dim, keepdim, "mean", [](const float* x, int64_t s, int64_t n) {
    return static_cast<float>(row_sum(x, s, n) / static_cast<double>(n));
  });
}
Tensor mean(const Tensor& a) {
  return mean(flat(a), 0, false);
}

Tensor var(const Tensor& a, int64_t dim, bool keepdim, int64_t correction) {
  return reduce_rows(a, dim, keepdim, "var", [correction](const float* x, int64_t s, int64_t n) {
    const double m = row_sum(x, s, n) / static_cast<double>(n);
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += (x[i * s] - m) * (x[i * s] - m);
    const int64_t dof = n - correction;  // n - 1 for the unbiased estimate
    return dof > 0 ? static_cast<float>(ss / static_cast<double>(dof)) : NAN;
  });
}
Tensor var(const Tensor& a, int64_t correction) {
  return var(flat(a), 0, false, correction);
}

ValuesIndices max(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme(a, dim, keepdim, "max", [](float v, float best) { return v > best; });
}
ValuesIndices min(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme(a, dim, keepdim, "min", [](float v, float best) { return v < best; });
}
Tensor max(const Tensor& a) {
  return max(flat(a), 0, false).values;
}
Tensor min(const Tensor& a) {
  return min(flat(a), 0, false).values;
}
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim) {
  return max(a, dim, keepdim).indices;
}
Tensor argmax(const Tensor& a) {
  return max(flat(a), 0, false).indices;
}

Tensor sum_to_shape(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  const int64_t lead = a.dim() - static_cast<int64_t>(shape.size());
  check(lead >= 0, "sum_to_shape", "a shape that broadcasts to ", a.shape(), ", got ", shape);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[d - lead] == 1 && a.shape()[d] != 1) {
      dims.push_back(d);
    } else {
      check(shape[d - lead] == a.shape()[d], "sum_to_shape", "a shape that broadcasts to ",
            a.shape(), ", got ", shape);
    }
  }
  Tensor out = dims.empty() ? a : sum(a, dims, true);
  return reshape(out, shape);  // drops the leading dims kept by keepdim
}

}  // namespace qkv::raw
