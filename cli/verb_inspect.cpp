// `gaugelab inspect CKPT` -> gpt2/inspect/api.hpp (no LibTorch header here).
#include <iostream>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/inspect/api.hpp"
#endif

namespace gaugelab::cli {

#ifdef GAUGELAB_WITH_TORCH

int verb_inspect(const Args& args) {
  gpt2::InspectOptions o;
  io::Options opts = gpt2::inspect_options(o);
  if (!opts.parse(args)) return 0;
  print_verb_settings("inspect", opts);
  gpt2::run_inspect(o, verb_provenance("gpt2/inspect", "inspect", args, opts.to_json(), o.run.seed));
  return 0;
}

#else  // built without the GPT-2 tier

int verb_inspect(const Args&) { return not_built("inspect", "checkpoint analysis; configure with GAUGELAB_WITH_TORCH=ON"); }

#endif

}  // namespace gaugelab::cli
