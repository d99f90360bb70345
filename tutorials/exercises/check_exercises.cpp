// check_exercises: grades the learner's exercises (tutorials/exercises/learner/), never the
// reference solutions.
//
//   check_exercises              every exercise, then one line: how many pass, which are left,
//                                and the next one to try
//   check_exercises 07.1 12.1    the ones named
//   check_exercises --cases 07.1 each case of an exercise, and the mistakes it is there to catch
//   check_exercises --asan 24.1  builds your files and the checker with AddressSanitizer and
//                                UBSan (cmake --preset asan, in build/asan) and checks there: a
//                                read or write past an edge is that exercise's failure, with the
//                                sanitizer's first line and the line of your file it points at
//   check_exercises --stubs      succeeds only if every exercise is still its untouched stub
//                                (CI runs it on a fresh clone)
//   check_exercises --mistake causal_attention_no_scale
//                                checks a known mistake (wrong/) in place of your function: what
//                                the checker says to a learner who made it
// Exit status 0 when every exercise asked for passes.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>

#include "tutorials/common/program.h"
#include "tutorials/exercises/check.h"

using namespace qkv::exercises;

namespace {

// Whether this program was built with AddressSanitizer (the asan preset).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// What a check in a process of its own writes to standard error before each case.
const std::string kCaseMark = "qkv-case ";

// `word` quoted for a POSIX shell.
std::string quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A temporary file's path that nothing has yet, removed when this goes.
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& stem) {
    std::random_device random;
    path = std::filesystem::temp_directory_path() /
           (stem + "." + std::to_string(random()) + std::to_string(random()));
  }
  ~TempFile() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

// What a sanitizer said in `report`: its first line ("ERROR: AddressSanitizer: ..." or
// "...: runtime error: ...") and the first stack frame in the learner's files; "" if nothing.
std::string sanitizer_lines(const std::string& report) {
  std::istringstream in(report);
  std::string line, first, frame;
  while (std::getline(in, line)) {
    const bool error = line.find("ERROR: AddressSanitizer") != std::string::npos ||
                       line.find("runtime error:") != std::string::npos;
    if (first.empty() && error) first = line;
    if (!first.empty() && frame.empty() && line.find("exercises/learner/") != std::string::npos)
      frame = line;
  }
  if (first.empty()) return "";
  const size_t at = first.find_first_not_of("= 0123456789");  // "==1234==ERROR: ..."
  std::string out = at == std::string::npos ? first : first.substr(at);
  if (!frame.empty()) out += "\n    at " + frame.substr(frame.find_first_not_of(' '));
  return out;
}

// The check of one exercise: its line of the report ("07.1 softmax_rows: ok") and its outcome.
// On Linux and macOS each exercise runs in a process of its own (this program, --in_process),
// so that a crash or a sanitizer's report ends that exercise's check alone, and is reported with
// the case it happened on.
Outcome check_one(const ExerciseInfo& e, const Functions& yours, const std::string& self,
                  const std::string& mistake, bool in_process) {
  if (self.empty()) {
    CheckOptions options;
    if (in_process)  // a process of its own: say which case runs, for a crash to be placed
      options.on_case = [](int64_t c, const std::string& input) {
        std::cerr << kCaseMark << c << ": " << input << std::endl;
      };
    return check(e.id, yours, options);
  }
  TempFile out("qkv_exercise_out"), err("qkv_exercise_err");
  const std::string command = "UBSAN_OPTIONS=print_stacktrace=1 " + quoted(self) +
                              " --in_process " + e.id +
                              (mistake.empty() ? "" : " --mistake " + quoted(mistake)) + " > " +
                              quoted(out.path.string()) + " 2> " + quoted(err.path.string());
  const int status = std::system(command.c_str());
  const int code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f);
  if (status == -1 || code == 126 || code == 127)
    throw qkv::Error("could not run " + self + " for exercise " + e.id + " (exit status " +
                     std::to_string(code) + ")");
  const std::string printed = read_all(out.path), report = read_all(err.path);
  // The last case the child began ("qkv-case 3: x (4, 6) ..."), for a check that never ended.
  std::string last_case;
  for (size_t at = report.find(kCaseMark); at != std::string::npos;
       at = report.find(kCaseMark, at + 1))
    last_case = report.substr(at + kCaseMark.size(), report.find('\n', at) - at - kCaseMark.size());
  const std::string during = last_case.empty() ? "" : " on case " + last_case;
  const std::string said = sanitizer_lines(report);
  if (!said.empty())
    return {Outcome::failed,
            said + (last_case.empty() ? "" : "\n    while checking case " + last_case),
            "",
            {},
            -1};
  const std::string mark = std::string(e.id) + " " + e.name + ": ";
  const size_t at = printed.find(mark);
  if (at == std::string::npos) {
    return {Outcome::failed,
            "crashed" + during + " (exit status " + std::to_string(code) +
                (code > 128 ? ", signal " + std::to_string(code - 128) : "") +
                "): a read or write out of bounds, or through a null pointer? check_exercises "
                "--asan " +
                e.id + " shows where",
            "",
            {},
            -1};
  }
  // The child's own line: "ok (note)", "FAILED ..." or the stub's message.
  std::string rest = printed.substr(at + mark.size());
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.pop_back();
  if (rest.rfind("ok", 0) == 0)
    return {Outcome::passed, "", rest.size() > 4 ? rest.substr(4, rest.size() - 5) : "", {}, -1};
  if (rest.rfind("FAILED ", 0) == 0) return {Outcome::failed, rest.substr(7), "", {}, -1};
  return {Outcome::not_implemented, "): " + rest, "", {}, -1};
}

