// lesson.h: what every lesson uses to print and to check itself.
//
//   banner("3. The attention weights");   a section title
//   pytorch("x.t()");                      prints ">>> x.t()", the line the C++ mirrors
//   show("omega_2", t);                    prints "omega_2:" and t as PyTorch prints it
//   expect_prints(t, "tensor([...])");     t's digits are exactly what PyTorch printed
//   expect_article(ok, "...");             a check of another number the article printed
//   article_note("...");                   prose about the article's numbers (true only there)
//   expect(ok, "what was checked");        any other check (one that holds for any input)
//   expect_learned(full, ok, "...");       a check that needs the full training run
//   return finish();                       exit status: 0 only if every check passed
// A lesson is also a ctest test: one wrong number fails it. Its main() runs through
// lesson::run (program.h), which parses its flags (flags.h) and turns any error into one line.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "autograd/all.h"
#include "tutorials/common/program.h"

namespace lesson {

inline int& failures() {
  static int n = 0;
  return n;
}

inline void banner(const std::string& title) {
  std::cout << "\n=== " << title << " ===\n";
}

inline void expect(bool ok, const std::string& what) {
  std::cout << (ok ? "  [ok] " : "  [FAILED] ") << what << "\n";
  if (!ok) ++failures();
}

// A check of what training achieved, which holds only after the lesson's full run. A shortened
// run (--steps below the default; the sanitizer builds run the training lessons that way, see
// tutorials/CMakeLists.txt) still executes every line but has not had time to learn, so it
// reports the check as skipped instead of failing it.
inline void expect_learned(bool full_run, bool ok, const std::string& what) {
  if (!full_run) {
    std::cout << "  [skipped: shortened run] " << what << "\n";
    return;
  }
  expect(ok, what);
}

// Whether the lesson runs with the article's own values (its seed and sizes): a lesson that
// takes flags sets it after parsing them. The numbers the article printed are checked only
// then; with other values (an experiment) those checks say they are skipped and why, and the
// checks that hold for any input (rows sum to 1, two methods agree) still run and count.
inline bool& article_values() {
  static bool yes = true;
  return yes;
}

// What the skipped checks print when article_values() is false (a lesson without an article
// sets its own: "not the lesson's default sizes").
inline std::string& skipped_because() {
  static std::string why = "not the article's seed and sizes";
  return why;
}

inline void expect_article(bool ok, const std::string& what) {
  if (!article_values()) {
    std::cout << "  [skipped: " << skipped_because() << "] " << what << "\n";
    return;
  }
  expect(ok, what);
}

// Prose about the article's particular numbers ("entry 1, 3.4707, is the largest"): printed
// only with the article's values, where it is true.
inline void article_note(const std::string& text) {
  if (article_values()) std::cout << text;
}

// The PyTorch line the C++ below it mirrors, printed as a Python session shows it.
inline void pytorch(const std::string& line) { std::cout << ">>> " << line << "\n"; }

inline void show(const std::string& name, const qkv::Tensor& t) {
  std::cout << name << ":\n" << t << "\n";
}

// How t prints without its grad_fn / requires_grad suffix: the digits a learner compares.
inline std::string digits(const qkv::Tensor& t) {
  std::ostringstream os;
  os << qkv::detach(t);
  return os.str();
}

// The positions (0, 1, ...) of the numbers that differ between two printouts of the same shape
// ("tensor([[-0.1564, ...]])"): a way to say exactly which printed digits two sources disagree on.
inline std::vector<size_t> differing_numbers(const std::string& a, const std::string& b) {
  auto numbers = [](const std::string& s) {
    std::vector<std::string> out;
    std::string current;
    for (const char c : s + " ") {
      if ((c >= '0' && c <= '9') || c == '.' || c == '-' || c == 'e' || c == '+') {
        current.push_back(c);
      } else if (!current.empty()) {
        if (current.find_first_of("0123456789") != std::string::npos) out.push_back(current);
        current.clear();
      }
    }
    return out;
  };
  const std::vector<std::string> x = numbers(a), y = numbers(b);
  std::vector<size_t> differ;
  for (size_t i = 0; i < std::max(x.size(), y.size()); ++i)
    if (i >= x.size() || i >= y.size() || x[i] != y[i]) differ.push_back(i);
  return differ;
}

// Checks that t prints exactly as PyTorch printed it (values copied from PyTorch's output,
// tools/gen_tutorial_reference.py).
inline void expect_prints(const qkv::Tensor& t, const std::string& pytorch,
                          const std::string& what) {
  const std::string ours = digits(t);
  expect_article(ours == pytorch, what);
  if (!article_values()) return;
  if (ours != pytorch)
    std::cout << "  PyTorch printed:\n" << pytorch << "\n  qkv printed:\n" << ours << "\n";
}

// The flags of the lessons on the article's attention (06-13): its seed and its two widths.
inline void article_flags(Flags& flags, int64_t* seed, int64_t* d_out_kq, int64_t* d_out_v) {
  flags.number("--seed", seed, "seed of the embeddings and weights (the article's: 123)", 0);
  flags.number("--d_out_kq", d_out_kq, "width of queries and keys (the article's: 2)", 1, 4096);
  flags.number("--d_out_v", d_out_v, "width of values (the article's: 4)", 1, 4096);
}

// Names the exercises that follow this lesson (tutorials/exercises), at its end.
inline void exercises(const std::vector<std::string>& names) {
  std::cout << "\nExercises after this lesson, in tutorials/exercises/learner/ (check one with\n"
               "./build/release/tutorials/exercises/check_exercises <number>):\n";
  for (const std::string& n : names) std::cout << "  " << n << "\n";
}

inline int finish() {
  std::cout << "\n" << (failures() == 0 ? "All checks passed." : "Some checks FAILED.") << "\n";
  return failures() == 0 ? 0 : 1;
}

}  // namespace lesson
