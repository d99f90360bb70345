// core.cpp: scaled dot-product attention, composed from differentiable primitives, so its
// backward is the chain of theirs (matmul, masked_fill, softmax, matmul) and the lesson is the
// forward pass itself. See core.h for the formula.
#include "attention/core.h"

#include <cmath>

#include "tensor/fused.h"

namespace qkv::attention {
Tensor causal_mask(int64_t T_q, int64_t T_k) {
  check(T_q >= 0 && T_k >= 0, "causal_mask", "sizes >= 0, got ", T_q, " and ", T_k);
  // tril with diagonal T_k - T_q keeps j <= i + (T_k - T_q).
  return raw::tril(ones({T_q, T_k}, Dtype::boolean), T_k - T_q);
}

Tensor padding_mask(const Tensor& lengths, int64_t T) {
  check(lengths.defined() && lengths.dtype() == Dtype::int64 && lengths.dim() == 1, "padding_mask",
        "int64 lengths of shape (B,), got ", dtype_and_shape_of(lengths));
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
        dtype_and_shape_of(doc_ids));
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

// ---- the heads ------------------------------------------------------------------------------

Tensor split_heads(const Tensor& x, int64_t num_heads) {
  check(x.defined() && x.dim() == 3 && num_heads > 0 && x.size(2) % num_heads == 0, "split_heads",
        "x (B, T, C) with C divisible by num_heads = ", num_heads, ", got ", shape_of(x));
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2) / num_heads;
  return transpose(view(x, {B, T, num_heads, D}), 1, 2);  // (B, T, H, D) -> (B, H, T, D)
}

Tensor merge_heads(const Tensor& x) {
  check(x.defined() && x.dim() == 4, "merge_heads", "x (B, H, T, D), got ", shape_of(x));
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), D = x.size(3);
  return reshape(transpose(x, 1, 2), {B, T, H * D});  // (B, H, T, D) -> (B, T, H, D) -> (B, T, C)
}

