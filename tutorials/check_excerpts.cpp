// check_excerpts: holds tutorials/README.md to what the lessons print. For every
// "## NN — ..." section it runs the section's first command (the ```sh block) and checks that
// every line of the section's output excerpts (the plain ``` blocks) appears in the output:
//   - "..." lines stand for what the excerpt leaves out;
//   - a line ending in "..." must begin an output line;
//   - a line that reports a time, a speed or a share (ms, s, tokens/s, GFLOP/s, %, x on this
//     machine) is compared with its numbers (and the CPU's GEMM kernel name) masked, since
//     those change from run to run and machine to machine.
//
//   check_excerpts <tutorials/README.md> <folder of the lesson programs> <scratch folder>
// (the folder an absolute path). The excerpts are the output of the release build with GCC on
// x86-64; CI runs this check there (.ci/run), and it passes on AVX-512 and AVX2 hosts alike. On
// another compiler or instruction set a training lesson's last digits may differ.
// It prints one line per lesson and, for a line not found, the line; exit status 0 when every
// excerpt matches.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tutorials/common/program.h"

namespace {

struct Section {
  std::string lesson;   // "16"
  std::string command;  // "16_train_tiny_gpt --flags" (the program's file name and its flags)
  std::vector<std::string> excerpt;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Lines that report a time or a speed, whose numbers differ between runs.
bool varies(const std::string& line) {
  static const std::regex units(
      R"((\d ms\b|\d s\b|\d s\)|tokens/s|tok/s|GFLOP/s|\d%|x\d+ on |\dx$|step_ms|\(x\d))");
  return std::regex_search(line, units);
}

// Its numbers as "#", the name of the GEMM kernel the build runs ("AVX-512 6x32", "AVX2 6x16",
// ...: lesson 24) as "KERNEL", since that depends on the CPU, and each run of spaces (the
// columns' padding, which follows the lengths) as one.
std::string masked(const std::string& line) {
  static const std::regex kernel(R"((AVX-512|AVX2|NEON|SSE|portable) [0-9]+x[0-9]+)");
  static const std::regex numbers(R"([0-9][0-9.,]*)");
  static const std::regex spaces(R"( +)");
  const std::string named = std::regex_replace(line, kernel, "KERNEL");
  return std::regex_replace(std::regex_replace(named, numbers, "#"), spaces, " ");
}

std::vector<Section> read_sections(const std::string& path) {
  std::ifstream in(path);
  std::vector<Section> sections;
  std::string line, block;  // block: "" outside a code block, else its language ("plain" if none)
  static const std::regex heading(R"(^## (\d\d) — )");
  std::smatch m;
  while (std::getline(in, line)) {
    if (block.empty() && std::regex_search(line, m, heading)) {
      sections.push_back({m[1], "", {}});
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      block = block.empty() ? (line.size() > 3 ? line.substr(3) : "plain") : "";
      continue;
    }
    if (sections.empty() || block.empty()) continue;
    Section& s = sections.back();
    if (block == "sh" && s.command.empty()) {
      const std::string cmd = trim(line.substr(0, line.find('#')));
      const size_t slash = cmd.rfind('/', cmd.find(' '));
      s.command = slash == std::string::npos ? cmd : cmd.substr(slash + 1);
    } else if (block == "plain" && !s.command.empty()) {
      s.excerpt.push_back(line);
    }
  }
  return sections;
}

std::vector<std::string> run(const std::string& command) {
  std::vector<std::string> lines;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return lines;
  std::string current;
  for (int c; (c = std::fgetc(p)) != EOF;) {
    if (c == '\n') {
      lines.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(c));
    }
  }
  if (!current.empty()) lines.push_back(current);
  pclose(p);
  return lines;
}

bool found(const std::string& want, const std::vector<std::string>& output) {
  std::string w = trim(want);
  const bool prefix = w.size() > 3 && w.compare(w.size() - 3, 3, "...") == 0;
  if (prefix) w = trim(w.substr(0, w.size() - 3));
  const bool mask = varies(w);
  if (mask) w = masked(w);
  for (const std::string& line : output) {
    std::string o = trim(line);
    if (mask) o = masked(o);
    if (prefix ? o.rfind(w, 0) == 0 : o == w) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args;
  lesson::Flags flags("check_excerpts",
                      "Checks that every excerpt line of tutorials/README.md is in its lesson's "
                      "output.");
  flags.rest("README LESSONS SCRATCH", &args,
             "tutorials/README.md, the folder of the built lessons, a scratch folder to run in");
  return lesson::run(flags, argc, argv, [&] {
    if (args.size() != 3)
      flags.fail("expected 3 arguments: README LESSONS SCRATCH, got " +
                 std::to_string(args.size()));
    const std::string programs = args[1], scratch = args[2];
    int bad = 0, checked = 0;
    for (const Section& s : read_sections(args[0])) {
      if (s.command.empty() || s.excerpt.empty()) continue;
      const std::vector<std::string> output = run(
          "cd \"" + scratch + "\" && \"" + programs + "/" +
          s.command.substr(0, s.command.find(' ')) + "\"" +
          (s.command.find(' ') == std::string::npos ? "" : s.command.substr(s.command.find(' '))) +
          " 2>/dev/null");
      std::vector<std::string> missing;
      for (const std::string& line : s.excerpt)
        if (!trim(line).empty() && trim(line) != "..." && !found(line, output))
          missing.push_back(line);
      ++checked;
      std::cout << "lesson " << s.lesson << " (" << s.command
                << "): " << (missing.empty() ? "every excerpt line printed" : "NOT PRINTED:")
                << "\n";
      for (const std::string& line : missing) std::cout << "    " << line << "\n";
      bad += !missing.empty();
    }
    std::cout << checked << " lessons checked, " << bad
              << " with excerpt lines they do not print\n";
    return bad == 0 && checked > 0 ? 0 : 1;
  });
}
