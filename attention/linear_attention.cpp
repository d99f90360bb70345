// linear_attention.cpp: the parallel and the recurrent form (see linear_attention.h), both
// composed from differentiable primitives.
#include "attention/linear_attention.h"

namespace qkv::attention {

Tensor elu_feature_map(const Tensor& x) {
  // exp of min(x, 0): the unused branch never overflows, so its (zero) gradient stays finite.
  return where(raw::gt(x, 0.0f), x + 1.0f, exp(clamp(x, std::nullopt, 0.0f)));
}

namespace {

Tensor parallel_form(const Tensor& fq, const Tensor& fk, const Tensor& v, bool causal,
                     const Tensor& gates) {
  const int64_t T = fq.size(-2);
  if (!causal) {  // phi(q) (phi(k)^T v) / phi(q) . sum_j phi(k_j): linear in T
    const Tensor kv = matmul(transpose(fk, -2, -1), v);  // (..., D, D_v)
    const Tensor z = sum(fk, -2, true);                  // (..., 1, D)
    return matmul(fq, kv) / sum(fq * z, -1, true);
  }
  Tensor a = matmul(fq, transpose(fk, -2, -1));  // (..., T, T): phi(q_i) . phi(k_j)
  const Tensor hidden = raw::logical_not(causal_mask(T));
  if (gates.defined()) {
    // G_i = sum_{l<=i} log g_l as a product with an upper-triangular matrix of ones, then the
    // decay e^(G_i - G_j) for j <= i (the future masked to -inf before exp: e^-inf = 0).
    const Tensor upper = raw::triu(ones({T, T}), 0);
    const Tensor G = matmul(unsqueeze(log(gates), -2), upper);  // (..., 1, T)
    const Tensor diff = transpose(G, -2, -1) - G;               // (..., T, T): G_i - G_j
    a = a * exp(masked_fill(diff, hidden, -INFINITY));
  } else {
    a = masked_fill(a, hidden, 0.0f);
  }
  return matmul(a, v) / sum(a, -1, true);
}

Tensor recurrent_form(const Tensor& fq, const Tensor& fk, const Tensor& v, const Tensor& gates) {
  const int64_t T = fq.size(-2);
  Tensor S, z;  // (..., D, D_v) and (..., 1, D): the state
  std::vector<Tensor> outputs;
  for (int64_t t = 0; t < T; ++t) {
    const Tensor q_t = narrow(fq, -2, t, 1), k_t = narrow(fk, -2, t, 1), v_t = narrow(v, -2, t, 1);
    const Tensor update = matmul(transpose(k_t, -2, -1), v_t);  // phi(k_t) v_t^T
    if (!S.defined()) {
      S = update;
      z = k_t;
    } else if (gates.defined()) {
      const Tensor g_t = unsqueeze(narrow(gates, -1, t, 1), -1);  // (..., 1, 1)
      S = g_t * S + update;
      z = g_t * z + k_t;
    } else {
      S = S + update;
      z = z + k_t;
    }
    outputs.push_back(matmul(q_t, S) / sum(q_t * z, -1, true));  // (..., 1, D_v)
  }
  return cat(outputs, -2);
}

}  // namespace

Tensor linear_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                        const LinearAttentionOptions& options, const Tensor& gates) {
  const bool causal = options.causal;
  const LinearForm form = options.form;
  const char* op = "linear_attention";
  check(q.defined() && k.defined() && v.defined() && q.dim() >= 2 && q.shape() == k.shape() &&
            v.dim() == q.dim() && v.size(-2) == q.size(-2) && q.size(-2) >= 1,
        op, "q and k of one shape (..., T, D) and v (..., T, D_v), got q ", shape_of(q), ", k ",
        shape_of(k), ", v ", shape_of(v));
  check(causal || (form == LinearForm::parallel && !gates.defined()), op,
        "the recurrent form and gates only with causal");
  if (gates.defined()) {
    Shape expected(q.shape().begin(), q.shape().end() - 1);
    check(gates.shape() == expected, op, "gates of shape ", expected, ", got ", gates.shape());
  }
  const Tensor fq = elu_feature_map(q), fk = elu_feature_map(k);
  return form == LinearForm::parallel ? parallel_form(fq, fk, v, causal, gates)
                                      : recurrent_form(fq, fk, v, gates);
}

LinearAttention::LinearAttention(int64_t c, int64_t h, const LinearAttentionOptions& options,
                                 Generator* gen)
    : d_model(c),
      num_heads(h),
      head_dim(h > 0 ? c / h : 0),
      causal(options.causal),
      gated(options.gated),
      form(options.form) {
  check(h > 0 && c > 0 && c % h == 0, "LinearAttention", "d_model (", c,
        ") divisible by num_heads (", h, ")");
  check(causal || !gated, "LinearAttention", "gates only with causal");
  q = register_module("q", std::make_shared<nn::Linear>(c, c, true, gen));
  k = register_module("k", std::make_shared<nn::Linear>(c, c, true, gen));
  v = register_module("v", std::make_shared<nn::Linear>(c, c, true, gen));
  o = register_module("o", std::make_shared<nn::Linear>(c, c, true, gen));
  if (gated) g = register_module("g", std::make_shared<nn::Linear>(c, h, true, gen));
}

Tensor LinearAttention::forward(const Tensor& x) {
  check(x.defined() && x.dim() == 3 && x.size(2) == d_model, "LinearAttention",
        "an input (B, T, C) with C = d_model = ", d_model, ", got ", shape_of(x));
  const int64_t H = num_heads;  // heads of head_dim each: (B, T, C) -> (B, H, T, D)
  const Tensor gates = gated ? transpose(sigmoid(g->forward(x)), 1, 2) : Tensor();  // (B, H, T)
  const Tensor heads =
      linear_attention(split_heads(q->forward(x), H), split_heads(k->forward(x), H),
                       split_heads(v->forward(x), H), {.causal = causal, .form = form}, gates);
  return o->forward(merge_heads(heads));  // (B, H, T, D) -> (B, T, C)
}

}  // namespace qkv::attention
