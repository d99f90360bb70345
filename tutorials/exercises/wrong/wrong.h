// wrong.h: the typical wrong answers of every exercise (wrong/<exercise>.cpp), which the
// checker must reject; prove_exercises runs them.
#pragma once

#include "tutorials/exercises/exercises.h"

namespace qkv::exercises::wrong {

Tensor broadcast_add_aligned_left(const Tensor& a, const Tensor& b);       // 01.1
Tensor broadcast_add_shape_of_a(const Tensor& a, const Tensor& b);         // 01.1
Tensor broadcast_add_flat_modulo(const Tensor& a, const Tensor& b);        // 01.1
Tensor sum_to_shape_not_reduced(const Tensor& grad, const Shape& shape);   // 02.1
Tensor sum_to_shape_leading_only(const Tensor& grad, const Shape& shape);  // 02.1
Tensor sum_to_shape_drops_dims(const Tensor& grad, const Shape& shape);    // 02.1
MatmulGrads matmul_backward_no_transpose(const Tensor& a, const Tensor& b,
                                         const Tensor& dc);                               // 02.2
MatmulGrads matmul_backward_swapped(const Tensor& a, const Tensor& b, const Tensor& dc);  // 02.2
MatmulGrads matmul_backward_db_transposed(const Tensor& a, const Tensor& b,
                                          const Tensor& dc);                               // 02.2
Tensor softmax_rows_no_max(const Tensor& x);                                               // 07.1
Tensor softmax_rows_wrong_axis(const Tensor& x);                                           // 07.1
Tensor softmax_rows_global_sum(const Tensor& x);                                           // 07.1
Tensor attention_no_scale(const Tensor& q, const Tensor& k, const Tensor& v);              // 08.1
Tensor attention_softmax_over_queries(const Tensor& q, const Tensor& k, const Tensor& v);  // 08.1
Tensor attention_scale_by_d(const Tensor& q, const Tensor& k, const Tensor& v);            // 08.1
Tensor split_heads_no_transpose(const Tensor& x, int64_t heads);                           // 10.1
Tensor split_heads_interleaved(const Tensor& x, int64_t heads);                            // 10.1
Tensor split_heads_transposes_batch(const Tensor& x, int64_t heads);                       // 10.1
Tensor merge_heads_no_transpose(const Tensor& x);                                          // 10.2
Tensor merge_heads_interleaved(const Tensor& x);                                           // 10.2
Tensor merge_heads_wrong_transpose(const Tensor& x);                                       // 10.2
Tensor cross_attention_values_from_x(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                     const Tensor& w_k, const Tensor& w_v);  // 11.1
Tensor cross_attention_keys_from_x(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                   const Tensor& w_k, const Tensor& w_v);  // 11.1
Tensor cross_attention_no_scale(const Tensor& x, const Tensor& memory, const Tensor& w_q,
                                const Tensor& w_k, const Tensor& w_v);                      // 11.1
Tensor causal_attention_hides_diagonal(const Tensor& q, const Tensor& k, const Tensor& v);  // 12.1
Tensor causal_attention_off_by_one(const Tensor& q, const Tensor& k, const Tensor& v);      // 12.1
Tensor causal_attention_mask_after_softmax(const Tensor& q, const Tensor& k,
                                           const Tensor& v);  // 12.1
Tensor causal_attention_renormalised_missing(const Tensor& q, const Tensor& k,
                                             const Tensor& v);  // 12.2
Tensor causal_attention_renormalised_upper(const Tensor& q, const Tensor& k,
                                           const Tensor& v);  // 12.2
Tensor causal_attention_renormalised_off_by_one(const Tensor& q, const Tensor& k,
                                                const Tensor& v);       // 12.2
Tensor softmax_backward_no_sum(const Tensor& y, const Tensor& dy);      // 13.1
Tensor softmax_backward_wrong_axis(const Tensor& y, const Tensor& dy);  // 13.1
Tensor softmax_backward_missing_y(const Tensor& y, const Tensor& dy);   // 13.1
AdamWState adamw_step_decay_in_gradient(const Tensor& param, const Tensor& grad, const Tensor& m,
                                        const Tensor& v, int64_t step,
                                        const AdamWHyper& h);  // 16.1
AdamWState adamw_step_no_bias_correction(const Tensor& param, const Tensor& grad, const Tensor& m,
                                         const Tensor& v, int64_t step,
                                         const AdamWHyper& h);  // 16.1
AdamWState adamw_step_eps_inside_sqrt(const Tensor& param, const Tensor& grad, const Tensor& m,
                                      const Tensor& v, int64_t step, const AdamWHyper& h);  // 16.1
LayerNormGrads layer_norm_backward_dw_not_reduced(const Tensor& x, const Tensor& w,
                                                  const Tensor& dy);  // 18.1
LayerNormGrads layer_norm_backward_no_mean_terms(const Tensor& x, const Tensor& w,
                                                 const Tensor& dy);  // 18.1
LayerNormGrads layer_norm_backward_unbiased_var(const Tensor& x, const Tensor& w,
                                                const Tensor& dy);     // 18.1
Tensor kv_append_wrong_dim(const Tensor& cache, const Tensor& fresh);  // 19.1
Tensor kv_append_prepends(const Tensor& cache, const Tensor& fresh);   // 19.1
Tensor kv_append_forgets(const Tensor& cache, const Tensor& fresh);    // 19.1
Tensor decode_step_left_aligned_mask(const Tensor& q, const Tensor& k_cache,
                                     const Tensor& v_cache);                                 // 19.2
Tensor decode_step_no_scale(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache);  // 19.2
Tensor decode_step_last_key_only(const Tensor& q, const Tensor& k_cache,
                                 const Tensor& v_cache);                                     // 19.2
Tensor online_softmax_no_rescale(const Tensor& scores, const Tensor& v, int64_t tile);       // 21.1
Tensor online_softmax_no_max(const Tensor& scores, const Tensor& v, int64_t tile);           // 21.1
Tensor online_softmax_rescales_l_only(const Tensor& scores, const Tensor& v, int64_t tile);  // 21.1
Tensor rope_rotate_ignores_offset(const Tensor& x, int64_t offset);                          // 22.1
Tensor rope_rotate_neighbours(const Tensor& x, int64_t offset);                              // 22.1
Tensor rope_rotate_backwards(const Tensor& x, int64_t offset);                               // 22.1
void gemm_packed_kernel_accumulates(int64_t M, int64_t N, int64_t K, const float* A, const float* B,
                                    float* C);  // 24.1
void gemm_packed_kernel_drops_edges(int64_t M, int64_t N, int64_t K, const float* A, const float* B,
                                    float* C);  // 24.1
void gemm_packed_kernel_reads_b_transposed(int64_t M, int64_t N, int64_t K, const float* A,
                                           const float* B, float* C);  // 24.1

}  // namespace qkv::exercises::wrong
