// ops_norm.cpp: layer normalisation as one fused op, forward and backward side by side.
//
// Per row x of length C (the last dim):
//   mean = sum(x) / C     var = sum((x - mean)^2) / C     rstd = 1 / sqrt(var + eps)
//   norm = (x - mean) * rstd                           y = norm * w + b
// Backward, with dnorm = dy * w (the derivation in llm.c's layernorm_backward):
//   db = sum over rows of dy            dw = sum over rows of dy * norm
//   dx = rstd * (dnorm - mean(dnorm) - norm * mean(dnorm * norm))
// Composed from primitives this is ~8 passes forward and ~15 backward, each allocating; fused it
// is one of each. tests/autograd/test_fused.cpp holds it to the composed version and gradcheck.
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/thread_pool.h"
#include "tensor/simd/lanes.h"
#include "tensor/view.h"

namespace qkv {
namespace {

// Rows go to threads in blocks of kRowBlock (whole blocks, so that a block's partial sums in
// the backward are computed by one thread, in row order). Below kParallelElements one thread
// does it all.
constexpr int64_t kRowBlock = 16;

template <class Body>
void for_row_blocks(int64_t rows, int64_t C, Body body) {
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  parallel_ranges(blocks, rows * C >= kParallelElements, [&](int64_t b0, int64_t b1) {
    body(b0 * kRowBlock, std::min(rows, b1 * kRowBlock));
  });
}

// The forward, row by row: y = (x - mean) * rstd * w + b, with each row's mean and rstd
// written out for the backward.
void layer_norm_rows(const Tensor& x, const Tensor& w, const Tensor& b, double eps, int64_t C,
                     Tensor& y, Tensor& mean, Tensor& rstd) {
  const int64_t rows = mean.numel();
  const float *px = x.data_ptr(), *pw = w.data_ptr(), *pb = b.data_ptr();
  float *py = y.data_ptr(), *pmean = mean.data_ptr(), *prstd = rstd.data_ptr();
  // Rows are independent: split them over the thread pool (for enough work to pay for it).
  for_row_blocks(rows, C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = px + r * C;
      // The row's moments in double, as the composed version's mean and var.
      const double s = detail::lane_sum<double>(C, [&](auto at) { return detail::widen(at(xr)); });
      const float m = static_cast<float>(s / static_cast<double>(C));
      const double ss = detail::lane_sum<double>(C, [&](auto at) {
        const auto d = detail::widen(at(xr) - m);
        return d * d;
      });
      const float var = static_cast<float>(ss / static_cast<double>(C));
      const float rs = 1.0f / std::sqrt(var + static_cast<float>(eps));
      pmean[r] = m;
      prstd[r] = rs;
      float* yr = py + r * C;
      for (int64_t j = 0; j < C; ++j) yr[j] = (xr[j] - m) * rs * pw[j] + pb[j];
    }
  });
}

// The backward, with norm = (x - mean) * rstd and dnorm = dy * w:
//   dx = (dnorm - mean(dnorm) - norm * mean(dnorm * norm)) * rstd
//   dw = sum over rows of dy * norm          db = sum over rows of dy
Grads layer_norm_backward(const Tensor& x, const Tensor& w, const Tensor& mean, const Tensor& rstd,
                          const Tensor& dy_in, int64_t C) {
  const int64_t rows = mean.numel();
  const Tensor dy = raw::contiguous(dy_in);
  Tensor dx = Tensor::empty(dy.shape()), dw = zeros({C}), db = zeros({C});
  const float *px = x.data_ptr(), *pw = w.data_ptr(), *pdy = dy.data_ptr();
  const float *pmean = mean.data_ptr(), *prstd = rstd.data_ptr();
  float *pdx = dx.data_ptr(), *pdw = dw.data_ptr(), *pdb = db.data_ptr();
  // dx is per row; dw and db sum over rows. Each block of kRowBlock rows sums its own partial
  // dw, db (rows in order), and the partials are added in block order: the same sums whatever
  // the number of threads.
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  std::vector<float> partial(static_cast<size_t>(blocks * 2 * C), 0.0f);
  for_row_blocks(rows, C, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      float* pdw_part = partial.data() + (r / kRowBlock) * 2 * C;
      float* pdb_part = pdw_part + C;
      const float* xr = px + r * C;
      const float* dyr = pdy + r * C;
      const float m = pmean[r], rs = prstd[r];
      // Two row means: of dnorm, and of dnorm * norm.
      const float dnorm_mean =
          detail::lane_sum<float>(C, [&](auto at) { return at(dyr) * at(pw); }) /
          static_cast<float>(C);
      const float dnorm_norm_mean =
          detail::lane_sum<float>(C,
                                  [&](auto at) { return at(dyr) * at(pw) * ((at(xr) - m) * rs); }) /
          static_cast<float>(C);
      for (int64_t j = 0; j < C; ++j) {
        pdb_part[j] += dyr[j];
        pdw_part[j] += dyr[j] * ((xr[j] - m) * rs);
      }
      float* dxr = pdx + r * C;
      for (int64_t j = 0; j < C; ++j) {
        const float norm = (xr[j] - m) * rs;
        const float dnorm = dyr[j] * pw[j];
        dxr[j] = (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rs;
      }
    }
  });
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* part = partial.data() + blk * 2 * C;
    for (int64_t j = 0; j < C; ++j) {
      pdw[j] += part[j];
      pdb[j] += part[C + j];
    }
  }
  return {dx, dw, db};
}

}  // namespace

Tensor layer_norm(const Tensor& x_in, const Tensor& weight, const Tensor& bias, double eps) {
  check(x_in.defined() && x_in.dtype() == Dtype::float32 && x_in.dim() >= 1, "layer_norm",
        "a float32 input of at least 1 dim, got ", shape_of(x_in, "an undefined tensor"));
  const int64_t C = x_in.size(-1);
  check(
      weight.defined() && bias.defined() && weight.shape() == Shape{C} && bias.shape() == Shape{C},
      "layer_norm", "weight and bias of shape (", C, ",), got ", shape_of(weight), " and ",
      shape_of(bias));
  check(eps > 0, "layer_norm", "eps > 0, got ", eps);
  const Tensor x = raw::contiguous(x_in), w = raw::contiguous(weight), b = raw::contiguous(bias);
  const int64_t rows = C == 0 ? 0 : x.numel() / C;
  Tensor y = Tensor::empty(x.shape()), mean = Tensor::empty({rows}), rstd = Tensor::empty({rows});
  layer_norm_rows(x, w, b, eps, C, y, mean, rstd);
  return record("NativeLayerNormBackward0", y, {x_in, weight, bias},
                [x = SavedTensor(x), w = SavedTensor(w), mean, rstd, C](const Tensor& dy) {
                  return layer_norm_backward(x.get(), w.get(), mean, rstd, dy, C);
                });
}

}  // namespace qkv
