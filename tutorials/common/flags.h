// flags.h: the command-line flags of a lesson, "--name value" (or "--name" alone for a switch).
//
//   lesson::Flags flags("15_train_tiny_gpt", "train a tiny GPT");
//   flags.text("--data", &o.data, "UTF-8 text to train on");
//   flags.number("--steps", &o.steps, "training steps", /*min=*/0);
//   flags.real("--lr", &o.lr, "AdamW's learning rate");        (positive)
//   flags.on_off("--no_causal", &o.no_causal, "train without the causal mask");
//   flags.parse(argc, argv);
//
// --help prints every flag with its default and what it does, and exits with status 0. A bad
// flag (unknown, without its value, not a number, out of range) prints one line,
// "<program>: error: <what is wrong>", and exits with status 2; so does flags.fail(...), for
// the checks a lesson makes across flags after parsing.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace lesson {

class Flags {
 public:
  // usage: the first line of --help; empty: "<program> [--flag value ...]".
  Flags(std::string program, std::string summary, std::string usage = "")
      : program_(std::move(program)), summary_(std::move(summary)), usage_(std::move(usage)) {}

  void text(const std::string& name, std::string* target, const std::string& help) {
    add(name, "TEXT", help, quoted(*target), [target](const std::string& value) {
      *target = value;
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
      if (value.empty() || end == value.c_str() || *end != '\0' || errno == ERANGE)
        return name + " expects an integer, got \"" + value + "\"";
      if (n < min || n > max)
        return name + " must be " + range(min, max) + ", got " + std::to_string(n);
      *target = n;
      return std::string();
    });
  }

  // A positive, finite number.
  void real(const std::string& name, double* target, const std::string& help) {
    std::ostringstream now;
    now << *target;
    add(name, "X", help, now.str(), [=](const std::string& value) {
      char* end = nullptr;
      const double x = std::strtod(value.c_str(), &end);
      if (value.empty() || end == value.c_str() || *end != '\0' || !std::isfinite(x))
        return name + " expects a number, got \"" + value + "\"";
      if (!(x > 0)) return name + " must be positive, got " + value;
      *target = x;
      return std::string();
    });
  }

  // A switch: present means true.
  void on_off(const std::string& name, bool* target, const std::string& help) {
    flags_.push_back({name, "", help, "", [target](const std::string&) {
                        *target = true;
                        return std::string();
                      }});
  }

  void parse(int argc, char** argv) const {
    for (int i = 1; i < argc; ++i) {
      const std::string name = argv[i];
      if (name == "--help" || name == "-h") {
        std::cout << help();
        std::exit(0);
      }
      const Flag* flag = find(name);
      if (flag == nullptr) fail("unknown flag \"" + name + "\" (see --help)");
      std::string value;
      if (!flag->metavar.empty()) {
        if (i + 1 >= argc) fail(name + " needs a value");
        value = argv[++i];
      }
      const std::string error = flag->set(value);
      if (!error.empty()) fail(error);
    }
  }

  [[noreturn]] void fail(const std::string& why) const { fail(program_, why); }
  // The same line for a program's other errors, without a Flags at hand.
  [[noreturn]] static void fail(const std::string& program, const std::string& why) {
    std::cerr << program << ": error: " << why << "\n";
    std::exit(2);
  }

  std::string help() const {
    std::ostringstream out;
    out << "usage: " << (usage_.empty() ? program_ + " [--flag value ...]" : usage_) << "\n";
    if (!summary_.empty()) out << summary_ << "\n";
    for (const Flag& f : flags_) {
      std::string left = "  " + f.name + (f.metavar.empty() ? "" : " " + f.metavar);
      if (left.size() < 24) left.resize(24, ' ');
      out << left << " " << f.help << (f.now.empty() ? "" : " (default " + f.now + ")") << "\n";
    }
    return out.str();
  }

 private:
  struct Flag {
    std::string name, metavar, help, now;
    std::function<std::string(const std::string&)> set;  // "" when the value is good
  };

  void add(const std::string& name, const std::string& metavar, const std::string& help,
           const std::string& now, std::function<std::string(const std::string&)> set) {
    flags_.push_back({name, metavar, help, now, std::move(set)});
  }
  const Flag* find(const std::string& name) const {
    for (const Flag& f : flags_)
      if (f.name == name) return &f;
    return nullptr;
  }
  static std::string quoted(const std::string& s) { return s.empty() ? "" : "\"" + s + "\""; }
  static std::string range(int64_t min, int64_t max) {
    if (max == INT64_MAX) return min == 1 ? "positive" : ">= " + std::to_string(min);
    if (min == 0 && max == 1) return "0 or 1";
    return "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  }

  std::string program_, summary_, usage_;
  std::vector<Flag> flags_;
};

}  // namespace lesson
