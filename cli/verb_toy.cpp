// `gaugelab toy NAME [flags]` -> toys::run_toy.
#include <iostream>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "toys/toy.hpp"
#include "toys/toy_runner.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_toy(const Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: gaugelab toy NAME [options]   (NAME --help for its options)\n\ntoys:\n";
    for (const auto& n : toys::toy_names()) std::cout << "  " << n << "\n";
    if (args.empty()) throw io::UsageError("missing toy NAME");
    return 0;
  }
  auto toy = toys::make_toy(args[0]);
  io::Options opts("toy " + args[0], toy->summary());
  io::RunFlags flags;
  flags.out = "runs/toy_" + args[0] + ".h5";
  io::add_run_flags(opts, flags, "HDF5 log to write");
  toy->declare(opts);
  if (!opts.parse(Args(args.begin() + 1, args.end()))) return 0;
  const int threads = io::apply_threads(flags.threads);

  const io::Provenance prov = verb_provenance("toy/" + args[0], "toy", args, opts.to_json(), flags.seed, threads);
  print_verb_settings("toy " + args[0], opts,
                      std::to_string(toy->seeds()) + " seed(s) on " + std::to_string(threads) + " thread(s)");
  const auto summary = toys::run_toy(*toy, flags, prov);
  std::cout << "toy " << args[0] << " -> " << flags.out << "\n" << toys::format_summary(summary);
  return 0;
}

}  // namespace gaugelab::cli