// ---- scaled dot-product attention: the checks and the named steps ------------------------------
namespace {

const char* const kOp = "scaled_dot_product_attention";

// Grouped-query attention when k has heads (dim -3) that are fewer than q's, and more than 1
// (one key head broadcasts by itself).
bool has_head_groups(const Tensor& q, const Tensor& k, const Tensor& v) {
  return q.dim() >= 3 && k.dim() == q.dim() && v.dim() == q.dim() && k.size(-3) != q.size(-3) &&
         k.size(-3) != 1;
}

void check_mask(const Tensor& mask, int64_t T_q, int64_t T_k) {
  check(mask.dim() >= 2 && (mask.size(-2) == T_q || mask.size(-2) == 1) &&
            (mask.size(-1) == T_k || mask.size(-1) == 1),
        kOp, "a mask that broadcasts to (..., T_q, T_k) = (..., ", T_q, ", ", T_k, "), got ",
        mask.shape());
  check(mask.dtype() != Dtype::int64, kOp, "a bool or float mask, got an int64 one");
}

void check_inputs(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  check(q.defined() && k.defined() && v.defined() && q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2,
        kOp, "q, k and v of at least 2 dims (..., T, D), got q ", shape_of(q), ", k ", shape_of(k),
        ", v ", shape_of(v));
  const int64_t T_q = q.size(-2), T_k = k.size(-2), H = q.dim() >= 3 ? q.size(-3) : 1;
  check(k.size(-1) == q.size(-1), kOp, "q and k with the same last dim D, got q ", q.shape(),
        " and k ", k.shape());
  check(v.size(-2) == T_k, kOp, "one value per key (k and v with the same T_k), got k ", k.shape(),
        " and v ", v.shape());
  check(o.dropout_p >= 0 && o.dropout_p < 1, kOp, "dropout_p in [0, 1), got ", o.dropout_p);
  check(o.window >= 0 && (o.window == 0 || o.causal), kOp,
        "a sliding window >= 0 and only with causal, got window ", o.window,
        o.causal ? "" : " without causal");
  if (o.mask.defined()) check_mask(o.mask, T_q, T_k);
  if (has_head_groups(q, k, v))
    check(H % k.size(-3) == 0 && v.size(-3) == k.size(-3), kOp,
          "query heads a multiple of key/value heads (dim -3), got q ", q.shape(), ", k ",
          k.shape(), ", v ", v.shape());
  if (!o.alibi_slopes.empty())
    check(q.dim() >= 3 && static_cast<int64_t>(o.alibi_slopes.size()) == H, kOp,
          "one ALiBi slope per query head, q (..., H, T_q, D) with H = ", o.alibi_slopes.size(),
          ", got q ", q.shape());
  if (o.softcap) check(*o.softcap > 0, kOp, "softcap > 0, got ", *o.softcap);
  if (o.sinks.defined())
    check(o.sinks.dtype() == Dtype::float32 && o.sinks.dim() == 1 && o.sinks.size(0) == H &&
              q.dim() >= 3,
          kOp, "sinks of shape (H,) for q (..., H, T_q, D), got sinks ", o.sinks.shape(), " and q ",
          q.shape());
  if (o.rope)
    check(T_k >= T_q, kOp, "with rope, at least as many keys as queries (queries come last), got ",
          T_q, " queries and ", T_k, " keys");
}

// Grouped-query attention: q (..., H, T_q, D) against k, v (..., H_kv, T_k, D). q is viewed as
// (..., H_kv, G, T_q, D) and k, v as (..., H_kv, 1, T_k, D), so each key head serves its group
// of G = H / H_kv query heads by broadcasting, never copied; the scores are viewed back as
// (..., H, T_q, T_k) for the steps in between. Without groups every step is the identity.
class HeadGroups {
 public:
  HeadGroups(const Tensor& q, const Tensor& k, const Tensor& v)
      : grouped_(has_head_groups(q, k, v)), q_shape_(q.shape()) {
    if (grouped_) H_kv_ = k.size(-3);
  }
  Tensor queries(const Tensor& q) const {  // (..., H, T_q, D) -> (..., H_kv, G, T_q, D)
    return grouped_ ? reshape(q, grouped(q.size(-2), q.size(-1))) : q;
  }
  Tensor keys(const Tensor& k_or_v) const {  // (..., H_kv, T_k, D) -> (..., H_kv, 1, T_k, D)
    return grouped_ ? unsqueeze(k_or_v, -3) : k_or_v;
  }
  Tensor ungroup(const Tensor& t) const {  // (..., H_kv, G, T_q, X) -> (..., H, T_q, X)
    if (!grouped_) return t;
    Shape shape = q_shape_;
    shape.back() = t.size(-1);
    return reshape(t, shape);
  }
  Tensor regroup(const Tensor& t) const {  // (..., H, T_q, X) -> (..., H_kv, G, T_q, X)
    return grouped_ ? reshape(t, grouped(t.size(-2), t.size(-1))) : t;
  }

