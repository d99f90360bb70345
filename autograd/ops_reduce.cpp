// ops_reduce.cpp: reductions, softmax, log_softmax and cross-entropy with their backwards.
//
// A reduction's backward spreads dout back over the elements that were folded: put the
// reduced dim back (unsqueeze) and stretch it (expand, a stride-0 view: no copy).
#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "tensor/factory.h"
#include "tensor/softmax.h"
#include "tensor/thread_pool.h"
#include "tensor/simd/exp.h"
#include "tensor/view.h"

namespace qkv {
namespace {

// dout of a reduction over `dims` (sorted, wrapped), back to `shape`: a view, no copy.
// (A 0-d input reduced over its "dim 0", as torch allows, gave a 0-d dout: nothing to put back.)
Tensor spread(Tensor dout, const Shape& shape, const std::vector<int64_t>& dims, bool keepdim) {
  if (!keepdim && !shape.empty())
    for (int64_t d : dims) dout = raw::unsqueeze(dout, d);
  return raw::expand(dout, shape);
}

std::vector<int64_t> wrapped(const std::vector<int64_t>& dims, int64_t rank, const char* op) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(wrap_dim(d, rank, op));
  std::sort(out.begin(), out.end());
  return out;
}

Tensor as_float(const Tensor& mask) {
  return raw::to(mask, Dtype::float32);
}

}  // namespace

// sum: out = sum_i a_i        da_i = dout
Tensor sum(const Tensor& a) {
  return record("SumBackward0", raw::sum(a), {a}, [shape = a.shape()](const Tensor& dout) -> Grads {
    return {raw::expand(dout, shape)};
  });
}
Tensor sum(const Tensor& a, int64_t dim, bool keepdim) {
  return sum(a, std::vector<int64_t>{dim}, keepdim);
}
Tensor sum(const Tensor& a, const std::vector<int64_t>& dims, bool keepdim) {
  return record("SumBackward1", raw::sum(a, dims, keepdim), {a},
                [shape = a.shape(), dims = wrapped(dims, a.dim(), "sum"), keepdim](
                    const Tensor& dout) -> Grads { return {spread(dout, shape, dims, keepdim)}; });
}

// mean: out = sum_i a_i / n   da_i = dout / n
Tensor mean(const Tensor& a) {
  return record("MeanBackward0", raw::mean(a), {a},
                [shape = a.shape(), n = a.numel()](const Tensor& dout) -> Grads {
                  return {raw::expand(raw::div(dout, static_cast<float>(n)), shape)};
                });
}
Tensor mean(const Tensor& a, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, a.dim(), "mean");
  return record("MeanBackward1", raw::mean(a, dim, keepdim), {a},
                [shape = a.shape(), d, keepdim](const Tensor& dout) -> Grads {
                  const int64_t n = shape.empty() ? 1 : shape[d];  // a 0-d input has one element
                  return {spread(raw::div(dout, static_cast<float>(n)), shape, {d}, keepdim)};
                });
}

// var: out = sum_i (a_i - m)^2 / (n - c)     da_i = dout * 2 (a_i - m) / (n - c)
// (the m's own dependence on a_i cancels: sum_i (a_i - m) = 0)
Tensor var(const Tensor& a, int64_t dim, bool keepdim, int64_t correction) {
  const int64_t d = wrap_dim(dim, a.dim(), "var");
  return record(
      "VarBackward0", raw::var(a, dim, keepdim, correction), {a},
      [a = SavedTensor(a), d, keepdim, correction](const Tensor& dout) -> Grads {
        const Tensor& x = a.get();
        const int64_t n = x.dim() == 0 ? 1 : x.shape()[d];  // a 0-d input has one element
        const float scale = 2.0f / static_cast<float>(n - correction);
        const Tensor centred = raw::sub(x, raw::mean(x, d, true));
        return {raw::mul(raw::mul(centred, scale), spread(dout, x.shape(), {d}, keepdim))};
      });
}

