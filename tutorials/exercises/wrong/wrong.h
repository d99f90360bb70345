// wrong.h: the catalogue of known mistakes, one list per exercise (wrong/<exercise>.cpp): each
// a whole function with one mistake in it, what to do about it, and the line of the math it
// breaks. The checker runs them on the input a learner's function failed, to name the mistake
// made (check.h); prove_exercises proves that the checker rejects every one and names it.
#pragma once

#include "tutorials/exercises/check.h"

namespace qkv::exercises::wrong {

// t as a loop over t.data_ptr() sees it: its memory read in order, as if it were contiguous. The
// same numbers for a contiguous tensor; another order for a transposed or sliced view (never
// given an expanded one, whose memory is smaller than it). The "reads_memory" mistakes use it.
Tensor memory_order(const Tensor& t);

const Catalogue<signature::broadcast_add>& broadcast_add_mistakes();        // 01.1
const Catalogue<signature::sum_to_shape>& sum_to_shape_mistakes();          // 02.1
const Catalogue<signature::matmul_backward>& matmul_backward_mistakes();    // 02.2
const Catalogue<signature::softmax_rows>& softmax_rows_mistakes();          // 07.1
const Catalogue<signature::attention>& attention_mistakes();                // 08.1
const Catalogue<signature::split_heads>& split_heads_mistakes();            // 10.1
const Catalogue<signature::merge_heads>& merge_heads_mistakes();            // 10.2
const Catalogue<signature::cross_attention>& cross_attention_mistakes();    // 11.1
const Catalogue<signature::causal_attention>& causal_attention_mistakes();  // 12.1
const Catalogue<signature::causal_attention_renormalised>&
causal_attention_renormalised_mistakes();                                         // 12.2
const Catalogue<signature::softmax_backward>& softmax_backward_mistakes();        // 13.1
const Catalogue<signature::adamw_step>& adamw_step_mistakes();                    // 16.1
const Catalogue<signature::layer_norm_backward>& layer_norm_backward_mistakes();  // 18.1
const Catalogue<signature::kv_append>& kv_append_mistakes();                      // 19.1
const Catalogue<signature::decode_step>& decode_step_mistakes();                  // 19.2
const Catalogue<signature::online_softmax_attention>& online_softmax_mistakes();  // 21.1
const Catalogue<signature::rope_rotate>& rope_rotate_mistakes();                  // 22.1
const Catalogue<signature::gemm_packed_kernel>& gemm_packed_kernel_mistakes();    // 24.1
const Catalogue<signature::cross_entropy_backward>& cross_entropy_backward_mistakes();  // 05.1
const Catalogue<signature::block_forward>& block_forward_mistakes();                    // 15.1
const Catalogue<signature::gelu_backward>& gelu_backward_mistakes();                    // 18.2
const Catalogue<signature::repeat_kv>& repeat_kv_mistakes();                            // 19.3
const Catalogue<signature::rms_norm_backward>& rms_norm_backward_mistakes();            // 23.1
const Catalogue<signature::bpe_merge>& bpe_merge_mistakes();                            // 25.1

}  // namespace qkv::exercises::wrong