// Builds this project's asan preset's check_exercises and runs it on `ids`; its exit status.
int run_under_sanitizers(const std::vector<std::string>& ids) {
#ifdef _WIN32
  (void)ids;
  throw qkv::Error("--asan builds with the asan preset through a POSIX shell (Linux or macOS)");
#else
  const std::filesystem::path source = QKV_SOURCE_DIR;
  std::cout << "Building your files and the checker with AddressSanitizer and UBSan in "
            << (source / "build" / "asan").string() << " (the first time takes a few minutes)"
            << std::endl;
  TempFile log("qkv_asan_build");
  const std::string build = "cd " + quoted(source.string()) + " && cmake --preset asan > " +
                            quoted(log.path.string()) +
                            " 2>&1 && cmake --build --preset asan --target check_exercises >> " +
                            quoted(log.path.string()) + " 2>&1";
  if (std::system(build.c_str()) != 0) {
    const std::string text = read_all(log.path);
    throw qkv::Error(
        "building with the sanitizers failed (cmake --preset asan, then cmake "
        "--build --preset asan --target check_exercises); its last output: " +
        text.substr(text.size() > 800 ? text.size() - 800 : 0));
  }
  std::string run =
      quoted((source / "build" / "asan" / "tutorials" / "exercises" / "check_exercises").string());
  for (const std::string& id : ids) {
    run += ' ';
    run += quoted(id);
  }
  const int status = std::system(run.c_str());
  return status == 0 ? 0 : 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  // Your functions, from tutorials/exercises/learner/.
  const Functions yours{broadcast_add,
                        sum_to_shape,
                        matmul_backward,
                        softmax_rows,
                        attention,
                        split_heads,
                        merge_heads,
                        cross_attention,
                        causal_attention,
                        causal_attention_renormalised,
                        softmax_backward,
                        adamw_step,
                        layer_norm_backward,
                        kv_append,
                        decode_step,
                        online_softmax_attention,
                        rope_rotate,
                        gemm_packed_kernel,
                        cross_entropy_backward,
                        block_forward,
                        gelu_backward,
                        repeat_kv,
                        rms_norm_backward,
                        bpe_merge};
  bool stubs = false, list_cases = false, asan = false, in_process = false;
  std::vector<std::string> ids;
  std::string mistake;
  lesson::Flags flags("check_exercises",
                      "Grades your exercises (tutorials/exercises/learner/) against qkv's own.");
  flags.rest("EXERCISE", &ids, "the exercises to check, e.g. 07.1 12.1 (default: all of them)");
  flags.on_off("--cases", &list_cases,
               "list each case of the exercises named and the mistakes it is there to catch");
  flags.on_off("--asan", &asan,
               "build your files and the checker with AddressSanitizer and UBSan (build/asan) "
               "and check there: a read or write past an edge fails the exercise");
  flags.on_off("--stubs", &stubs, "succeed only if every exercise is still its untouched stub");
  flags.text("--mistake", &mistake,
             "check this known mistake (a function in wrong/) in place of your function for "
             "its exercise");
  flags.on_off("--in_process", &in_process,
               "check in this process (on Linux and macOS each exercise runs in a process of "
               "its own, this way)");
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
    Functions graded = yours;
    if (!mistake.empty()) {
      const std::vector<KnownMistake> known = known_mistakes();
      const auto m = std::find_if(known.begin(), known.end(),
                                  [&](const KnownMistake& k) { return k.name == mistake; });
      if (m == known.end())
        flags.fail("no known mistake \"" + mistake +
                   "\" (the functions in tutorials/exercises/wrong/)");
      m->put_in_place(graded);
      if (ids.empty())
        for (const ExerciseInfo& e : exercise_list())
          if (m->id == e.id) asked = {e};
    }
    if (asked.empty()) asked = exercise_list();
    if (asan && !kSanitized) {
      std::vector<std::string> args = ids;
      if (!mistake.empty()) args.insert(args.end(), {"--mistake", mistake});
      return run_under_sanitizers(args);
    }
    if (list_cases) {
      for (const ExerciseInfo& e : asked) {
        std::cout << e.id << " " << e.name << "\n";
        const std::vector<CaseInfo> all = cases(e.id);
        for (size_t c = 0; c < all.size(); ++c) {
          std::cout << "  case " << c << ": " << all[c].input << "\n    catches:";
          for (const std::string& name : all[c].catches)
            std::cout << " " << name
                      << (std::find(all[c].only.begin(), all[c].only.end(), name) !=
                                  all[c].only.end()
                              ? " (no other case does)"
                              : "");
          std::cout << (all[c].catches.empty()
                            ? " no catalogued mistake (an edge every answer must handle)"
                            : "")
                    << "\n";
        }
      }
      return 0;
    }
#ifdef _WIN32
    const std::string self;  // every exercise in this process
#else
    // This program again, by the path it was started with (found through PATH, it runs every
    // exercise in this process instead).
    const std::string program = argv[0];
    const std::string self =
        in_process || program.find('/') == std::string::npos ? "" : program;
#endif
    std::string remaining, next;
    int passed = 0, untouched = 0;
    for (const ExerciseInfo& e : asked) {
      const Outcome o = check_one(e, graded, self, mistake, in_process);
      const std::string label = std::string(e.id) + " " + e.name;
      if (o.kind == Outcome::passed) {
        std::cout << label << ": ok" << (o.note.empty() ? "" : " (" + o.note + ")") << std::endl;
        ++passed;
        continue;
      }
      if (o.kind == Outcome::not_implemented) {
        // The stub's message without its "exercise <id> (<name>): " prefix.
        const size_t at = o.message.find("): ");
        std::cout << label << ": "
                  << (at == std::string::npos ? o.message : o.message.substr(at + 3)) << "\n";
        ++untouched;
      } else {
        std::cout << label << ": FAILED " << o.message << std::endl;
      }
      remaining += std::string(" ") + e.id;
      if (next.empty()) {
        std::string file = std::string(e.id) + "_" + e.name + ".cpp";
        file[2] = '_';
        next = label + " (tutorials/exercises/learner/" + file + ")";
      }
    }
    if (in_process) return passed == static_cast<int>(asked.size()) ? 0 : 1;
    std::cout << "\n"
              << passed << " of " << asked.size() << " pass"
              << (remaining.empty() ? "" : "; left:" + remaining + "; next to try: " + next)
              << "\n";
    if (stubs) {
      const bool all_stubs = untouched == static_cast<int>(asked.size());
      std::cout << (all_stubs ? "every exercise is its stub, and each says so\n"
                              : "some exercises are not their untouched stubs\n");
      return all_stubs ? 0 : 1;
    }
    return passed == static_cast<int>(asked.size()) ? 0 : 1;
  });
}
