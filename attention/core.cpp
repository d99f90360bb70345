// core.cpp: scaled dot-product attention, composed from differentiable primitives, so its
// backward is the chain of theirs (matmul, masked_fill, softmax, matmul) and the lesson is the
// forward pass itself. See core.h for the formula.
#include "attention/core.h"

#include <cmath>

namespace qkv::attention {
namespace {

std::string shape_or_undefined(const Tensor& t) {
  return t.defined() ? shape_str(t.shape()) : "undefined";
}

}  // namespace

Tensor causal_mask(int64_t T_q, int64_t T_k) {
  check(T_q >= 0 && T_k >= 0, "causal_mask", "sizes >= 0, got ", T_q, " and ", T_k);
  // tril with diagonal T_k - T_q keeps j <= i + (T_k - T_q).
  return raw::tril(ones({T_q, T_k}, Dtype::boolean), T_k - T_q);
}

Tensor padding_mask(const Tensor& lengths, int64_t T) {
  check(lengths.defined() && lengths.dtype() == Dtype::int64 && lengths.dim() == 1, "padding_mask",
        "int64 lengths of shape (B,), got ",
        lengths.defined() ? dtype_name(lengths.dtype()) + " " + shape_str(lengths.shape())
                          : std::string("undefined"));
  const int64_t B = lengths.size(0);
  Tensor mask = Tensor::empty({B, 1, 1, T}, Dtype::boolean);
  bool* m = mask.data_ptr<bool>();
  const auto len = lengths.to_vector<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    check(len[static_cast<size_t>(b)] >= 0 && len[static_cast<size_t>(b)] <= T, "padding_mask",
          "lengths in [0, ", T, "], got ", len[static_cast<size_t>(b)], " for sequence ", b);
    for (int64_t j = 0; j < T; ++j) m[b * T + j] = j < len[static_cast<size_t>(b)];
  }
  return mask;
}

Tensor sliding_window_mask(int64_t T, int64_t window) {
  check(window >= 1, "sliding_window_mask", "a window of at least 1, got ", window);
  // Causal (j <= i) and recent (j > i - window): the band of the last `window` diagonals.
  const Tensor all = ones({T, T}, Dtype::boolean);
  return raw::logical_and(raw::tril(all, 0), raw::triu(all, -(window - 1)));
}

AttentionOutput scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                             const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  check(q.defined() && k.defined() && v.defined() && q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2,
        op, "q, k and v of at least 2 dims (..., T, D), got q ", shape_or_undefined(q), ", k ",
        shape_or_undefined(k), ", v ", shape_or_undefined(v));
  const int64_t T_q = q.size(-2), T_k = k.size(-2), D = q.size(-1);
  check(k.size(-1) == D, op, "q and k with the same last dim D, got q ", shape_str(q.shape()),
        " and k ", shape_str(k.shape()));
  check(v.size(-2) == T_k, op, "one value per key (k and v with the same T_k), got k ",
        shape_str(k.shape()), " and v ", shape_str(v.shape()));
  check(options.dropout_p >= 0 && options.dropout_p < 1, op, "dropout_p in [0, 1), got ",
        options.dropout_p);
  const Tensor& mask = options.mask;
  if (mask.defined()) {
    check(mask.dim() >= 2 && (mask.size(-2) == T_q || mask.size(-2) == 1) &&
              (mask.size(-1) == T_k || mask.size(-1) == 1),
          op, "a mask that broadcasts to (..., T_q, T_k) = (..., ", T_q, ", ", T_k, "), got ",
          shape_str(mask.shape()));
    check(mask.dtype() != Dtype::int64, op, "a bool or float mask, got an int64 one");
  }

  // scores = q k^T / sqrt(D)                                        (..., T_q, T_k)
  Tensor scores = matmul(q, transpose(k, -2, -1));
  const float scale_mul = options.scale ? static_cast<float>(*options.scale) : 1.0f;
  const float scale_div =
      options.scale ? 1.0f : static_cast<float>(std::sqrt(static_cast<double>(D)));

  Tensor weights;
  if (options.causal && !mask.defined()) {
    // The common case of language models, fused into one kernel: scale, hide the future (-inf,
    // so its weights are exactly 0), softmax. The same numbers as the general path below.
    weights = causal_softmax(scores, scale_mul, scale_div, T_k - T_q);
  } else {
    scores = options.scale ? scores * scale_mul : scores / scale_div;
    // Hide what a query may not see: -inf scores become weights of exactly 0 after softmax.
    if (options.causal)
      scores = masked_fill(scores, raw::logical_not(causal_mask(T_q, T_k)), -INFINITY);
    if (mask.defined())
      scores = mask.dtype() == Dtype::boolean
                   ? masked_fill(scores, raw::logical_not(mask), -INFINITY)
                   : scores + mask;

    // A row where every score is -inf has nothing to attend to. softmax would divide 0 by 0;
    // instead its scores are set to 0 (a harmless finite softmax) and its weights to 0 after,
    // so the output row is 0 and no gradient flows through it. Only a user mask (or a causal
    // mask with more queries than keys) can empty a row, so the check is skipped otherwise.
    Tensor empty_rows;
    if (mask.defined() || (options.causal && T_q > T_k)) {
      empty_rows = raw::eq(raw::max(scores, -1, true).values, -INFINITY);  // (..., T_q, 1)
      if (raw::max(raw::to(empty_rows, Dtype::float32)).item<float>() > 0)
        scores = masked_fill(scores, empty_rows, 0.0f);
      else
        empty_rows = Tensor();
    }
    weights = softmax(scores, -1);
    if (empty_rows.defined()) weights = masked_fill(weights, empty_rows, 0.0f);
  }

  if (options.dropout_p > 0)
    weights = nn::dropout(weights, options.dropout_p, true, options.generator);

  // output = weights @ v                                            (..., T_q, D_v)
  return {matmul(weights, v), weights};
}

}  // namespace qkv::attention
