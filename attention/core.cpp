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

Tensor sliding_window_mask(int64_t T_q, int64_t T_k, int64_t window) {
  check(window >= 1, "sliding_window_mask", "a window of at least 1, got ", window);
  // Causal (j <= i') and recent (j > i' - window): the band of the last `window` diagonals.
  return raw::logical_and(causal_mask(T_q, T_k),
                          raw::triu(ones({T_q, T_k}, Dtype::boolean), T_k - T_q - (window - 1)));
}

Tensor document_mask(const Tensor& doc_ids, bool causal) {
  check(doc_ids.defined() && doc_ids.dtype() == Dtype::int64 &&
            (doc_ids.dim() == 1 || doc_ids.dim() == 2),
        "document_mask", "int64 document ids of shape (T,) or (B, T), got ",
        doc_ids.defined() ? dtype_name(doc_ids.dtype()) + " " + shape_str(doc_ids.shape())
                          : std::string("undefined"));
  const int64_t B = doc_ids.dim() == 2 ? doc_ids.size(0) : 1, T = doc_ids.size(-1);
  const std::vector<int64_t> ids = raw::contiguous(doc_ids).to_vector<int64_t>();
  Tensor mask = Tensor::empty({B, 1, T, T}, Dtype::boolean);
  bool* m = mask.data_ptr<bool>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        m[(b * T + i) * T + j] =
            ids[static_cast<size_t>(b * T + i)] == ids[static_cast<size_t>(b * T + j)] &&
            (!causal || j <= i);
  return doc_ids.dim() == 1 ? raw::view(mask, {T, T}) : mask;
}

Tensor prefix_lm_mask(int64_t T, int64_t prefix) {
  check(T >= 0 && prefix >= 0 && prefix <= T, "prefix_lm_mask", "0 <= prefix <= T, got prefix ",
        prefix, " and T ", T);
  Tensor mask = Tensor::empty({T, T}, Dtype::boolean);
  bool* m = mask.data_ptr<bool>();
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j) m[i * T + j] = j <= i || j < prefix;
  return mask;
}

namespace {

// The flash path: the same attention through the tiled kernel (tensor/flash_attention.h),
// with q, k and v flattened to (blocks, T, D).
Tensor flash_path(const Tensor& q, const Tensor& k, const Tensor& v,
                  const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  const char* extra = options.mask.defined()        ? "a mask"
                      : options.dropout_p > 0       ? "dropout_p > 0"
                      : options.softcap.has_value() ? "softcap"
                      : options.sinks.defined()     ? "sinks"
                                                    : nullptr;
  check(extra == nullptr, op,
        "flash attention takes causal, window, scale, rope and ALiBi, not a mask, dropout, "
        "softcap or sinks; got ",
        extra ? extra : "", " (use the standard path)");
  check(q.dim() == k.dim() && q.dim() == v.dim(), op,
        "flash attention: q, k and v with the same number of dims, got q ", shape_str(q.shape()),
        ", k ", shape_str(k.shape()), ", v ", shape_str(v.shape()));
  for (int64_t d = 0; d + 3 < q.dim(); ++d)
    check(k.size(d) == q.size(d) && v.size(d) == q.size(d), op,
          "flash attention: q, k and v with the same leading dims (only heads may differ), got q ",
          shape_str(q.shape()), ", k ", shape_str(k.shape()), ", v ", shape_str(v.shape()));
  const int64_t T_q = q.size(-2), T_k = k.size(-2), D = q.size(-1), D_v = v.size(-1);
  raw::FlashAttentionParams p;
  p.scale = options.scale ? static_cast<float>(*options.scale)
                          : static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  p.causal = options.causal;
  p.window = options.window;
  p.alibi_slopes = options.alibi_slopes;
  p.heads = options.alibi_slopes.empty() ? 1 : q.size(-3);
  Shape out_shape = q.shape();
  out_shape.back() = D_v;
  const Tensor out = flash_attention(reshape(q, {-1, T_q, D}), reshape(k, {-1, T_k, D}),
                                     reshape(v, {-1, T_k, D_v}), p);
  return reshape(out, out_shape);
}

}  // namespace

