// prove_exercises: proves the checker (a ctest test, independent of the learner's files).
//   1. Every reference solution passes its check, and on none of its cases does the diagnosis
//      name a known mistake (a correct output is never given a hint).
//   2. Every known mistake of the catalogue (wrong/), put in place of its exercise's solution
//      with every other exercise's solution beside it, is rejected and named: the diagnosis
//      gives back its own name alone, or, for a mistake whose numbers are right, the checker's
//      own words say what it did ("no gradient flows", "modified its input 'param'"). A check
//      that ran the reference instead of the graded function, or that cannot fail, fails here.
//      A mistake only AddressSanitizer sees (a read past an edge) is left to the sanitizer
//      build's ctest, which runs it through check_exercises --mistake.
//   3. Each case rejects the mistakes it is written down to catch, a mistake it alone is there
//      for gives the right values on every other case, and every known mistake is written down
//      under a case.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "tutorials/common/program.h"
#include "tutorials/exercises/check.h"

using namespace qkv::exercises;

namespace {

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

int main(int argc, char** argv) {
  lesson::Flags flags("prove_exercises",
                      "Proves the checker: every solution passes, every known mistake is "
                      "rejected and named, every case catches what it is there for.");
  return lesson::run(flags, argc, argv, [&] {
    const Functions solutions{solution::broadcast_add,
                              solution::sum_to_shape,
                              solution::matmul_backward,
                              solution::softmax_rows,
                              solution::attention,
                              solution::split_heads,
                              solution::merge_heads,
                              solution::cross_attention,
                              solution::causal_attention,
                              solution::causal_attention_renormalised,
                              solution::softmax_backward,
                              solution::adamw_step,
                              solution::layer_norm_backward,
                              solution::kv_append,
                              solution::decode_step,
                              solution::online_softmax_attention,
                              solution::rope_rotate,
                              solution::gemm_packed_kernel,
                              solution::cross_entropy_backward,
                              solution::block_forward,
                              solution::gelu_backward,
                              solution::repeat_kv,
                              solution::rms_norm_backward,
                              solution::bpe_merge};
    int problems = 0;
    auto problem = [&](const std::string& what) {
      std::cout << "  PROBLEM: " << what << "\n";
      ++problems;
    };
    std::cout << "1. The solutions\n";
    for (const ExerciseInfo& e : exercise_list()) {
      const Outcome o = check(e.id, solutions, {.diagnose_passes = true});
      std::cout << e.id << " " << e.name << ": the solution "
                << (o.kind == Outcome::passed ? "passes" : "FAILS")
                << (o.note.empty() ? "" : " (" + o.note + ")") << "\n";
      if (o.kind != Outcome::passed) problem(o.message);
    }
    std::cout << "\n2. The known mistakes\n";
    const std::vector<KnownMistake> mistakes = known_mistakes();
    for (const KnownMistake& m : mistakes) {
      if (m.caught_as.rfind("AddressSanitizer", 0) == 0) {
        // Its numbers are right: only the sanitizer build sees it (ctest
        // exercises_asan_report runs it there, through check_exercises --mistake).
        std::cout << m.id << " " << m.name << ": for AddressSanitizer (check_exercises --asan)\n";
        continue;
      }
      Functions f = solutions;
      m.put_in_place(f);
      const Outcome o = check(m.id, f);
      const bool rejected = o.kind == Outcome::failed;
      const bool named = m.caught_as.empty() ? o.diagnosed == std::vector<std::string>{m.name}
                                             : o.message.find(m.caught_as) != std::string::npos;
      std::cout << m.id << " " << m.name << ": "
                << (!rejected ? "NOT REJECTED"
                    : named   ? "rejected and named"
                              : "NOT NAMED")
                << "\n    " << o.message << "\n";
      if (!rejected || !named)
        problem(m.name + (rejected ? " was named as: " + list(o.diagnosed) : " passed"));
    }
    std::cout << "\n3. What each case is there to catch\n";
    for (const ExerciseInfo& e : exercise_list()) {
      const std::vector<CaseInfo> all = cases(e.id);
      for (const KnownMistake& m : mistakes) {  // each is written down under a case
        if (m.id != e.id || m.caught_as.rfind("AddressSanitizer", 0) == 0) continue;
        const bool written = std::any_of(all.begin(), all.end(), [&](const CaseInfo& c) {
          return std::find(c.catches.begin(), c.catches.end(), m.name) != c.catches.end();
        });
        if (!written) problem(m.name + " is written down under no case of " + e.id);
      }
      for (size_t c = 0; c < all.size(); ++c) {
        std::cout << e.id << " case " << c << ", " << all[c].input << ": catches "
                  << list(all[c].catches) << "\n";
        for (const std::string& name : all[c].catches) {
          const auto m = std::find_if(mistakes.begin(), mistakes.end(), [&](const KnownMistake& k) {
            return k.id == e.id && k.name == name;
          });
          if (m == mistakes.end()) {
            problem(name + " is not a known mistake of " + e.id);
            continue;
          }
          // Only AddressSanitizer sees it (undefined behaviour here): the ASan build's ctest
          // holds it to its case.
          if (m->caught_as.rfind("AddressSanitizer", 0) == 0) continue;
          Functions f = solutions;
          m->put_in_place(f);
          if (check(e.id, f, {.only_case = static_cast<int64_t>(c)}).kind != Outcome::failed)
            problem("case " + std::to_string(c) + " of " + e.id + " does not catch " + name);
          const bool alone =
              std::find(all[c].only.begin(), all[c].only.end(), name) != all[c].only.end();
          for (size_t other = 0; alone && other < all.size(); ++other)
            if (other != c &&
                check(e.id, f, {.only_case = static_cast<int64_t>(other), .values_only = true})
                        .kind != Outcome::passed)
              problem(name + " is said to be caught by case " + std::to_string(c) +
                      " alone, but case " + std::to_string(other) + " catches it too");
        }
      }
    }
    std::cout << "\n"
              << (problems == 0 ? "every solution passes, every known mistake is rejected and "
                                  "named, every case catches what it is there for"
                                : std::to_string(problems) + " problems")
              << "\n";
    return problems == 0 ? 0 : 1;
  });
}
