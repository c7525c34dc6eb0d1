// build/gaugelab: dispatches `gaugelab <verb> ...` through the table in verbs.cpp.
// Exit status: 0 ok, 1 runtime failure, 2 usage error. Errors are one line on stderr.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "io/build_info.hpp"
#include "io/options.hpp"
#include "verbs.hpp"

namespace {

void print_usage(std::ostream& os) {
  os << "gaugelab " << gaugelab::io::kVersion << " — gauge symmetries in neural-network training\n\n"
     << "usage: gaugelab <verb> [args] [--help]\n\nverbs:\n";
  for (const auto& v : gaugelab::cli::verbs()) {
    std::string n = v.name;
    os << "  " << n << std::string(n.size() < 10 ? 10 - n.size() : 1, ' ') << v.summary << "\n";
  }
  os << "\nEvery verb takes --help and --config FILE (INI, same keys as its flags).\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(std::cerr);
    return 2;
  }
  const std::string verb = argv[1];
  if (verb == "--help" || verb == "-h" || verb == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (verb == "--version") {
    std::cout << "gaugelab " << gaugelab::io::kVersion << " (" << gaugelab::io::kGitSha << ")\n";
    return 0;
  }
  gaugelab::cli::Args args(argv + 2, argv + argc);
  for (const auto& v : gaugelab::cli::verbs()) {
    if (verb != v.name) continue;
    try {
      return v.run(args);
    } catch (const gaugelab::io::UsageError& e) {
      std::cerr << "gaugelab " << verb << ": error: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "gaugelab " << verb << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "gaugelab: error: unknown verb '" << verb << "' (see gaugelab --help)\n";
  return 2;
}