// max / min over everything: the gradient goes to the extreme element; ties share it equally.
Tensor max(const Tensor& a) {
  Tensor out = raw::max(a);
  return record("MaxBackward1", out, {a},
                [a = SavedTensor(a), out = SavedTensor(out)](const Tensor& dout) -> Grads {
                  const Tensor hit = as_float(raw::eq(a.get(), out.get()));
                  return {raw::mul(hit, raw::div(dout, raw::sum(hit)))};
                });
}
Tensor min(const Tensor& a) {
  Tensor out = raw::min(a);
  return record("MinBackward1", out, {a},
                [a = SavedTensor(a), out = SavedTensor(out)](const Tensor& dout) -> Grads {
                  const Tensor hit = as_float(raw::eq(a.get(), out.get()));
                  return {raw::mul(hit, raw::div(dout, raw::sum(hit)))};
                });
}

namespace {
// max/min over a dim: dout goes to the position the index names, zero elsewhere.
raw::ValuesIndices extreme_dim(const Tensor& a, int64_t dim, bool keepdim, bool is_max) {
  raw::ValuesIndices r = is_max ? raw::max(a, dim, keepdim) : raw::min(a, dim, keepdim);
  const int64_t d = wrap_dim(dim, a.dim(), is_max ? "max" : "min");
  r.values = record(
      is_max ? "MaxBackward0" : "MinBackward0", r.values, {a},
      [shape = a.shape(), idx = SavedTensor(r.indices), d, keepdim](const Tensor& dout) -> Grads {
        if (shape.empty()) return {dout};  // a 0-d input is its own extreme
        // one_hot[..., k, ...] = (k == index): positions along d against the index
        Shape along(shape.size(), 1);
        along[d] = shape[d];
        const Tensor positions = raw::view(arange(shape[d]), along);
        const Tensor index = keepdim ? idx.get() : raw::unsqueeze(idx.get(), d);
        const Tensor one_hot = as_float(raw::eq(positions, index));
        return {raw::mul(one_hot, spread(dout, shape, {d}, keepdim))};
      });
  return r;
}
}  // namespace

raw::ValuesIndices max(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_dim(a, dim, keepdim, true);
}
raw::ValuesIndices min(const Tensor& a, int64_t dim, bool keepdim) {
  return extreme_dim(a, dim, keepdim, false);
}

// softmax: s = softmax(a)      da = s * (dout - sum(dout * s))   over the softmax dim
// (the Jacobian diag(s) - s s^T applied to dout, without building it)
Tensor softmax(const Tensor& a, int64_t dim) {
  Tensor s = raw::softmax(a, dim);
  return record("SoftmaxBackward0", s, {a}, [s = SavedTensor(s), dim](const Tensor& dout) -> Grads {
    return {raw::softmax_backward(s.get(), dout, dim)};  // one fused pass per row
  });
}

// causal_softmax: s = softmax(a * mul / div) over keys j <= i + offset, 0 elsewhere (the
// attention core's causal path, fused).   da = s * (dout - sum(dout * s)) * mul / div
Tensor causal_softmax(const Tensor& a, float scale_mul, float scale_div, int64_t offset) {
  Tensor s = raw::causal_softmax(a, scale_mul, scale_div, offset);
  return record(
      "SoftmaxBackward0", s, {a},
      [s = SavedTensor(s), scale_mul, scale_div](const Tensor& dout) -> Grads {
        return {raw::causal_softmax_backward(s.get(), raw::contiguous(dout), scale_mul, scale_div)};
      });
}

// log_softmax: l = a - logsumexp(a)     da = dout - softmax(a) * sum(dout)
Tensor log_softmax(const Tensor& a, int64_t dim) {
  Tensor l = raw::log_softmax(a, dim);
  return record("LogSoftmaxBackward0", l, {a},
                [l = SavedTensor(l), dim](const Tensor& dout) -> Grads {
                  return {raw::sub(dout, raw::mul(raw::exp(l.get()), raw::sum(dout, dim, true)))};
                });
}

