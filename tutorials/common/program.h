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
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
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
#include <fcntl.h>
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

// The message as one line a terminal shows as it is: a newline or tab becomes a space, any other
// control byte, and any byte that is not part of a valid UTF-8 character (from a file name or a
// file's contents echoed in the message), is written \xNN; past 1,000 bytes it is cut short.
inline std::string one_line(const std::string& message) {
  constexpr size_t kMost = 1000;
  std::string out;
  size_t i = 0;
  while (i < message.size() && out.size() < kMost) {
    const auto c = static_cast<unsigned char>(message[i]);
    // The length of a valid UTF-8 sequence starting here, or 0 (RFC 3629: no overlong forms,
    // no surrogates, nothing above U+10FFFF).
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    for (size_t k = 1; k < n; ++k) {
      const auto t = i + k < message.size() ? static_cast<unsigned char>(message[i + k]) : 0;
      const bool ok = (t & 0xC0) == 0x80 &&
                      (k != 1 || ((c != 0xE0 || t >= 0xA0) && (c != 0xED || t < 0xA0) &&
                                  (c != 0xF0 || t >= 0x90) && (c != 0xF4 || t < 0x90)));
      if (!ok) n = 0;
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (n == 0 || c < 0x20 || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      n = 1;
    } else {
      out.append(message, i, n);
    }
    i += n == 0 ? 1 : n;
  }
  if (i < message.size())
    out += "... (" + std::to_string(message.size() - i) + " bytes more)";
  return out;
}

// Standard streams that are closed (a shell's ">&-") are opened on /dev/null: otherwise the
// next file the program opens would take their number, and what it prints would go into that
// file (a checkpoint). Returns whether stdout was closed.
inline bool stdout_was_closed() {
#ifdef _WIN32
  return false;
#else
  bool closed_stdout = false;
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // takes the lowest free number: fd
      closed_stdout = closed_stdout || fd == 1;
    }
  return closed_stdout;
#endif
}

// Whether everything printed reached stdout; "" if so, else why not (a full disk, a closed pipe).
inline std::string output_failure() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int why = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return "";
  return std::string("writing the output (stdout) failed") +
         (why != 0 ? std::string(": ") + std::strerror(why) : std::string(" (a full disk? a closed pipe?)"));
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
  // What the program printed must have been written: a lesson whose output went nowhere (a full
  // disk, a closed stdout) has not done its work.
  const auto written = [&](int status) {
    const std::string failure = output_failure();
    return failure.empty() ? status : error(failure, 1);
  };
  try {
    if (stdout_was_closed()) return error("stdout is closed: nothing the program prints would be seen", 1);
    flags.parse(argc, argv);
    qkv::check_environment();  // the QKV_ variables of tensor/environment.h
    return written(body());
  } catch (const HelpShown&) {
    return written(0);
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
