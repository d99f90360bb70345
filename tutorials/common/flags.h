// flags.h: the command-line flags of every program under tutorials/, one parser for all.
//
//   lesson::Flags flags("16_train_tiny_gpt", "Train a tiny GPT on a text.");
//   flags.text("--data", &o.data, "UTF-8 text to train on");
//   flags.number("--steps", &o.steps, "training steps", /*min=*/0);
//   flags.real("--lr", &o.lr, "AdamW's learning rate");        (positive)
//   flags.on_off("--no_causal", &o.no_causal, "train without the causal mask");
//   return lesson::run(flags, argc, argv, [&] { ...; return lesson::finish(); });   (program.h)
//
// As Python's argparse takes them: "--name value" or "--name=value", a switch alone ("--name"),
// the last of a repeated flag wins. Numbers are written in decimal ("12", "-3", "1e-3", "0.5"):
// no spaces, no hex, no "inf" or "nan". A path is never empty, and an output folder is made and
// found writable before the program starts its work. --help (or -h) prints each flag with what
// it takes and its default, and the program exits with status 0. A bad flag (unknown, without
// its value, not a number, out of range, an unusable path) is a UsageError: lesson::run prints
// it as one line "<program>: error: <what>" and exits with status 2. So does flags.fail(...),
// for the checks a program makes across flags.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lesson {

// A flag that cannot be used as given: the program exits with status 2 (lesson::run).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// --help was asked for, and printed: the program exits with status 0 (lesson::run).
struct HelpShown {};

class Flags {
 public:
  // summary: the line under "usage:" in --help, what the program does.
  Flags(std::string program, std::string summary)
      : program_(std::move(program)), summary_(std::move(summary)) {}

  const std::string& program() const { return program_; }

  void text(const std::string& name, std::string* target, const std::string& help) {
    add(name, "TEXT", help, quoted(*target), [target](const std::string& value) {
      *target = value;
      return std::string();
    });
  }

  // A text that must not be empty ("--prompt ''" is a mistake, not a request for the default).
  void nonempty_text(const std::string& name, std::string* target, const std::string& help) {
    add(name, "TEXT", help, quoted(*target), [=](const std::string& value) {
      if (value.empty()) return name + " needs a text, got an empty one";
      *target = value;
      return std::string();
    });
  }

  // A path to read or write ("" would name no file, or the root folder once a name is added).
  void path(const std::string& name, std::string* target, const std::string& help) {
    add(name, "PATH", help, quoted(*target), [=](const std::string& value) {
      if (value.empty()) return name + " needs a path, got an empty one";
      *target = value;
      return std::string();
    });
  }

  // A folder the program writes into: made if it is not there (as Python's os.makedirs), and
  // found writable once the flags are read, before the program does its work, not after.
  void output_folder(const std::string& name, std::string* target, const std::string& help) {
    path(name, target, help);
    after_parse_.push_back([name, target] {
      namespace fs = std::filesystem;
      std::error_code ec;
      fs::create_directories(*target, ec);
      if (!fs::is_directory(*target, ec))
        throw UsageError(name + " \"" + *target + "\" is not a folder and cannot be made one" +
             (fs::exists(*target, ec) ? " (a file has that name)" : ""));
      // A file of a name nothing has, made and removed: the folder takes new files.
      for (int n = 0;; ++n) {
        const fs::path probe = fs::path(*target) / (".qkv_write_test." + std::to_string(n));
        if (fs::exists(probe, ec)) continue;
        std::ofstream out(probe, std::ios::binary);
        const bool ok = out.is_open();
        out.close();
        fs::remove(probe, ec);
        if (!ok) throw UsageError(name + " \"" + *target + "\": cannot write files in this folder");
        break;
      }
    });
  }

  // A text that may be given many times: each occurrence is appended, in order.
  void list(const std::string& name, std::vector<std::string>* target, const std::string& help) {
    add(name, "TEXT", help + " (repeatable)", "", [target](const std::string& value) {
      target->push_back(value);
      return std::string();
    });
  }

  // A whole number in [min, max].
  void number(const std::string& name, int64_t* target, const std::string& help, int64_t min = 1,
              int64_t max = INT64_MAX) {
    add(name, "N", help, std::to_string(*target), [=](const std::string& value) {
      char* end = nullptr;
      errno = 0;
      const long long n = std::strtoll(value.c_str(), &end, 10);
      if (!decimal(value, false) || *end != '\0' || errno == ERANGE)
        return name + " expects an integer, got \"" + value + "\"";
      if (n < min || n > max)
        return name + " must be " + range(min, max) + ", got " + std::to_string(n);
      *target = n;
      return std::string();
    }, range(min, max));
  }

  // A finite number above `above` (0 by default: positive), and at most `max`.
  void real(const std::string& name, double* target, const std::string& help, double above = 0,
            double max = HUGE_VAL) {
    std::ostringstream now, bounds;
    now << *target;
    bounds << (above == 0 ? "positive" : "above " + number_text(above))
           << (max < HUGE_VAL ? " and at most " + number_text(max) : "");
    add(name, "X", help, now.str(), [=, bounds = bounds.str()](const std::string& value) {
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (!decimal(value, true) || *end != '\0' || !std::isfinite(x))
        return name + " expects a number, got \"" + value + "\"";
      if (!(x > above) || x > max)
        return name + " must be " + bounds + ", got " + value;
      *target = x;
      return std::string();
    }, bounds.str());
  }