// cross_entropy, fused: loss = -(1/n) sum_i log_softmax(logits_i)[t_i] over the n rows whose
// target is not ignore_index.   dlogits_i = (softmax(logits_i) - onehot(t_i)) * dout / n,
// and 0 for ignored rows. No (N, V) one-hot is ever built, and no (N, V) log-probabilities
// either: each row's max m and log-sum (raw::log_sum_exp_row, log_softmax's own two numbers)
// are all the loss needs beside the target's logit, and the backward gets log_softmax's value
// x - m - log_sum from the logits again, bit for bit. 512 rows of GPT-2's 50257 logits take
// 11.3-15.0 ms forward on 2 cores of an Intel Xeon this way, and took 16.8-18.2 ms with the
// log-probabilities written out (5 alternating runs); what is left is mostly the exponentials.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
  check(logits.defined() && logits.dim() == 2 && logits.dtype() == Dtype::float32, "cross_entropy",
        "float32 logits of shape (N, V), got ", shape_of(logits, "an undefined tensor"));
  check(targets.defined() && targets.dtype() == Dtype::int64 && targets.dim() == 1 &&
            targets.size(0) == logits.size(0),
        "cross_entropy", "int64 targets of shape (", logits.size(0), ",), got ",
        targets.defined() ? shape_str(targets.shape()) + " " + dtype_name(targets.dtype())
                          : "an undefined tensor");
  const int64_t N = logits.size(0), V = logits.size(1);
  const std::vector<int64_t> t = targets.to_vector<int64_t>();
  for (int64_t i = 0; i < N; ++i)
    check(t[i] == ignore_index || (t[i] >= 0 && t[i] < V), "cross_entropy", "targets in [0, ",
          V - 1, "] or ignore_index ", ignore_index, ", got ", t[i], " at row ", i);
  const Tensor x = raw::contiguous(logits);
  const float* px = x.data_ptr();
  std::vector<raw::LogSumExp> lse(static_cast<size_t>(N));  // of the rows whose target counts
  parallel_ranges(N, N * V >= kParallelElements, [&](int64_t i0, int64_t i1) {
    std::vector<float> scratch(static_cast<size_t>(V));
    for (int64_t i = i0; i < i1; ++i)
      if (t[i] != ignore_index) lse[i] = raw::log_sum_exp_row(px + i * V, V, scratch.data());
  });
  double total = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < N; ++i)
    if (t[i] != ignore_index) total -= px[i * V + t[i]] - lse[i].max - lse[i].log_sum, ++n;
  // Every target ignored: 0 / 0 = NaN, as torch.
  Tensor loss = scalar_tensor(static_cast<float>(total / static_cast<double>(n)));
  return record("NllLossBackward0", loss, {logits},
                [x = SavedTensor(x), lse = std::move(lse), t = std::move(t), n, ignore_index,
                 V](const Tensor& dout) -> Grads {
                  // Row by row, split between the threads: softmax as e^(log_softmax), minus
                  // the one-hot, times dout / n. The exp is the vectorised one: 512 rows of
                  // GPT-2's 50257 logits take 12-14 ms so on 2 cores of an Intel Xeon, and took
                  // 56-86 ms with the C library's expf per element and the scaling on one
                  // thread.
                  Tensor d = Tensor::empty(x.get().shape());
                  const float* px = x.get().data_ptr();
                  const float scale = dout.item() / static_cast<float>(n);
                  float* pd = d.data_ptr();
                  const int64_t N = static_cast<int64_t>(t.size());
                  parallel_ranges(N, N * V >= kParallelElements, [&](int64_t i0, int64_t i1) {
                    for (int64_t i = i0; i < i1; ++i) {
                      const float* in = px + i * V;
                      float* row = pd + i * V;
                      const int64_t target = t[static_cast<size_t>(i)];
                      if (target == ignore_index) {
                        std::fill(row, row + V, 0.0f);
                        continue;
                      }
                      const raw::LogSumExp s = lse[static_cast<size_t>(i)];
                      detail::exp_into(row, V, [&](int64_t j) QKV_INLINE_LAMBDA {
                        return in[j] - s.max - s.log_sum;
                      });
                      row[target] -= 1.0f;
                      for (int64_t j = 0; j < V; ++j) row[j] *= scale;
                    }
                  });
                  return {d};
                });
}

}  // namespace qkv
