// `gaugelab train` -> gpt2/train/api.hpp (no LibTorch header here).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/train/api.hpp"
#include "gpt2/train/conditions.hpp"
#endif

namespace gaugelab::cli {

#ifdef GAUGELAB_WITH_TORCH

namespace {

// `train --resume --out DIR`: every setting not given on this command line is taken from the run's
// newest checkpoint, so the directory alone resumes (nanoGPT's init_from=resume). Settings given
// explicitly stay as given; run_train then refuses a changed identity setting (data order, model,
// optimizer) naming the key and reports any other change.
void resume_defaults(io::Options& opts, const std::string& out) {
  if (out.empty()) return;  // validate_train_options names the missing --out
  const nlohmann::json saved = gpt2::saved_run_options(out);
  if (saved.is_null()) return;  // no checkpoint yet: the run starts at step 0 with the flags given
  const std::vector<std::string>& given = opts.given();
  int taken = 0;
  for (const auto& [key, value] : saved.items()) {
    if (!opts.has(key) || opts.is_transient(key) ||
        std::find(given.begin(), given.end(), key) != given.end())
      continue;
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_array()) {
      for (const auto& item : value) {
        if (!text.empty()) text += ',';
        text += item.is_string() ? item.get<std::string>() : item.dump();
      }
      if (value.empty()) continue;  // an empty list is the default of every list option
    } else if (value.is_null()) {
      continue;
    } else {
      text = value.dump();
    }
    opts.set(key, text);
    ++taken;
  }
  opts.apply_implied();
  opts.validate();
  std::cerr << "train: --resume: " << taken << " settings taken from the run's newest checkpoint in " << out << "\n";
}

}  // namespace

int verb_train(const Args& args) {
  // The conditions table as JSON (gpt2/train/conditions.hpp conditions_json): analysis/conditions.json is this.
  if (args.size() == 1 && args[0] == "--describe-conditions") {
    std::cout << gpt2::conditions_json() << "\n";
    return 0;
  }
  gpt2::TrainOptions o;
  o.run.seed = 42;  // the paper's first seed
  io::Options opts("train",
                   "Trains GPT-2 with learnable multipliers under a condition of gpt2/train/conditions.hpp (" +
                       gpt2::key_list(gpt2::condition_keys()) +
                       "; --condition lists what each does); logs loss, grad norm, per-head Q/K scales and drift to "
                       "OUT/log.h5, checkpoints to OUT/checkpoints; --resume continues. gpt2/README.md, \"Training\".");
  gpt2::declare_train_options(opts, o);
  // Before the checks, so that they (the mode rules among them) see the settings the run will have.
  opts.after_read([&] {
    if (o.resume) resume_defaults(opts, o.run.out);
  });
  if (!opts.parse(args)) return 0;
  gpt2::validate_train_options(o);
  const gpt2::TrainResult r = gpt2::run_train(o, verb_provenance("gpt2/train", "train", args, opts.to_json(), o.run.seed));
  return r.diverged ? 3 : 0;
}

#else  // built without the GPT-2 tier

int verb_train(const Args&) { return not_built("train", "GPT-2 trainer; configure with GAUGELAB_WITH_TORCH=ON"); }

#endif

}  // namespace gaugelab::cli