  // A switch: present means true ("--name=false" or "=0" says false).
  void on_off(const std::string& name, bool* target, const std::string& help) {
    add(name, "", help, "", [=](const std::string& value) {
      if (value.empty() || value == "1" || value == "true") *target = true;
      else if (value == "0" || value == "false") *target = false;
      else return name + " is a switch: give it alone, or =true / =false, got \"" + value + "\"";
      return std::string();
    });
  }

  // The words that are not flags, in order (e.g. the exercises to check); without this, a word
  // that is not a flag is an error.
  void rest(const std::string& metavar, std::vector<std::string>* target, const std::string& help) {
    rest_ = {metavar, metavar, help, "", [target](const std::string& word) {
               target->push_back(word);
               return std::string();
             }, ""};
  }

  // Reads argv into the targets; throws UsageError or HelpShown (after printing the help).
  void parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--help" || arg == "-h") {
        std::fputs(help().c_str(), stdout);
        throw HelpShown{};
      }
      if (arg.rfind("--", 0) != 0 || arg == "--") {
        if (!rest_.set) fail("unexpected argument \"" + arg + "\" (flags start with --; see --help)");
        rest_.set(arg);
        continue;
      }
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(0, eq);
      const Flag* flag = find(name);
      if (flag == nullptr) fail("unknown flag \"" + name + "\" (see --help)");
      std::string value;
      if (eq != std::string::npos) {
        value = arg.substr(eq + 1);
      } else if (!flag->metavar.empty()) {
        if (i + 1 >= argc) fail(name + " needs a value (" + name + " " + flag->metavar + ")");
        value = argv[++i];
      }
      if (eq != std::string::npos && value.empty() && flag->metavar != "TEXT" &&
          flag->metavar != "PATH")
        fail(name + " needs a value after '='");
      const std::string error = flag->set(value);
      if (!error.empty()) fail(error);
      given_.push_back(name);
    }
    for (const auto& check : after_parse_) check();
  }

  // Whether the command line named this flag (for a value that must then agree with a file).
  bool given(const std::string& name) const {
    for (const std::string& g : given_)
      if (g == name) return true;
    return false;
  }

  [[noreturn]] void fail(const std::string& why) const { throw UsageError(why); }

  std::string help() const {
    std::ostringstream out;
    out << "usage: " << program_ << (flags_.empty() ? "" : " [--flag value ...]")
        << (rest_.set ? " [" + rest_.metavar + " ...]" : "") << "\n";
    if (!summary_.empty()) out << summary_ << "\n";
    if (rest_.set) line(out, "  " + rest_.metavar + " ...", rest_.help, "");
    for (const Flag& f : flags_)
      line(out, "  " + f.name + (f.metavar.empty() ? "" : " " + f.metavar), f.help,
           f.limits + (f.limits.empty() || f.now.empty() ? "" : ", ") +
               (f.now.empty() ? "" : "default " + f.now));
    line(out, "  --help", "print this and exit", "");
    return out.str();
  }

 private:
  struct Flag {
    std::string name, metavar, help, now;
    std::function<std::string(const std::string&)> set;  // "" when the value is good
    std::string limits = "";                              // "in [1, 4096]", "positive"
  };

  void add(const std::string& name, const std::string& metavar, const std::string& help,
           const std::string& now, std::function<std::string(const std::string&)> set,
           const std::string& limits = "") {
    flags_.push_back({name, metavar, help, now, std::move(set), limits});
  }
  const Flag* find(const std::string& name) const {
    for (const Flag& f : flags_)
      if (f.name == name) return &f;
    return nullptr;
  }
  // One flag in --help: its name in a column of 26, then its words wrapped at 100 columns.
  static void line(std::ostringstream& out, std::string left, const std::string& help,
                   const std::string& note) {
    if (left.size() < 26) left.resize(26, ' ');
    std::istringstream words(help + (note.empty() ? "" : " (" + note + ")"));
    std::string word, current = left;
    size_t column = left.size();
    for (bool first = true; words >> word; first = false) {
      if (!first && column + 1 + word.size() > 100) {
        out << current << "\n";
        current = std::string(27, ' ') + word, column = current.size();
        continue;
      }
      current += " " + word, column += 1 + word.size();
    }
    out << current << "\n";
  }
  // A number as a person writes it in decimal: [+-]digits, and for a real also .digits and an
  // exponent. (strtod alone would also take " 5", "0x10", "inf" and "nan".)
  static bool decimal(const std::string& s, bool real) {
    size_t i = 0, digits = 0;
    const auto run = [&] {
      const size_t from = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i - from;
    };
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    digits += run();
    if (real && i < s.size() && s[i] == '.') {
      ++i;
      digits += run();
    }
    if (digits == 0) return false;
    if (real && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
      if (run() == 0) return false;
    }
    return i == s.size();
  }
  static std::string quoted(const std::string& s) { return s.empty() ? "" : "\"" + s + "\""; }
  static std::string number_text(double x) {
    std::ostringstream os;
    os << x;
    return os.str();
  }
  static std::string range(int64_t min, int64_t max) {
    if (max == INT64_MAX) return min == 1 ? "positive" : ">= " + std::to_string(min);
    if (min == 0 && max == 1) return "0 or 1";
    return "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  }

  std::string program_, summary_;
  std::vector<Flag> flags_;
  Flag rest_;  // its `set` is empty unless rest() was called
  std::vector<std::function<void()>> after_parse_;  // checks that need every flag read
  std::vector<std::string> given_;
};

}  // namespace lesson
