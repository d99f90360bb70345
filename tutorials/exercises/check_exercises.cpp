// check_exercises: grades the learner's exercises (tutorials/exercises/learner/), never the
// reference solutions.
//
//   check_exercises              every exercise, then a summary of what is done and what remains
//   check_exercises 07.1 12.1    the ones named
//   check_exercises --stubs      succeeds only if every exercise is still its untouched stub
//                                (CI runs it on a fresh clone)
// Exit status 0 when every exercise asked for passes.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "tutorials/common/program.h"
#include "tutorials/exercises/check.h"

using namespace qkv::exercises;

int main(int argc, char** argv) {
  // Your functions, from tutorials/exercises/learner/.
  const Functions yours{broadcast_add,       sum_to_shape,
                        matmul_backward,     softmax_rows,
                        attention,           split_heads,
                        merge_heads,         cross_attention,
                        causal_attention,    causal_attention_renormalised,
                        softmax_backward,    adamw_step,
                        layer_norm_backward, kv_append,
                        decode_step,         online_softmax_attention,
                        rope_rotate,         gemm_packed_kernel};
  bool stubs = false;
  std::vector<std::string> ids;
  lesson::Flags flags("check_exercises",
                      "Grades your exercises (tutorials/exercises/learner/) against qkv's own.");
  flags.rest("EXERCISE", &ids, "the exercises to check, e.g. 07.1 12.1 (default: all of them)");
  flags.on_off("--stubs", &stubs, "succeed only if every exercise is still its untouched stub");
  return lesson::run(flags, argc, argv, [&] {
    std::vector<ExerciseInfo> asked;
    for (const std::string& id : ids) {
      bool known = false;
      for (const ExerciseInfo& e : exercise_list())
        if (id == e.id) {
          known = true;
          const bool again = std::any_of(asked.begin(), asked.end(),
                                         [&](const ExerciseInfo& a) { return id == a.id; });
          if (!again) asked.push_back(e);  // an exercise named twice is checked once
        }
      if (!known)
        flags.fail("no exercise \"" + id + "\" (they are 01.1 to " + exercise_list().back().id +
                   "; run without arguments for the list)");
    }
    if (asked.empty()) asked = exercise_list();
    std::string done, remaining;
    int passed = 0, untouched = 0;
    for (const ExerciseInfo& e : asked) {
      const Outcome o = check(e.id, yours);
      const std::string label = std::string(e.id) + " " + e.name;
      if (o.kind == Outcome::passed) {
        std::cout << label << ": ok" << (o.note.empty() ? "" : " (" + o.note + ")") << "\n";
        done += std::string(" ") + e.id;
        ++passed;
      } else if (o.kind == Outcome::not_implemented) {
        // The stub's message without its "exercise <id> (<name>): " prefix.
        const size_t at = o.message.find("): ");
        std::cout << label << ": "
                  << (at == std::string::npos ? o.message : o.message.substr(at + 3)) << "\n";
        remaining += std::string(" ") + e.id;
        ++untouched;
      } else {
        std::cout << label << ": FAILED " << o.message << "\n";
        remaining += std::string(" ") + e.id;
      }
    }
    std::cout << "\ndone (" << passed << " of " << asked.size()
              << "):" << (done.empty() ? " none" : done)
              << "\nremaining:" << (remaining.empty() ? " none" : remaining) << "\n";
    if (stubs) {
      const bool all_stubs = untouched == static_cast<int>(asked.size());
      std::cout << (all_stubs ? "every exercise is its stub, and each says so\n"
                              : "some exercises are not their untouched stubs\n");
      return all_stubs ? 0 : 1;
    }
    return passed == static_cast<int>(asked.size()) ? 0 : 1;
  });
}
