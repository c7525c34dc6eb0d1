// `gaugelab merge-models A B --out DIR` and `gaugelab hessian CKPT` -> gpt2/landscape/api.hpp (no LibTorch header here).
#include <iostream>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/landscape/api.hpp"
#endif

namespace gaugelab::cli {

#ifdef GAUGELAB_WITH_TORCH

int verb_merge_models(const Args& args) {
  gpt2::MergeOptions o;
  io::Options opts = gpt2::merge_models_options(o);
  if (!opts.parse(args)) return 0;
  print_verb_settings("merge-models", opts);
  gpt2::run_merge_models(o, verb_provenance("gpt2/merge-models", "merge-models", args, opts.to_json(), o.run.seed));
  return 0;
}

int verb_hessian(const Args& args) {
  gpt2::HessianOptions o;
  io::Options opts = gpt2::hessian_options(o);
  if (!opts.parse(args)) return 0;
  print_verb_settings("hessian", opts);
  gpt2::run_hessian(o, verb_provenance("gpt2/hessian", "hessian", args, opts.to_json(), o.run.seed));
  return 0;
}

#else  // built without the GPT-2 tier

int verb_hessian(const Args&) { return not_built("hessian", "Hessian analysis; configure with GAUGELAB_WITH_TORCH=ON"); }

int verb_merge_models(const Args&) {
  return not_built("merge-models", "model alignment; configure with GAUGELAB_WITH_TORCH=ON");
}

#endif

}  // namespace gaugelab::cli