 private:
  Shape grouped(int64_t rows, int64_t cols) const {
    Shape s(q_shape_.begin(), q_shape_.end() - 3);
    const int64_t H = q_shape_[q_shape_.size() - 3];
    for (int64_t d : {H_kv_, H / H_kv_, rows, cols}) s.push_back(d);
    return s;
  }
  bool grouped_;
  Shape q_shape_;
  int64_t H_kv_ = 1;
};

// The scale as the papers write it, scores / sqrt(D), or scores * options.scale when set.
struct Scale {
  float mul, div;
  bool given;  // options.scale was set: multiply by it, else divide by sqrt(D)
};
Scale scale_of(int64_t D, const AttentionOptions& o) {
  if (o.scale) return {static_cast<float>(*o.scale), 1.0f, true};
  return {1.0f, static_cast<float>(std::sqrt(static_cast<double>(D))), false};
}
Tensor apply_scale(const Tensor& scores, Scale s) {
  return s.given ? scores * s.mul : scores / s.div;
}

// The optional modifications of the scaled scores.
Tensor modify_scores(Tensor scores, const AttentionOptions& o, int64_t T_q, int64_t T_k) {
  // Soft-capping: a smooth clamp to (-cap, cap); nearly the identity for small scores.
  if (o.softcap) {
    const float cap = static_cast<float>(*o.softcap);
    scores = tanh(scores / cap) * cap;
  }
  // ALiBi: a penalty growing with distance, one slope per head.
  if (!o.alibi_slopes.empty()) scores = scores + alibi_bias(o.alibi_slopes, T_q, T_k);
  return scores;
}

// Hide what a query may not see: -inf scores become weights of exactly 0 after softmax.
Tensor apply_mask(Tensor scores, const AttentionOptions& o, int64_t T_q, int64_t T_k) {
  if (o.causal) {
    const Tensor keep =
        o.window > 0 ? sliding_window_mask(T_q, T_k, o.window) : causal_mask(T_q, T_k);
    scores = masked_fill(scores, raw::logical_not(keep), -INFINITY);
  }
  if (o.mask.defined())
    scores = o.mask.dtype() == Dtype::boolean
                 ? masked_fill(scores, raw::logical_not(o.mask), -INFINITY)
                 : scores + o.mask;
  return scores;
}

// softmax over the keys, with the two cases the plain softmax does not cover:
// - Sinks: one more column per row holding the head's sink logit; softmax over keys and sink
//   together, then the sink's column is dropped (its value is nothing). With a sink no row is
//   ever empty: a row whose keys are all hidden gives all its weight to it.
// - A row where every score is -inf has nothing to attend to. softmax would divide 0 by 0;
//   instead its scores are set to 0 (a harmless finite softmax) and its weights to 0 after,
//   so the output row is 0 and no gradient flows through it. Only a user mask (or a causal
//   mask with more queries than keys) can empty a row, so the check is skipped otherwise.
Tensor attention_softmax(Tensor scores, const AttentionOptions& o, int64_t T_q, int64_t T_k) {
  if (o.sinks.defined()) {
    Shape column = scores.shape();
    column.back() = 1;
    const Tensor sink = expand(view(o.sinks, {o.sinks.size(0), 1, 1}), column);
    return narrow(softmax(cat({scores, sink}, -1), -1), -1, 0, T_k);
  }
  if (!o.mask.defined() && !(o.causal && T_q > T_k)) return softmax(scores, -1);
  const Tensor empty_rows = raw::eq(raw::max(scores, -1, true).values, -INFINITY);  // (.., T_q, 1)
  if (raw::max(raw::to(empty_rows, Dtype::float32)).item<float>() == 0) return softmax(scores, -1);
  return masked_fill(softmax(masked_fill(scores, empty_rows, 0.0f), -1), empty_rows, 0.0f);
}

// The flash path: the same attention through the tiled kernel (tensor/flash_attention.h),
// with q, k and v flattened to (blocks, T, D).
Tensor flash_path(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o) {
  const char* extra = o.mask.defined()        ? "a mask"
                      : o.dropout_p > 0       ? "dropout_p > 0"
                      : o.softcap.has_value() ? "softcap"
                      : o.sinks.defined()     ? "sinks"
                                              : nullptr;
  check(extra == nullptr, kOp,
        "flash attention takes causal, window, scale, rope and ALiBi, not a mask, dropout, "
        "softcap or sinks; got ",
        extra ? extra : "", " (use the standard path)");
  check(q.dim() == k.dim() && q.dim() == v.dim(), kOp,
        "flash attention: q, k and v with the same number of dims, got q ", q.shape(), ", k ",
        k.shape(), ", v ", v.shape());
  for (int64_t d = 0; d + 3 < q.dim(); ++d)
    check(k.size(d) == q.size(d) && v.size(d) == q.size(d), kOp,
          "flash attention: q, k and v with the same leading dims (only heads may differ), got q ",
          q.shape(), ", k ", k.shape(), ", v ", v.shape());
  const int64_t T_q = q.size(-2), T_k = k.size(-2), D = q.size(-1), D_v = v.size(-1);
  raw::FlashAttentionParams p;
  p.scale = o.scale ? static_cast<float>(*o.scale)
                    : static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  p.causal = o.causal;
  p.window = o.window;
  p.alibi_slopes = o.alibi_slopes;
  p.heads = o.alibi_slopes.empty() ? 1 : q.size(-3);
  Shape out_shape = q.shape();
  out_shape.back() = D_v;
  const Tensor out = flash_attention(reshape(q, {-1, T_q, D}), reshape(k, {-1, T_k, D}),
                                     reshape(v, {-1, T_k, D_v}), p);
  return reshape(out, out_shape);
}

// ---- the fast paths: fused kernels chosen when fused paths are on (tensor/fused.h) --------------

// Nothing done to the scores between the scale and the softmax but an optional causal mask:
// no user mask, window, ALiBi, soft-cap or sinks. What both fast paths need.
bool scores_plain(const AttentionOptions& o) {
  return !o.mask.defined() && o.window == 0 && o.alibi_slopes.empty() && !o.softcap &&
         !o.sinks.defined();
}

// The fused multi-head kernel (tensor/fused_attention.h) takes plain self-attention: q, k and
// v (B, H, T, D) of one shape, each read along D with unit stride (a split of a Linear's
// output is), the default scale, no dropout, and plain scores.
bool fused_kernel_applies(const Tensor& q, const Tensor& k, const Tensor& v,
                          const AttentionOptions& o) {
  return scores_plain(o) && !o.scale && o.dropout_p == 0 && q.dim() == 4 &&
         q.shape() == k.shape() && q.shape() == v.shape() && q.dtype() == Dtype::float32 &&
         k.dtype() == Dtype::float32 && v.dtype() == Dtype::float32 && q.stride(3) == 1 &&
         k.stride(3) == 1 && v.stride(3) == 1;
}

// The one-kernel causal softmax (scale, hide the future, softmax) takes a causal mask with
// nothing else done to the scores.
bool causal_softmax_applies(const AttentionOptions& o) {
  return o.causal && scores_plain(o);
}

}  // namespace

