// check.h: the checker of the exercises (exercises.h). Each check takes the function to grade
// (the learner's, a solution or a wrong answer: the same type), runs it on inputs no lesson
// prints (other seeds, odd shapes such as 1, 7 and 33, broadcast cases, scores in the hundreds)
// and compares it with qkv's own implementation; a backward is also held to finite
// differences. It never runs the reference in the graded function's place.
//
// A failure names the input, the first wrong index, both values and the largest difference,
// and a hint when the result matches a mistake it knows. A function that throws, returns the
// wrong shape, an undefined tensor or NaN fails with what was expected: never a crash.
#pragma once

#include <string>
#include <vector>

#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

struct Outcome {
  enum Kind { passed, failed, not_implemented } kind = passed;
  std::string message;  // why it failed (and a hint), or the stub's message
  std::string note;     // a figure a pass reports (24.1: GFLOP/s and share of the peak)
};

struct ExerciseInfo {
  const char* id;    // "07.1": exercise 1 after lesson 07
  const char* name;  // the function, and learner/<id>_<name>.cpp
};
const std::vector<ExerciseInfo>& exercise_list();

// The functions to grade, one per exercise: the learner's (check_exercises), or the
// solutions with, in turn, one wrong answer in place (prove_exercises).
// The type of each exercise's function.
namespace signature {
using broadcast_add = decltype(&exercises::broadcast_add);
using sum_to_shape = decltype(&exercises::sum_to_shape);
using matmul_backward = decltype(&exercises::matmul_backward);
using softmax_rows = decltype(&exercises::softmax_rows);
using attention = decltype(&exercises::attention);
using split_heads = decltype(&exercises::split_heads);
using merge_heads = decltype(&exercises::merge_heads);
using cross_attention = decltype(&exercises::cross_attention);
using causal_attention = decltype(&exercises::causal_attention);
using causal_attention_renormalised = decltype(&exercises::causal_attention_renormalised);
using softmax_backward = decltype(&exercises::softmax_backward);
using adamw_step = decltype(&exercises::adamw_step);
using layer_norm_backward = decltype(&exercises::layer_norm_backward);
using kv_append = decltype(&exercises::kv_append);
using decode_step = decltype(&exercises::decode_step);
using online_softmax_attention = decltype(&exercises::online_softmax_attention);
using rope_rotate = decltype(&exercises::rope_rotate);
using gemm_packed_kernel = decltype(&exercises::gemm_packed_kernel);
}  // namespace signature

struct Functions {
  signature::broadcast_add broadcast_add;
  signature::sum_to_shape sum_to_shape;
  signature::matmul_backward matmul_backward;
  signature::softmax_rows softmax_rows;
  signature::attention attention;
  signature::split_heads split_heads;
  signature::merge_heads merge_heads;
  signature::cross_attention cross_attention;
  signature::causal_attention causal_attention;
  signature::causal_attention_renormalised causal_attention_renormalised;
  signature::softmax_backward softmax_backward;
  signature::adamw_step adamw_step;
  signature::layer_norm_backward layer_norm_backward;
  signature::kv_append kv_append;
  signature::decode_step decode_step;
  signature::online_softmax_attention online_softmax_attention;
  signature::rope_rotate rope_rotate;
  signature::gemm_packed_kernel gemm_packed_kernel;
};

// The check of exercise `id` ("07.1") on f's function for it.
Outcome check(const std::string& id, const Functions& f);

Outcome check_broadcast_add(decltype(&broadcast_add) f);
Outcome check_sum_to_shape(decltype(&sum_to_shape) f);
Outcome check_matmul_backward(decltype(&matmul_backward) f);
Outcome check_softmax_rows(decltype(&softmax_rows) f);
Outcome check_attention(decltype(&attention) f);
Outcome check_split_heads(decltype(&split_heads) f);
Outcome check_merge_heads(decltype(&merge_heads) f);
Outcome check_cross_attention(decltype(&cross_attention) f);
Outcome check_causal_attention(decltype(&causal_attention) f);
Outcome check_causal_attention_renormalised(decltype(&causal_attention_renormalised) f);
Outcome check_softmax_backward(decltype(&softmax_backward) f);
Outcome check_adamw_step(decltype(&adamw_step) f);
Outcome check_layer_norm_backward(decltype(&layer_norm_backward) f);
Outcome check_kv_append(decltype(&kv_append) f);
Outcome check_decode_step(decltype(&decode_step) f);
Outcome check_online_softmax_attention(decltype(&online_softmax_attention) f);
Outcome check_rope_rotate(decltype(&rope_rotate) f);
Outcome check_gemm_packed_kernel(decltype(&gemm_packed_kernel) f);

}  // namespace qkv::exercises
