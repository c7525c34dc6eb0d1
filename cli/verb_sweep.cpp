// `gaugelab sweep NAME [flags]` -> toys::run_sweep; `gaugelab merge --out F SHARD...` -> toys::merge_sweeps.
#include <iostream>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "toys/merge_shards.hpp"
#include "toys/sweep_plan.hpp"
#include "toys/sweep_runner.hpp"
#include "toys/toy.hpp"
#include "toys/toy_runner.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_sweep(const Args& args) {
  if (args.empty()) throw io::UsageError("missing toy NAME (`gaugelab sweep --help` lists them)");
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: gaugelab sweep NAME [toy options] [--shard i/n] [--out F] [--force] [--threads N] [--seed S]\n"
                 "       (NAME --help for its options)\n\n"
                 "Any numeric option of the toy may be a comma list (--lr 5e-3,1e-2 --lambda 0,0.2); the sweep runs\n"
                 "the cartesian product x --seeds seeds in parallel, one row each in /tables/runs. An existing --out\n"
                 "of the same sweep is resumed (finished rows are skipped). --shard i/n runs every n-th row;\n"
                 "`gaugelab merge --out F SHARDS...` joins the shard files.\n\ntoys:\n";
    for (const auto& n : toys::toy_names()) std::cout << "  " << n << "\n";
    return 0;
  }
  toys::SweepSettings settings;
  settings.run.out = "runs/sweep_" + args[0] + ".h5";
  const auto plan = toys::plan_sweep(args[0], Args(args.begin() + 1, args.end()), settings);
  if (!plan) return 0;  // --help
  const int threads = io::apply_threads(settings.run.threads);

  const io::Provenance prov = verb_provenance("sweep/" + args[0], "sweep", args, plan->config(), settings.run.seed, threads);
  const auto result = toys::run_sweep(*plan, settings, prov);
  std::cout << "sweep " << args[0] << " -> " << settings.run.out << "\n" << toys::format_summary(result.summary);
  return 0;
}

int verb_merge(const Args& args) {
  std::string out;              // merged log to write
  bool force = false;           // replace an existing --out
  std::vector<std::string> shards;  // the shard logs, any order
  io::Options opts("merge", "Join the shard logs of one sweep (`gaugelab sweep NAME --shard i/n`) into one log equal "
                            "to the unsharded sweep's: rows sorted, per-point table and summary recomputed.");
  opts.add("out", &out, "merged HDF5 log to write")
      .add("force", &force, "replace an existing --out instead of refusing")
      .add("shards", &shards, "shard logs to join (also positional)")
      .positional("shards");
  if (!opts.parse(args)) return 0;
  if (out.empty()) throw io::UsageError("--out is required");
  if (shards.empty()) throw io::UsageError("no shard files given");
  const io::Provenance prov = verb_provenance("", "merge", args, {}, 0);
  const auto summary = toys::merge_sweeps(shards, out, force, prov);
  std::cout << "merge of " << shards.size() << " shard(s) -> " << out << "\n" << toys::format_summary(summary);
  return 0;
}

}  // namespace gaugelab::cli
