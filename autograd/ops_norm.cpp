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
#include <cmath>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/view.h"

namespace qkv {

Tensor layer_norm(const Tensor& x_in, const Tensor& weight, const Tensor& bias, double eps) {
  check(x_in.defined() && x_in.dtype() == Dtype::float32 && x_in.dim() >= 1, "layer_norm",
        "a float32 input of at least 1 dim, got ",
        x_in.defined() ? shape_str(x_in.shape()) : "an undefined tensor");
  const int64_t C = x_in.size(-1);
  check(
      weight.defined() && bias.defined() && weight.shape() == Shape{C} && bias.shape() == Shape{C},
      "layer_norm", "weight and bias of shape (", C, ",), got ",
      weight.defined() ? shape_str(weight.shape()) : "undefined", " and ",
      bias.defined() ? shape_str(bias.shape()) : "undefined");
  check(eps > 0, "layer_norm", "eps > 0, got ", eps);
  const Tensor x = raw::contiguous(x_in), w = raw::contiguous(weight), b = raw::contiguous(bias);
  const int64_t rows = C == 0 ? 0 : x.numel() / C;
  Tensor y = Tensor::empty(x.shape()), mean = Tensor::empty({rows}), rstd = Tensor::empty({rows});
  const float *px = x.data_ptr(), *pw = w.data_ptr(), *pb = b.data_ptr();
  float *py = y.data_ptr(), *pmean = mean.data_ptr(), *prstd = rstd.data_ptr();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = px + r * C;
    double s = 0;  // the row's moments in double, as the composed version's mean and var
    for (int64_t j = 0; j < C; ++j) s += xr[j];
    const float m = static_cast<float>(s / static_cast<double>(C));
    double ss = 0;
    for (int64_t j = 0; j < C; ++j) {
      const double d = static_cast<double>(xr[j] - m);
      ss += d * d;
    }
    const float var = static_cast<float>(ss / static_cast<double>(C));
    const float rs = 1.0f / std::sqrt(var + static_cast<float>(eps));
    pmean[r] = m;
    prstd[r] = rs;
    float* yr = py + r * C;
    for (int64_t j = 0; j < C; ++j) yr[j] = (xr[j] - m) * rs * pw[j] + pb[j];
  }
  return record(
      "NativeLayerNormBackward0", y, {x_in, weight, bias},
      [x = SavedTensor(x), w = SavedTensor(w), mean, rstd, C, rows](const Tensor& dy_in) -> Grads {
        const Tensor dy = raw::contiguous(dy_in);
        Tensor dx = Tensor::empty(dy.shape()), dw = zeros({C}), db = zeros({C});
        const float *px = x.get().data_ptr(), *pw = w.get().data_ptr(), *pdy = dy.data_ptr();
        const float *pmean = mean.data_ptr(), *prstd = rstd.data_ptr();
        float *pdx = dx.data_ptr(), *pdw = dw.data_ptr(), *pdb = db.data_ptr();
        for (int64_t r = 0; r < rows; ++r) {
          const float* xr = px + r * C;
          const float* dyr = pdy + r * C;
          const float m = pmean[r], rs = prstd[r];
          // Two row means: of dnorm, and of dnorm * norm.
          float dnorm_mean = 0, dnorm_norm_mean = 0;
          for (int64_t j = 0; j < C; ++j) {
            const float norm = (xr[j] - m) * rs;
            const float dnorm = dyr[j] * pw[j];
            dnorm_mean += dnorm;
            dnorm_norm_mean += dnorm * norm;
            pdb[j] += dyr[j];
            pdw[j] += dyr[j] * norm;
          }
          dnorm_mean /= static_cast<float>(C);
          dnorm_norm_mean /= static_cast<float>(C);
          float* dxr = pdx + r * C;
          for (int64_t j = 0; j < C; ++j) {
            const float norm = (xr[j] - m) * rs;
            const float dnorm = dyr[j] * pw[j];
            dxr[j] = (dnorm - dnorm_mean - norm * dnorm_norm_mean) * rs;
          }
        }
        return {dx, dw, db};
      });
}

}  // namespace qkv
