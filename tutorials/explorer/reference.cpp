// reference.cpp: prints the numbers the browser explorer's self-check holds its own to
// (explorer.h, reference_json): built natively, its output is written into the page at build
// time; built as WebAssembly and run under Node.js, its output is held to the native one
// (ctest explorer_wasm_matches_native, tutorials/explorer/compare.js).
//
//   explorer_reference             the reference numbers, as JSON
//   explorer_reference --time N    N training steps of the page's tiny GPT, timed, as JSON
#include <iostream>
#include <string>

#include "tutorials/explorer/explorer.h"

int main(int argc, char** argv) {
  const std::string usage = "usage: explorer_reference [--time STEPS]";
  if (argc == 1) {
    // Every case must compute: an error in the reference would be compared with the same error.
    const std::string json = explorer::reference_json();
    if (json.find("\"error\"") != std::string::npos) {
      std::cerr << "explorer_reference: error: a reference case failed: " << json << "\n";
      return 1;
    }
    std::cout << json << "\n";
    return 0;
  }
  const std::string steps = argc == 3 ? argv[2] : "";
  if (argc != 3 || std::string(argv[1]) != "--time" || steps.empty() || steps.size() > 6 ||
      steps.find_first_not_of("0123456789") != std::string::npos) {
    std::cerr << "explorer_reference: error: " << usage << "\n";
    return 2;
  }
  const std::string json = explorer::Trainer::time_steps(std::stoll(steps));
  std::cout << json << "\n";
  return json.find("\"error\"") == std::string::npos ? 0 : 1;
}
