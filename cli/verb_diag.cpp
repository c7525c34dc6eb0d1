// `gaugelab diag heads [flags]` -> harness::run_diag_heads (the one-step gauge-sensitivity harness).
#include <iostream>

#include "checkpoint_heads.hpp"
#include "harness/diag_options.hpp"
#include "harness/diag_run.hpp"
#include "harness/diag_trajectory.hpp"
#include "harness/head_source.hpp"
#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_diag(const Args& args) {
  if (args.empty()) throw io::UsageError("missing subcommand (expected: heads; see gaugelab diag --help)");
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: gaugelab diag heads|trajectory [options]   (heads --help for its options)\n\n"
              << "subcommands:\n  heads       one-step spread of the represented motion over gauge images of one "
                 "attention head, per rule x wrapper x kappa x family\n"
              << "  trajectory  multi-step: how the represented trajectories from gauge images separate over "
                 "--steps steps, per rule x correction schedule (none, full, full every k)\n";
    return 0;
  }
  if (args[0] != "heads" && args[0] != "trajectory")
    throw io::UsageError("unknown subcommand '" + args[0] + "' (expected: heads, trajectory)");
  const bool trajectory = args[0] == "trajectory";

  harness::DiagOptions o;
  io::Options opts(trajectory ? "diag trajectory" : "diag heads",
                   trajectory ? "run --steps steps from gauge-equivalent representatives of one attention head with every "
                                "rule under each correction schedule (none, full, full every k of --periods); log how "
                                "far the represented trajectories separate, step by step"
                              : "take one step from gauge-equivalent representatives of one attention head with every "
                                "rule and quotient wrapper; log the spread of the represented motion and of the "
                                "post-step loss");
  io::RunFlags flags;
  flags.out = trajectory ? "runs/diag_trajectory.h5" : "runs/diag_heads.h5";
  io::add_run_flags(opts, flags, "HDF5 log to write");
  harness::declare_diag_options(opts, o);
  if (!opts.parse(Args(args.begin() + 1, args.end()))) return 0;
  harness::apply_quick(o, opts.given());
  harness::validate_diag_options(o);
  const auto loader = checkpoint_head_loader();
  if (!o.checkpoint.empty() && !loader) exec_torch_build();  // reading a checkpoint needs the GPT-2 half
  harness::require_loader(o.checkpoint, loader);  // one line, before anything is printed or written
  const int threads = io::apply_threads(flags.threads);

  const io::Provenance prov =
      verb_provenance(trajectory ? "diag/trajectory" : "diag/heads", "diag", args, opts.to_json(), flags.seed, threads);
  print_verb_settings(opts.verb(), opts, std::to_string(threads) + " thread(s)");
  if (trajectory) {
    const auto run = harness::run_diag_trajectory(o, flags, prov, loader, checkpoint_inputs_loader());
    std::cout << "diag trajectory -> " << flags.out << "\n" << harness::format_trajectory_summary(run, o);
    return 0;
  }
  const auto run = harness::run_diag_heads(o, flags, prov, loader, checkpoint_inputs_loader());
  std::cout << "diag heads -> " << flags.out << "\n" << harness::format_diag_summary(run, o);
  return 0;
}

}  // namespace gaugelab::cli
