// build/gaugelab: dispatches `gaugelab <verb> ...` through the table in verbs.cpp.
// Exit status: 0 ok, 1 runtime failure, 2 usage error. Errors are one line on stderr.
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
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

// The first line of an exception's text: LibTorch's errors append their C++ stack frames on the lines
// after it ("Exception raised from ... frame #0 ..."), which are for developers, not users.
std::string first_line(const char* what) {
  std::string s = what ? what : "";
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s.empty() ? "unknown error" : s;
}

}  // namespace

int main(int argc, char** argv) {
  gaugelab::cli::remember_command_line(argc, argv);
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
      std::cerr << "gaugelab " << verb << ": error: " << first_line(e.what()) << "\n";
      return 2;
    } catch (const std::bad_alloc&) {
      std::cerr << "gaugelab " << verb << ": error: out of memory: the sizes asked for need more memory than "
                << "this machine can give (std::bad_alloc); reduce them\n";
      return 1;
    } catch (const std::exception& e) {
      std::cerr << "gaugelab " << verb << ": error: " << first_line(e.what()) << "\n";
      return 1;
    } catch (...) {
      std::cerr << "gaugelab " << verb << ": error: unknown exception (a bug: please report it)\n";
      return 1;
    }
  }
  std::cerr << "gaugelab: error: unknown verb '" << verb << "' (see gaugelab --help)\n";
  return 2;
}
