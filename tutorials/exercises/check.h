// check.h: the checker of the exercises (exercises.h). Each exercise has a list of inputs
// (cases): other seeds, odd and empty shapes, transposed, sliced and expanded inputs, value
// widths unlike key widths, scores in the hundreds, each written down with the mistakes it is
// there to catch. On every case the checker
//   1. computes qkv's own answer first, on a copy of the inputs made for it alone;
//   2. runs the graded function, and fails it if it threw, or if it changed any input
//      ("modified its input 'param'");
//   3. compares every output; on a difference it says where and how far, then runs every known
//      mistake of that exercise (the catalogue in wrong/) on the same input: when your output
//      is one of theirs, and your function does what that mistake does on every other case
//      too, the hint names the mistake and the line of the math it breaks. A hint is never
//      given for a mistake whose output yours does not match.
// Where a model trains through the exercise, it also runs backward through your function and
// compares the gradient of every input with qkv's own (a function that breaks the graph fails
// and says so). It never runs the reference in the graded function's place, and a function
// that throws, returns the wrong shape, an undefined tensor or NaN fails with what was
// expected: never a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tutorials/exercises/exercises.h"

namespace qkv::exercises {

struct Outcome {
  enum Kind { passed, failed, not_implemented } kind = passed;
  std::string message;  // why it failed (and a hint), or the stub's message
  std::string note;     // a figure a pass reports (24.1: GFLOP/s and share of the peak)
  std::vector<std::string> diagnosed;  // the known mistakes (wrong/) whose output it matched
  int64_t failed_case = -1;            // the case it failed on (its index), -1 for none
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
using cross_entropy_backward = decltype(&exercises::cross_entropy_backward);
using block_forward = decltype(&exercises::block_forward);
using gelu_backward = decltype(&exercises::gelu_backward);
using repeat_kv = decltype(&exercises::repeat_kv);
using rms_norm_backward = decltype(&exercises::rms_norm_backward);
using bpe_merge = decltype(&exercises::bpe_merge);
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
  signature::cross_entropy_backward cross_entropy_backward;
  signature::block_forward block_forward;
  signature::gelu_backward gelu_backward;
  signature::repeat_kv repeat_kv;
  signature::rms_norm_backward rms_norm_backward;
  signature::bpe_merge bpe_merge;
};

// A known mistake of one exercise (the catalogue, wrong/<id>_<name>.cpp): the function that
// makes it, what to do about it, and the line of the exercise's math it breaks.
template <class F>
struct Mistake {
  const char* name;  // the function in wrong/
  F fn;
  const char* hint;
  const char* math;
  // A mistake whose outputs are right (loops outside autograd, an input written over): the
  // checker's own words name it, and this phrase is in them ("no gradient flows", "modified
  // its input 'param'"). nullptr: it is known by its output.
  const char* caught_as = nullptr;
};
template <class F>
using Catalogue = std::vector<Mistake<F>>;

struct CheckOptions {
  // prove_exercises: run the diagnosis on every case the function passes as well; a correct
  // output named as a mistake is then a failure (the checker's own bug, never a learner's).
  bool diagnose_passes = false;
  int64_t only_case = -1;    // >= 0: run that case alone (and its gradients)
  bool values_only = false;  // skip the gradient checks
  // Called with each case's index and input before it runs (check_exercises reports from it
  // which case a crash happened on).
  std::function<void(int64_t, const std::string&)> on_case = {};
};

// The check of exercise `id` ("07.1") on f's function for it.
Outcome check(const std::string& id, const Functions& f, const CheckOptions& options = {});

// One case of an exercise, as written down: its input, and the mistakes (names in wrong/) it
// is there to catch; `only` lists those that no other case of the exercise catches.
struct CaseInfo {
  std::string input;
  std::vector<std::string> catches, only;
};
std::vector<CaseInfo> cases(const std::string& id);

// Every catalogued mistake, and how to put it in place of its exercise's function.
struct KnownMistake {
  std::string id, name, hint;
  std::function<void(Functions&)> put_in_place;
  std::string caught_as;  // Mistake::caught_as, "" for none
};
std::vector<KnownMistake> known_mistakes();

}  // namespace qkv::exercises
