// prove_exercises: proves the checker (a ctest test, independent of the learner's files).
// Every reference solution must pass its check, and every typical wrong answer (wrong/) must be
// rejected: each is put in place of its exercise's solution, with every other exercise's
// solution beside it, so that a check that ran the reference instead of the graded function,
// or that cannot fail, is caught here.
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "tutorials/common/program.h"
#include "tutorials/exercises/check.h"
#include "tutorials/exercises/wrong/wrong.h"

using namespace qkv::exercises;

int main(int argc, char** argv) {
  lesson::Flags flags("prove_exercises",
                      "Proves the checker: every solution passes, every wrong answer is rejected.");
  return lesson::run(flags, argc, argv, [&] {
    const Functions solutions{
        solution::broadcast_add,       solution::sum_to_shape,
        solution::matmul_backward,     solution::softmax_rows,
        solution::attention,           solution::split_heads,
        solution::merge_heads,         solution::cross_attention,
        solution::causal_attention,    solution::causal_attention_renormalised,
        solution::softmax_backward,    solution::adamw_step,
        solution::layer_norm_backward, solution::kv_append,
        solution::decode_step,         solution::online_softmax_attention,
        solution::rope_rotate,         solution::gemm_packed_kernel};
    struct Wrong {
      const char* id;
      const char* name;
      std::function<void(Functions&)> put_in_place;
    };
    const std::vector<Wrong> wrongs = {
        {"01.1", "broadcast_add_aligned_left",
         [](Functions& f) { f.broadcast_add = wrong::broadcast_add_aligned_left; }},
        {"01.1", "broadcast_add_shape_of_a",
         [](Functions& f) { f.broadcast_add = wrong::broadcast_add_shape_of_a; }},
        {"01.1", "broadcast_add_flat_modulo",
         [](Functions& f) { f.broadcast_add = wrong::broadcast_add_flat_modulo; }},
        {"02.1", "sum_to_shape_not_reduced",
         [](Functions& f) { f.sum_to_shape = wrong::sum_to_shape_not_reduced; }},
        {"02.1", "sum_to_shape_leading_only",
         [](Functions& f) { f.sum_to_shape = wrong::sum_to_shape_leading_only; }},
        {"02.1", "sum_to_shape_drops_dims",
         [](Functions& f) { f.sum_to_shape = wrong::sum_to_shape_drops_dims; }},
        {"02.2", "matmul_backward_no_transpose",
         [](Functions& f) { f.matmul_backward = wrong::matmul_backward_no_transpose; }},
        {"02.2", "matmul_backward_swapped",
         [](Functions& f) { f.matmul_backward = wrong::matmul_backward_swapped; }},
        {"02.2", "matmul_backward_db_transposed",
         [](Functions& f) { f.matmul_backward = wrong::matmul_backward_db_transposed; }},
        {"07.1", "softmax_rows_no_max",
         [](Functions& f) { f.softmax_rows = wrong::softmax_rows_no_max; }},
        {"07.1", "softmax_rows_wrong_axis",
         [](Functions& f) { f.softmax_rows = wrong::softmax_rows_wrong_axis; }},
        {"07.1", "softmax_rows_global_sum",
         [](Functions& f) { f.softmax_rows = wrong::softmax_rows_global_sum; }},
        {"08.1", "attention_no_scale",
         [](Functions& f) { f.attention = wrong::attention_no_scale; }},
        {"08.1", "attention_softmax_over_queries",
         [](Functions& f) { f.attention = wrong::attention_softmax_over_queries; }},
        {"08.1", "attention_scale_by_d",
         [](Functions& f) { f.attention = wrong::attention_scale_by_d; }},
        {"10.1", "split_heads_no_transpose",
         [](Functions& f) { f.split_heads = wrong::split_heads_no_transpose; }},
        {"10.1", "split_heads_interleaved",
         [](Functions& f) { f.split_heads = wrong::split_heads_interleaved; }},
        {"10.1", "split_heads_transposes_batch",
         [](Functions& f) { f.split_heads = wrong::split_heads_transposes_batch; }},
        {"10.2", "merge_heads_no_transpose",
         [](Functions& f) { f.merge_heads = wrong::merge_heads_no_transpose; }},
        {"10.2", "merge_heads_interleaved",
         [](Functions& f) { f.merge_heads = wrong::merge_heads_interleaved; }},
        {"10.2", "merge_heads_wrong_transpose",
         [](Functions& f) { f.merge_heads = wrong::merge_heads_wrong_transpose; }},
        {"11.1", "cross_attention_values_from_x",
         [](Functions& f) { f.cross_attention = wrong::cross_attention_values_from_x; }},
        {"11.1", "cross_attention_keys_from_x",
         [](Functions& f) { f.cross_attention = wrong::cross_attention_keys_from_x; }},
        {"11.1", "cross_attention_no_scale",
         [](Functions& f) { f.cross_attention = wrong::cross_attention_no_scale; }},
        {"12.1", "causal_attention_hides_diagonal",
         [](Functions& f) { f.causal_attention = wrong::causal_attention_hides_diagonal; }},
        {"12.1", "causal_attention_off_by_one",
         [](Functions& f) { f.causal_attention = wrong::causal_attention_off_by_one; }},
        {"12.1", "causal_attention_mask_after_softmax",
         [](Functions& f) { f.causal_attention = wrong::causal_attention_mask_after_softmax; }},
        {"12.2", "causal_attention_renormalised_missing",
         [](Functions& f) {
           f.causal_attention_renormalised = wrong::causal_attention_renormalised_missing;
         }},
        {"12.2", "causal_attention_renormalised_upper",
         [](Functions& f) {
           f.causal_attention_renormalised = wrong::causal_attention_renormalised_upper;
         }},
        {"12.2", "causal_attention_renormalised_off_by_one",
         [](Functions& f) {
           f.causal_attention_renormalised = wrong::causal_attention_renormalised_off_by_one;
         }},
        {"13.1", "softmax_backward_no_sum",
         [](Functions& f) { f.softmax_backward = wrong::softmax_backward_no_sum; }},
        {"13.1", "softmax_backward_wrong_axis",
         [](Functions& f) { f.softmax_backward = wrong::softmax_backward_wrong_axis; }},
        {"13.1", "softmax_backward_missing_y",
         [](Functions& f) { f.softmax_backward = wrong::softmax_backward_missing_y; }},
        {"16.1", "adamw_step_decay_in_gradient",
         [](Functions& f) { f.adamw_step = wrong::adamw_step_decay_in_gradient; }},
        {"16.1", "adamw_step_no_bias_correction",
         [](Functions& f) { f.adamw_step = wrong::adamw_step_no_bias_correction; }},
        {"16.1", "adamw_step_eps_inside_sqrt",
         [](Functions& f) { f.adamw_step = wrong::adamw_step_eps_inside_sqrt; }},
        {"18.1", "layer_norm_backward_dw_not_reduced",
         [](Functions& f) { f.layer_norm_backward = wrong::layer_norm_backward_dw_not_reduced; }},
        {"18.1", "layer_norm_backward_no_mean_terms",
         [](Functions& f) { f.layer_norm_backward = wrong::layer_norm_backward_no_mean_terms; }},
        {"18.1", "layer_norm_backward_unbiased_var",
         [](Functions& f) { f.layer_norm_backward = wrong::layer_norm_backward_unbiased_var; }},
        {"19.1", "kv_append_wrong_dim",
         [](Functions& f) { f.kv_append = wrong::kv_append_wrong_dim; }},
        {"19.1", "kv_append_prepends",
         [](Functions& f) { f.kv_append = wrong::kv_append_prepends; }},
        {"19.1", "kv_append_forgets", [](Functions& f) { f.kv_append = wrong::kv_append_forgets; }},
        {"19.2", "decode_step_left_aligned_mask",
         [](Functions& f) { f.decode_step = wrong::decode_step_left_aligned_mask; }},
        {"19.2", "decode_step_no_scale",
         [](Functions& f) { f.decode_step = wrong::decode_step_no_scale; }},
        {"19.2", "decode_step_last_key_only",
         [](Functions& f) { f.decode_step = wrong::decode_step_last_key_only; }},
        {"21.1", "online_softmax_no_rescale",
         [](Functions& f) { f.online_softmax_attention = wrong::online_softmax_no_rescale; }},
        {"21.1", "online_softmax_no_max",
         [](Functions& f) { f.online_softmax_attention = wrong::online_softmax_no_max; }},
        {"21.1", "online_softmax_rescales_l_only",
         [](Functions& f) { f.online_softmax_attention = wrong::online_softmax_rescales_l_only; }},
        {"22.1", "rope_rotate_ignores_offset",
         [](Functions& f) { f.rope_rotate = wrong::rope_rotate_ignores_offset; }},
        {"22.1", "rope_rotate_neighbours",
         [](Functions& f) { f.rope_rotate = wrong::rope_rotate_neighbours; }},
        {"22.1", "rope_rotate_backwards",
         [](Functions& f) { f.rope_rotate = wrong::rope_rotate_backwards; }},
        {"24.1", "gemm_packed_kernel_accumulates",
         [](Functions& f) { f.gemm_packed_kernel = wrong::gemm_packed_kernel_accumulates; }},
        {"24.1", "gemm_packed_kernel_drops_edges",
         [](Functions& f) { f.gemm_packed_kernel = wrong::gemm_packed_kernel_drops_edges; }},
        {"24.1", "gemm_packed_kernel_reads_b_transposed", [](Functions& f) {
           f.gemm_packed_kernel = wrong::gemm_packed_kernel_reads_b_transposed;
         }}};
    int problems = 0;
    for (const ExerciseInfo& e : exercise_list()) {
      const Outcome o = check(e.id, solutions);
      const bool ok = o.kind == Outcome::passed;
      std::cout << e.id << " " << e.name << ": the solution " << (ok ? "passes" : "FAILS: ")
                << (ok ? "" : o.message) << (o.note.empty() ? "" : " (" + o.note + ")") << "\n";
      problems += !ok;
    }
    for (const Wrong& w : wrongs) {
      Functions f = solutions;
      w.put_in_place(f);
      const Outcome o = check(w.id, f);
      const bool rejected = o.kind == Outcome::failed;
      std::cout << w.id << " " << w.name << ": " << (rejected ? "rejected" : "NOT REJECTED")
                << "\n";
      if (rejected) std::cout << "    " << o.message << "\n";
      problems += !rejected;
    }
    std::cout << "\n"
              << (problems == 0 ? "every solution passes and every wrong answer is rejected"
                                : std::to_string(problems) + " problems")
              << "\n";
    return problems == 0 ? 0 : 1;
  });
}