AttentionOutput scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v, const AttentionOptions& options) {
  const char* op = "scaled_dot_product_attention";
  check(q_in.defined() && k_in.defined() && v.defined() && q_in.dim() >= 2 && k_in.dim() >= 2 &&
            v.dim() >= 2,
        op, "q, k and v of at least 2 dims (..., T, D), got q ", shape_or_undefined(q_in), ", k ",
        shape_or_undefined(k_in), ", v ", shape_or_undefined(v));
  const int64_t T_q = q_in.size(-2), T_k = k_in.size(-2), D = q_in.size(-1);
  check(k_in.size(-1) == D, op, "q and k with the same last dim D, got q ", shape_str(q_in.shape()),
        " and k ", shape_str(k_in.shape()));
  check(v.size(-2) == T_k, op, "one value per key (k and v with the same T_k), got k ",
        shape_str(k_in.shape()), " and v ", shape_str(v.shape()));
  check(options.dropout_p >= 0 && options.dropout_p < 1, op, "dropout_p in [0, 1), got ",
        options.dropout_p);
  check(options.window >= 0 && (options.window == 0 || options.causal), op,
        "a sliding window >= 0 and only with causal, got window ", options.window,
        options.causal ? "" : " without causal");
  const Tensor& mask = options.mask;
  if (mask.defined()) {
    check(mask.dim() >= 2 && (mask.size(-2) == T_q || mask.size(-2) == 1) &&
              (mask.size(-1) == T_k || mask.size(-1) == 1),
          op, "a mask that broadcasts to (..., T_q, T_k) = (..., ", T_q, ", ", T_k, "), got ",
          shape_str(mask.shape()));
    check(mask.dtype() != Dtype::int64, op, "a bool or float mask, got an int64 one");
  }
  // Grouped-query attention: fewer key/value heads (dim -3) than query heads.
  const bool grouped = q_in.dim() >= 3 && k_in.dim() == q_in.dim() && v.dim() == q_in.dim() &&
                       k_in.size(-3) != q_in.size(-3) && k_in.size(-3) != 1;
  const int64_t H = q_in.dim() >= 3 ? q_in.size(-3) : 1;
  if (grouped)
    check(H % k_in.size(-3) == 0 && v.size(-3) == k_in.size(-3), op,
          "query heads a multiple of key/value heads (dim -3), got q ", shape_str(q_in.shape()),
          ", k ", shape_str(k_in.shape()), ", v ", shape_str(v.shape()));
  if (!options.alibi_slopes.empty())
    check(q_in.dim() >= 3 && static_cast<int64_t>(options.alibi_slopes.size()) == H, op,
          "one ALiBi slope per query head, q (..., H, T_q, D) with H = ",
          options.alibi_slopes.size(), ", got q ", shape_str(q_in.shape()));
  if (options.softcap) check(*options.softcap > 0, op, "softcap > 0, got ", *options.softcap);
  if (options.sinks.defined())
    check(options.sinks.dtype() == Dtype::float32 && options.sinks.dim() == 1 &&
              options.sinks.size(0) == H && q_in.dim() >= 3,
          op, "sinks of shape (H,) for q (..., H, T_q, D), got sinks ",
          shape_str(options.sinks.shape()), " and q ", shape_str(q_in.shape()));
  if (options.rope)
    check(T_k >= T_q, op, "with rope, at least as many keys as queries (queries come last), got ",
          T_q, " queries and ", T_k, " keys");

  // RoPE turns q and k by their positions; queries sit at the end of the keys.
  const Tensor q = options.rope ? rope(q_in, T_k - T_q, options.rope_base) : q_in;
  const Tensor k = options.rope ? rope(k_in, 0, options.rope_base) : k_in;
  if (options.flash) return {flash_path(q, k, v, options), Tensor()};

  // Grouped heads: q viewed as (..., H_kv, G, T_q, D) against k, v as (..., H_kv, 1, T_k, D),
  // so each key head serves its group of G query heads by broadcasting, never copied.
  Shape grouped_q, grouped_scores, heads_scores;  // lead + (H_kv, G, T_q, D | T_k), (H, T_q, T_k)
  if (grouped) {
    const int64_t H_kv = k.size(-3);
    const Shape lead(q.shape().begin(), q.shape().end() - 3);
    grouped_q = grouped_scores = heads_scores = lead;
    for (int64_t s : {H_kv, H / H_kv, T_q}) {
      grouped_q.push_back(s);
      grouped_scores.push_back(s);
    }
    grouped_q.push_back(D);
    grouped_scores.push_back(T_k);
    for (int64_t s : {H, T_q, T_k}) heads_scores.push_back(s);
  }
  const Tensor q_g = grouped ? reshape(q, grouped_q) : q;
  const Tensor k_g = grouped ? unsqueeze(k, -3) : k;
  const Tensor v_g = grouped ? unsqueeze(v, -3) : v;

  // scores = q k^T / sqrt(D)                                        (..., T_q, T_k)
  Tensor scores = matmul(q_g, transpose(k_g, -2, -1));
  if (grouped) scores = reshape(scores, heads_scores);
  const float scale_mul = options.scale ? static_cast<float>(*options.scale) : 1.0f;
  const float scale_div =
      options.scale ? 1.0f : static_cast<float>(std::sqrt(static_cast<double>(D)));

  Tensor weights;
  if (options.causal && !mask.defined() && options.window == 0 && options.alibi_slopes.empty() &&
      !options.softcap && !options.sinks.defined()) {
    // The common case of language models, fused into one kernel: scale, hide the future (-inf,
    // so its weights are exactly 0), softmax. The same numbers as the general path below.
    weights = causal_softmax(scores, scale_mul, scale_div, T_k - T_q);
  } else {
    scores = options.scale ? scores * scale_mul : scores / scale_div;
    // Soft-capping: a smooth clamp to (-cap, cap); nearly the identity for small scores.
    if (options.softcap) {
      const float cap = static_cast<float>(*options.softcap);
      scores = tanh(scores / cap) * cap;
    }
    // ALiBi: a penalty growing with distance, one slope per head.
    if (!options.alibi_slopes.empty()) scores = scores + alibi_bias(options.alibi_slopes, T_q, T_k);
    // Hide what a query may not see: -inf scores become weights of exactly 0 after softmax.
    if (options.causal)
      scores = masked_fill(
          scores,
          raw::logical_not(options.window > 0 ? sliding_window_mask(T_q, T_k, options.window)
                                              : causal_mask(T_q, T_k)),
          -INFINITY);
    if (mask.defined())
      scores = mask.dtype() == Dtype::boolean
                   ? masked_fill(scores, raw::logical_not(mask), -INFINITY)
                   : scores + mask;

    // A row where every score is -inf has nothing to attend to. softmax would divide 0 by 0;
    // instead its scores are set to 0 (a harmless finite softmax) and its weights to 0 after,
    // so the output row is 0 and no gradient flows through it. Only a user mask (or a causal
    // mask with more queries than keys) can empty a row, so the check is skipped otherwise.
    Tensor empty_rows;
    const bool sinks = options.sinks.defined();
    if (!sinks && (mask.defined() || (options.causal && T_q > T_k))) {
      empty_rows = raw::eq(raw::max(scores, -1, true).values, -INFINITY);  // (..., T_q, 1)
      if (raw::max(raw::to(empty_rows, Dtype::float32)).item<float>() > 0)
        scores = masked_fill(scores, empty_rows, 0.0f);
      else
        empty_rows = Tensor();
    }
    if (sinks) {
      // The sink: one more column per row holding the head's sink logit; softmax over keys
      // and sink together, then the sink's column is dropped (its value is nothing). With a
      // sink no row is ever empty: a row whose keys are all hidden gives all its weight to it.
      Shape column = scores.shape();
      column.back() = 1;
      Tensor sink = view(options.sinks, {H, 1, 1});
      sink = expand(sink, column);
      weights = narrow(softmax(cat({scores, sink}, -1), -1), -1, 0, T_k);
    } else {
      weights = softmax(scores, -1);
    }
    if (empty_rows.defined()) weights = masked_fill(weights, empty_rows, 0.0f);
  }

  if (options.dropout_p > 0)
    weights = nn::dropout(weights, options.dropout_p, true, options.generator);

  // output = weights @ v                                            (..., T_q, D_v)
  if (!grouped) return {matmul(weights, v), weights};
  Shape out_shape = q.shape();
  out_shape.back() = v.size(-1);
  return {reshape(matmul(reshape(weights, grouped_scores), v_g), out_shape), weights};
}

}  // namespace qkv::attention
