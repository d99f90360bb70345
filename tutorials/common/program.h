// program.h: how every program under tutorials/ starts and ends.
//
//   int main(int argc, char** argv) {
//     lesson::Flags flags("07_attention_weights", "what the lesson teaches, in one line");
//     flags.number("--seed", &seed, "seed of the weights (the article's: 123)", 0);
//     return lesson::run(flags, argc, argv, [&] {
//       ...                                   the lesson's body
//       return lesson::finish();              0 only if every check passed
//     });
//   }
//
// run() parses the flags, runs the body and turns anything thrown into one line on stderr,
// "<program>: error: <what>", and an exit status: 2 for a flag that cannot be used
// (UsageError), 1 for anything else (a qkv::Error from the library, a file that cannot be
// written, memory that ran out). Before it returns, it removes what the program had started to
// write and not finished (remove_if_unfinished below), so a failed run leaves nothing half-made.
// No exception reaches std::terminate.
//
// A training program also catches Ctrl-C (SIGINT) with InterruptGuard: the step under way
// finishes, and the program saves and says so before it exits.
#pragma once

#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "tensor/environment.h"
#include "tutorials/common/flags.h"

#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

namespace lesson {

// Paths the program is writing and has not finished: removed if it fails (a scratch folder, a
// file written in pieces). finished(path) takes one off the list once it is complete.
inline std::vector<std::string>& unfinished_paths() {
  static std::vector<std::string> paths;
  return paths;
}
inline void remove_if_unfinished(const std::string& path) { unfinished_paths().push_back(path); }
inline void finished(const std::string& path) {
  auto& paths = unfinished_paths();
  std::erase(paths, path);
}

// The message as one line: a newline inside it would make two.
inline std::string one_line(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return message;
}

template <class Body>
int run(Flags& flags, int argc, char** argv, Body&& body) {
  const auto error = [&](const std::string& what, int status) {
    std::cout.flush();
    std::cerr << flags.program() << ": error: " << one_line(what) << "\n";
    for (const std::string& path : unfinished_paths()) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
    unfinished_paths().clear();
    return status;
  };
  try {
    flags.parse(argc, argv);
    qkv::check_environment();  // QKV_NUM_THREADS, QKV_FUSED, QKV_MAX_TENSOR_BYTES
    return body();
  } catch (const HelpShown&) {
    return 0;
  } catch (const UsageError& e) {
    return error(e.what(), 2);
  } catch (const std::bad_alloc&) {
    return error("out of memory (std::bad_alloc): try smaller sizes", 1);
  } catch (const std::exception& e) {
    return error(e.what(), 1);
  } catch (...) {
    return error("an exception that is not a std::exception", 1);
  }
}

// Whether stderr is a terminal: a progress line redrawn with '\r' is for a person watching,
// not for a log file or a pipe.
inline bool stderr_is_terminal() {
#ifdef _WIN32
  return _isatty(_fileno(stderr)) != 0;
#else
  return isatty(fileno(stderr)) != 0;
#endif
}

// Ctrl-C (SIGINT) while a guard lives sets a flag instead of ending the program, so a training
// loop can finish its step, save and exit cleanly; a second Ctrl-C ends the program at once,
// as usual. The guard puts the previous handler back when it dies.
class InterruptGuard {
 public:
  InterruptGuard() {
    flag() = 0;
    previous_ = std::signal(SIGINT, &InterruptGuard::on_signal);
  }
  ~InterruptGuard() { std::signal(SIGINT, previous_); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  static bool interrupted() { return flag() != 0; }

 private:
  static volatile std::sig_atomic_t& flag() {
    static volatile std::sig_atomic_t f = 0;
    return f;
  }
  static void on_signal(int) {
    flag() = 1;
    std::signal(SIGINT, SIG_DFL);  // the next Ctrl-C is the default: end now
  }
  void (*previous_)(int) = SIG_DFL;
};

}  // namespace lesson
