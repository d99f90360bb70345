// exercises.h: the functions a learner writes, one per exercise, each in a file of its own under
// tutorials/exercises/learner/ (NN_M_name.cpp: exercise NN.M follows lesson NN). Every file
// starts as a stub that throws a qkv::Error naming the exercise; write the body, then check it:
//
//   cmake --build --preset release --target check_exercises
//   ./build/release/tutorials/exercises/check_exercises 07.1     one exercise
//   ./build/release/tutorials/exercises/check_exercises          all of them, and a summary
//
// The checker (check.h) compares your function with qkv's own on inputs no lesson prints
// (check_exercises --cases 07.1 lists them, with the mistakes each is there to catch), checks
// that it leaves its inputs as they were and, where a model trains through it, that its
// gradients are attention's. When your output is that of a known mistake (the catalogue in
// wrong/), it names the mistake. The reference solutions are in solutions/ (read them after
// trying). Write each exercise with qkv's ops (matmul, softmax, transpose, ...): the ones a
// model trains through need gradients to flow through them. An exercise may call the exercises
// before it, never one after it.
//
// Shapes: B batch, H heads, T positions (T_q queries, T_k keys), D head size, C = H * D.
#pragma once

#include <cstdint>
#include <functional>

#include "attention/all.h"

namespace qkv::exercises {

// Throws the stubs' error: "exercise <id> (<name>): not implemented yet: <what to write>".
[[noreturn]] void not_implemented(const char* id, const char* name, const char* what);

struct MatmulGrads {
  Tensor da, db;
};
struct LayerNormGrads {
  Tensor dx, dw, db;
};
struct AdamWState {
  Tensor param, m, v;  // after the step
};
struct AdamWHyper {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
};
struct RMSNormGrads {
  Tensor dx, dw;
};
// The weights of one transformer block's two LayerNorms and MLP (15.1), as nn::LayerNorm and
// nn::Linear hold them: a Linear computes x W^T + b.
struct BlockWeights {
  Tensor ln1_w, ln1_b, ln2_w, ln2_b;  // (C,) each
  Tensor fc_w, fc_b;                  // (4C, C), (4C,)
  Tensor proj_w, proj_b;              // (C, 4C), (C,)
};
// The attention sublayer of a block (15.1), given: (B, T, C) -> (B, T, C).
using Sublayer = std::function<Tensor(const Tensor&)>;

// The learner's functions (learner/), and under the same names the reference solutions
// (solutions/, namespace solution).
#define QKV_EXERCISE_FUNCTIONS                                                                     \
  /* 01.1 */ Tensor broadcast_add(const Tensor& a, const Tensor& b);                               \
  /* 02.1 */ Tensor sum_to_shape(const Tensor& grad, const Shape& shape);                          \
  /* 02.2 */ MatmulGrads matmul_backward(const Tensor& a, const Tensor& b, const Tensor& dc);      \
  /* 07.1 */ Tensor softmax_rows(const Tensor& x);                                                 \
  /* 08.1 */ Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v);                  \
  /* 10.1 */ Tensor split_heads(const Tensor& x, int64_t heads);                                   \
  /* 10.2 */ Tensor merge_heads(const Tensor& x);                                                  \
  /* 11.1 */ Tensor cross_attention(const Tensor& x, const Tensor& memory, const Tensor& w_q,      \
                                    const Tensor& w_k, const Tensor& w_v);                         \
  /* 12.1 */ Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v);           \
  /* 12.2 */ Tensor causal_attention_renormalised(const Tensor& q, const Tensor& k,                \
                                                  const Tensor& v);                                \
  /* 13.1 */ Tensor softmax_backward(const Tensor& y, const Tensor& dy);                           \
  /* 16.1 */ AdamWState adamw_step(const Tensor& param, const Tensor& grad, const Tensor& m,       \
                                   const Tensor& v, int64_t step, const AdamWHyper& h);            \
  /* 18.1 */ LayerNormGrads layer_norm_backward(const Tensor& x, const Tensor& w,                  \
                                                const Tensor& dy);                                 \
  /* 19.1 */ Tensor kv_append(const Tensor& cache, const Tensor& fresh);                           \
  /* 19.2 */ Tensor decode_step(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache);    \
  /* 21.1 */ Tensor online_softmax_attention(const Tensor& scores, const Tensor& v, int64_t tile); \
  /* 22.1 */ Tensor rope_rotate(const Tensor& x, int64_t offset);                                  \
  /* 24.1 */ void gemm_packed_kernel(int64_t M, int64_t N, int64_t K, const float* A,              \
                                     const float* B, float* C);                                    \
  /* 05.1 */ Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets);           \
  /* 15.1 */ Tensor block_forward(const Tensor& x, const BlockWeights& w, const Sublayer& attn);   \
  /* 18.2 */ Tensor gelu_backward(const Tensor& x, const Tensor& dy);                              \
  /* 19.3 */ Tensor repeat_kv(const Tensor& kv, int64_t groups);                                   \
  /* 23.1 */ RMSNormGrads rms_norm_backward(const Tensor& x, const Tensor& w, const Tensor& dy);   \
  /* 25.1 */ Tensor bpe_merge(const Tensor& ids, int64_t a, int64_t b, int64_t new_id);

QKV_EXERCISE_FUNCTIONS

namespace solution {
QKV_EXERCISE_FUNCTIONS
}  // namespace solution

}  // namespace qkv::exercises
