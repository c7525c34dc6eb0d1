// build/gaugelab: dispatches `gaugelab <verb> ...` through the table in verbs.cpp.
// Exit status: 0 ok, 1 runtime failure, 2 usage error. Errors are one line on stderr.
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "io/build_info.hpp"
#include "io/dry_run_guard.hpp"
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

// One command line: the verb's function, its exceptions turned into one line on stderr and an exit status.
int dispatch(const std::string& verb, const gaugelab::cli::Args& args) {
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

// `gaugelab --probe-batch FILE`, for tests (not listed by --help): FILE holds one JSON array of words per line,
// a command line as typed after `gaugelab`, each a dry run (--print-config, --describe-options or --help, so
// nothing is read, written or trained). Each goes through dispatch() as main() sends one, its standard output
// and error captured together, and is answered by one line {"status": N, "output": "..."} on stdout. Two
// guards keep work out: a line without one of those words is refused here (the script verbs, plot,
// compare and tensorboard, parse no Options), and Options::parse() refuses a line whose parsed flags hold none of them
// (io/dry_run_guard.hpp: `--out --print-config` names a file, it does not ask for a dry run). The
// flag-bounds test probes ~900 command lines in one process this way instead of ~900 processes that each load
// LibTorch (~0.25 CPU-s apiece, 0.4 while the tier linked libtorch_cuda); it also checks a sample against real
// processes.
int probe_batch(const std::string& file) {
  gaugelab::cli::exec_torch_build();  // gaugelab-torch answers every verb; returns when this is it or it is absent
  gaugelab::io::set_dry_runs_only(true);
  std::ifstream in(file);
  if (!in) {
    std::cerr << "gaugelab --probe-batch: error: cannot read " << file << "\n";
    return 1;
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    const nlohmann::json words = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    bool ok = words.is_array() && !words.empty(), dry = false;
    gaugelab::cli::Args args;
    for (std::size_t i = 0; ok && i < words.size(); ++i) {
      ok = words[i].is_string();
      if (!ok) break;
      const std::string w = words[i].get<std::string>();
      dry = dry || w == "--print-config" || w == "--describe-options" || w == "--help";
      if (i > 0) args.push_back(w);
    }
    if (!ok || !dry) {
      std::cerr << "gaugelab --probe-batch: error: " << file << " line " << n
                << (ok ? ": not a dry run (no --print-config, --describe-options or --help)" : ": not a JSON array of words")
                << "\n";
      return 2;
    }
    std::ostringstream captured;
    std::streambuf* out = std::cout.rdbuf(captured.rdbuf());
    std::streambuf* err = std::cerr.rdbuf(captured.rdbuf());
    const int status = dispatch(words[0].get<std::string>(), args);
    std::cout.rdbuf(out);
    std::cerr.rdbuf(err);
    const nlohmann::json answer = {{"status", status}, {"output", captured.str()}};
    std::cout << answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return 0;
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
    std::cout << "gaugelab " << gaugelab::io::kVersion << " (" << gaugelab::io::git_sha() << ")\n";
    return 0;
  }
  if (verb == "--probe-batch") {
    if (argc == 3) return probe_batch(argv[2]);
    std::cerr << "usage: gaugelab --probe-batch FILE\n";
    return 2;
  }
  return dispatch(verb, gaugelab::cli::Args(argv + 2, argv + argc));
}