// The formula, step by step (core.h). The fast paths give the same numbers by other routes.
AttentionOutput scaled_dot_product_attention(const Tensor& q_in, const Tensor& k_in,
                                             const Tensor& v, const AttentionOptions& options) {
  check_inputs(q_in, k_in, v, options);
  const int64_t T_q = q_in.size(-2), T_k = k_in.size(-2);
  // RoPE turns q and k by their positions; the queries are the last T_q of the T_k positions.
  const Tensor q = options.rope ? rope(q_in, T_k - T_q, options.rope_base) : q_in;
  const Tensor k = options.rope ? rope(k_in, 0, options.rope_base) : k_in;
  if (options.flash) return {flash_path(q, k, v, options), Tensor()};
  if (fused_enabled() && fused_kernel_applies(q, k, v, options)) {
    const FusedAttention f = fused_attention(q, k, v, options.causal);
    return {f.output, f.weights};
  }

  const HeadGroups groups(q, k, v);  // grouped-query attention, if k has fewer heads than q
  // scores = q k^T                                                  (..., T_q, T_k)
  Tensor scores = groups.ungroup(matmul(groups.queries(q), transpose(groups.keys(k), -2, -1)));
  const Scale scale = scale_of(q.size(-1), options);  // 1 / sqrt(D), or options.scale
  Tensor weights;
  if (fused_enabled() && causal_softmax_applies(options)) {
    // The common case of language models in one kernel: the same numbers as the else branch
    // (grouped-query attention forward + backward at T = 256: 5.6 against 10.1 ms, bench/).
    weights = causal_softmax(scores, scale.mul, scale.div, T_k - T_q);
  } else {
    scores = apply_scale(scores, scale);                     // scores / sqrt(D)
    scores = modify_scores(scores, options, T_q, T_k);       // soft-cap, ALiBi
    scores = apply_mask(scores, options, T_q, T_k);          // -inf where a query may not look
    weights = attention_softmax(scores, options, T_q, T_k);  // over the keys (and sinks)
  }
  if (options.dropout_p > 0)
    weights = nn::dropout(weights, options.dropout_p, true, options.generator);
  // output = weights @ v                                            (..., T_q, D_v)
  return {groups.ungroup(matmul(groups.regroup(weights), groups.keys(v))), weights};
}

}  // namespace qkv::attention
